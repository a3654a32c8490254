-- :TetherCancel while an allowed command runs ends the turn at once, and the session goes on.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  T.answers = { "Allow" }
  vim.cmd("TetherAsk wait for it")
  T.wait_chat("sleep 30 (allowed, running)")
  vim.wait(300) -- let the command really start

  local started = vim.uv.hrtime()
  vim.cmd("TetherCancel")
  T.wait_chat("*cancelled*")
  local seconds = (vim.uv.hrtime() - started) / 1e9
  T.expect(seconds < 5, ("cancelled in %.1f s"):format(seconds))
  T.expect(T.chat_has("sleep 30 (interrupted"), "the running call shows it was interrupted")
  T.wait_for("the turn to end", function()
    return not require("tether.session").running
  end)

  vim.cmd("TetherAsk go on")
  T.wait_chat("back again")
end)
