-- Parked calls outlive the editor: a call parked in one Neovim is approved from the next
-- with :TetherApprove; the chat shows that session's history, then the turn running on.
-- $TETHER_NVIM_CASE: park (first run), approve (second run).
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  if vim.env.TETHER_NVIM_CASE == "park" then
    vim.cmd("TetherAsk make a file") -- no answer scripted: the dialog is dismissed
    T.wait_chat("*awaiting approval")
    return
  end
  vim.cmd("TetherApprove")
  T.wait_chat("made it")
  T.wait_chat("*done*")
  local text = table.concat(require("tether.chat").lines(), "\n")
  T.expect(text:find("## You\nmake a file", 1, true), "the parked session's prompt is shown")
  T.expect(T.chat_has("- command: echo made > made.txt (ok)"), "its call, now run")
  T.expect(T.chat_has("*allowed*"), "the decision is noted")
  T.expect(not T.chat_has("*awaiting approval"), "the waiting note left")
end)
