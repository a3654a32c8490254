-- :checkhealth tether finds the server command, its version, and whether the provider answers.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

local function checkhealth()
  vim.cmd("checkhealth tether")
  local report = T.buffer_text()
  vim.cmd("bwipeout")
  return report
end

T.run(function()
  local report = checkhealth()
  T.expect(report:find("tether 0.1.0", 1, true), "the version:\n" .. report)
  T.expect(report:find(vim.env.TETHER_NVIM_STUB_URL .. " is reachable", 1, true), report)
  T.expect(not report:find("ERROR", 1, true), report)

  T.setup({ env = { TETHER_BASE_URL = "http://127.0.0.1:9/v1" } })
  report = checkhealth()
  T.expect(report:find("http://127.0.0.1:9/v1 is not reachable", 1, true), report)
end)
