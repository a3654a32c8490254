-- When the server cannot start, asking says why, in the chat and as an error, and nothing is
-- left "running": the next :TetherAsk tries again. $TETHER_NVIM_CASE:
--   missing  the configured command does not exist
--   none     nothing configured, no `tether` on PATH nor in the workspace's .venv
--   exits    the configured command exits at once
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
local case = vim.env.TETHER_NVIM_CASE
local cmd = ({ missing = { "/nonexistent/tether", "serve" }, exits = { "false" } })[case]
require("tether").setup({ cmd = cmd })

local why = ({
  missing = "could not start `/nonexistent/tether serve`",
  none = "no server found (looked for `tether` on PATH, .venv/bin/tether in ",
  exits = "the server exited as it started",
})[case]

T.run(function()
  local session, tether = require("tether.session"), require("tether")
  local errors = {}
  vim.notify = function(message, level)
    if level == vim.log.levels.ERROR then
      table.insert(errors, message)
    end
  end
  for attempt = 1, 2 do
    vim.cmd("TetherAsk hello " .. attempt)
    T.wait_for("the failure to show", function()
      local shown = #vim.tbl_filter(function(line)
        return line:find(why, 1, true) ~= nil
      end, require("tether.chat").lines())
      return shown == attempt and not session.running
    end)
    T.expect(tether.statusline() == "", "not running: " .. tether.statusline())
  end
  local said = vim.iter(errors):any(function(message)
    return message:find(why, 1, true) ~= nil
  end)
  T.expect(said, "an error says why: " .. vim.inspect(errors))
end)
