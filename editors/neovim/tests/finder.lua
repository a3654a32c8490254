-- With no command configured the plugin finds the server: `tether` on PATH first, else the
-- workspace's .venv/bin/tether; a configured command wins over both. $TETHER_NVIM_CASE:
--   venv      no tether on PATH: the workspace's .venv/bin/tether
--   path      a tether on PATH, and a broken one in .venv: the one on PATH
--   explicit  a broken tether on PATH: setup({ cmd = ... }) is used
--   lsp       vim.lsp.config without a cmd (lsp/tether.lua): the .venv one, from the git root
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
local case = vim.env.TETHER_NVIM_CASE
local env = { TETHER_BASE_URL = vim.env.TETHER_NVIM_STUB_URL }
if case == "explicit" then
  T.setup()
elseif case == "lsp" then
  vim.lsp.config("tether", { cmd_env = env })
  vim.lsp.enable("tether")
else
  require("tether").setup({ env = env })
end

local expected = ({
  venv = vim.fn.getcwd() .. "/.venv/bin/tether",
  lsp = vim.fn.getcwd() .. "/.venv/bin/tether",
  path = "tether",
  explicit = vim.env.TETHER_NVIM_PYTHON,
})[case]

T.run(function()
  if case == "lsp" then
    vim.cmd.edit("notes.txt")
    T.wait_for("the client to attach", function()
      return #vim.lsp.get_clients({ name = "tether", bufnr = 0 }) == 1
    end)
  end
  vim.cmd("TetherAsk hello")
  T.wait_chat("hello from the server it found")
  T.wait_chat("*done*")
  local client = require("tether.client").get()
  local cmd = client.config.cmd
  if type(cmd) == "function" then -- lsp/tether.lua's: the process it started
    cmd = require("tether.server").find(nil, client.root_dir).cmd
  end
  T.expect(cmd[1] == expected, ("started %s, not %s"):format(vim.inspect(cmd), expected))
end)
