-- Without setup(): lsp/tether.lua with vim.lsp.config + vim.lsp.enable (Neovim 0.11+) starts
-- the client on the first file, and the plugin's commands drive that client.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
vim.lsp.config("tether", {
  cmd = { vim.env.TETHER_NVIM_PYTHON, "-m", "tether", "serve" },
  cmd_env = { TETHER_BASE_URL = vim.env.TETHER_NVIM_STUB_URL },
})
vim.lsp.enable("tether")

T.run(function()
  vim.cmd.edit("notes.txt")
  T.wait_for("the client to attach", function()
    return #vim.lsp.get_clients({ name = "tether", bufnr = 0 }) == 1
  end)
  local client = vim.lsp.get_clients({ name = "tether" })[1]
  T.expect(client.root_dir == vim.fn.getcwd(), "the workspace is the git root: " .. client.root_dir)

  vim.cmd("TetherAsk hello")
  T.wait_chat("hello from the enabled config")
  T.wait_chat("*done*")
  T.expect(#vim.lsp.get_clients({ name = "tether" }) == 1, "the commands used that client")
end)
