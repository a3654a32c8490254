-- :checkhealth tether lists each MCP server's live state and tool count, asked of the
-- running server: one that runs (OK), one that cannot start (ERROR, with its stderr).
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
local function server(env)
  return {
    command = vim.env.TETHER_NVIM_PYTHON,
    args = { "-m", "tests.support.mcp_server" },
    cwd = vim.env.TETHER_NVIM_ROOT,
    env = env,
  }
end
T.setup({
  settings = {
    mcp = {
      servers = {
        sure = server(nil), -- (an empty Lua table would be sent as a JSON list)
        db = server({ TETHER_MCP_FAIL_START = "no database at /nowhere" }),
      },
    },
  },
})

local function line_with(report, text)
  for _, line in ipairs(vim.split(report, "\n")) do
    if line:find(text, 1, true) then
      return line
    end
  end
end

T.run(function()
  vim.cmd("checkhealth tether")
  local report = T.buffer_text()
  vim.cmd("bwipeout")
  T.expect(report:find("the server is not running", 1, true), report)

  T.expect(require("tether.client").ensure(), "the client starts")
  local sure, db
  T.wait_for("both servers settled", function()
    vim.cmd("checkhealth tether")
    report = T.buffer_text()
    vim.cmd("bwipeout")
    sure, db = line_with(report, "sure: running"), line_with(report, "db: failed")
    return sure ~= nil and db ~= nil
  end, 30000)
  io.stderr:write(report, "\n") -- shown with pytest -s or on failure
  T.expect(sure:find("OK", 1, true) and sure:find("5 tools", 1, true), sure)
  T.expect(db:find("ERROR", 1, true) and db:find("no database at /nowhere", 1, true), db)
end, 60000)
