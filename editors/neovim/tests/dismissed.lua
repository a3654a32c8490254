-- A dismissed dialog parks the call; :TetherApprove runs it. Parked again, :TetherDeny says
-- why; parked once more, `a` in the chat allows it.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  local session = require("tether.session")
  vim.cmd("TetherAsk make a file") -- no answers scripted: the dialog is dismissed
  T.wait_chat("*awaiting approval")
  T.expect(#T.dialogs == 1 and T.dialogs[1]:find("echo approved > approved.txt", 1, true), "asked")
  T.expect(T.chat_has("(awaiting approval)"), "the call shows as waiting")
  T.wait_for("the parked call to be known", function()
    return next(session.pending) ~= nil
  end)

  vim.cmd("TetherApprove")
  T.wait_chat("all done")
  T.wait_chat("*done*")
  T.expect(vim.fn.filereadable("approved.txt") == 1, "the command ran in the workspace")
  T.expect(T.chat_has("echo approved > approved.txt (ok)"), "the call shows its result")
  T.expect(#T.dialogs == 1, "an approved call is not asked again")

  vim.cmd("TetherAsk now clean up")
  T.wait_for("the second dialog", function()
    return #T.dialogs == 2
  end)
  T.wait_for("the turn to park", function()
    return next(session.pending) ~= nil and not session.running
  end)
  vim.cmd("TetherDeny keep the build")
  T.wait_chat("understood")
  T.expect(T.chat_has("rm -rf build (denied"), "the call shows it was denied")
  T.expect(vim.fn.isdirectory("build") == 1, "the denied command did not run")
  T.wait_for("the second turn to end", function()
    return not session.running
  end)

  vim.cmd("TetherAsk one more")
  T.wait_for("the third turn to park", function()
    return #T.dialogs == 3 and next(session.pending) ~= nil and not session.running
  end)
  vim.cmd("TetherChat")
  vim.cmd.normal("a") -- the chat's key
  T.wait_chat("keyed it")
  T.expect(vim.fn.filereadable("keyed.txt") == 1, "the command allowed by the key ran")
end)
