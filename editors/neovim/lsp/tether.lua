-- tether for vim.lsp.config / vim.lsp.enable (Neovim 0.11+):
--
--   vim.lsp.config("tether", { cmd_env = { TETHER_MODEL = "qwen2.5-coder" } })
--   vim.lsp.enable("tether")
--
-- The plugin's commands (:TetherAsk, ...) then drive this client. It attaches to every
-- file buffer so that the agent reads unsaved text and its patches land in buffers. The
-- server is `tether serve` from PATH, else from the workspace's .venv; a `cmd` given to
-- vim.lsp.config wins.
local client = require("tether.client")

---@type vim.lsp.Config
return {
  cmd = client.lsp_config_cmd,
  root_markers = { ".git" },
  capabilities = client.capabilities(),
  handlers = client.handlers,
  commands = client.commands,
  on_exit = client.on_exit,
}
