-- The "awaiting approval" note leaves the chat once the parked calls are decided: through
-- the Allow code action (which runs the turn on with `wait: false`), and through
-- :TetherDeny.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

local NOTE = "*awaiting approval: a allow"

T.run(function()
  local session = require("tether.session")
  vim.cmd.edit("notes.txt")
  vim.cmd("TetherAsk make a file") -- no answer scripted: the dialog is dismissed
  T.wait_chat(NOTE)
  T.wait_for("the parked call to be known", function()
    return next(session.pending) ~= nil and not session.running
  end)

  T.answers = { "Allow: " }
  vim.lsp.buf.code_action()
  T.wait_chat("allowed: echo made > made.txt")
  T.expect(not T.chat_has(NOTE), "the note left once the call was allowed")
  T.wait_chat("made it")
  T.wait_chat("*done*")
  T.expect(vim.fn.filereadable("made.txt") == 1, "the allowed command ran")

  vim.cmd("TetherAsk now clean up")
  T.wait_chat(NOTE)
  T.wait_for("the turn to park", function()
    return next(session.pending) ~= nil and not session.running
  end)
  vim.cmd("TetherDeny not now")
  T.wait_chat("understood")
  T.expect(not T.chat_has(NOTE), "the note left once the call was denied")
  T.expect(T.chat_has("*denied: not now*"), "the denial is noted")
end)
