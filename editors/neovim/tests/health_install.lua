-- :checkhealth tether where the server is not configured: it reports where it looked and
-- advice that works, finds the workspace's .venv, and reads the vim.lsp.config route.
-- $TETHER_NVIM_CASE:
--   none  no tether anywhere: an error with pipx / uv advice, never `pip install tether`
--   venv  .venv/bin/tether in the workspace: found there, its version printed
--   lsp   vim.lsp.config("tether", ...) + enable: its cmd and cmd_env are the ones checked
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
local case = vim.env.TETHER_NVIM_CASE
if case == "lsp" then
  vim.lsp.config("tether", {
    cmd = { vim.env.TETHER_NVIM_PYTHON, "-m", "tether", "serve" },
    cmd_env = { TETHER_BASE_URL = "http://127.0.0.1:9/v1" },
  })
  vim.lsp.enable("tether")
end

T.run(function()
  vim.cmd("checkhealth tether")
  local report = T.buffer_text()
  local function has(text)
    T.expect(report:find(text, 1, true), ("no %q in:\n%s"):format(text, report))
  end
  if case == "none" then
    has("no server found")
    has(".venv/bin/tether in " .. vim.fn.getcwd())
    has("pipx install ")
    has("uv tool install ")
    has("tether-lsp")
    T.expect(not report:find("pip install tether", 1, true), "no `pip install tether`")
    local tree = require("tether.server").source_tree()
    T.expect(tree and report:find("pipx install " .. tree, 1, true), "names this checkout")
  elseif case == "venv" then
    has("the workspace's .venv: " .. vim.fn.getcwd() .. "/.venv/bin/tether")
    has("tether 0.1.0")
  else
    has('configured by vim.lsp.config("tether")')
    has(vim.env.TETHER_NVIM_PYTHON .. " -m tether serve (as configured")
    has("http://127.0.0.1:9/v1 is not reachable")
  end
end)
