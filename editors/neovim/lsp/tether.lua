-- tether for vim.lsp.config / vim.lsp.enable (Neovim 0.11+):
--
--   vim.lsp.config("tether", { cmd_env = { TETHER_MODEL = "qwen2.5-coder" } })
--   vim.lsp.enable("tether")
--
-- The plugin's commands (:TetherAsk, ...) then drive this client. It attaches to every
-- file buffer so that the agent reads unsaved text and its patches land in buffers.
local client = require("tether.client")

---@type vim.lsp.Config
return {
  cmd = { "tether", "serve" },
  root_markers = { ".git" },
  handlers = client.handlers,
  on_exit = client.on_exit,
}
