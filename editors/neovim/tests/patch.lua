-- A patch allowed in the dialog lands in the unsaved buffer, and :undo takes it back.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  vim.cmd.edit("app.py")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 1, 1, false, { "y = 2" }) -- unsaved: only the buffer has y
  T.answers = { "Allow" }

  vim.cmd("TetherAsk bump y")
  T.wait_chat("*done*")

  T.expect(#T.dialogs == 1 and T.dialogs[1]:find("patch", 1, true), vim.inspect(T.dialogs))
  T.expect(T.buffer_text(buf) == "x = 1\ny = 3", "patched buffer: " .. T.buffer_text(buf))
  T.expect(vim.bo[buf].modified, "the patch is in the buffer, not saved")
  T.expect(vim.fn.readfile("app.py")[2] == nil, "the file on disk is untouched")
  T.expect(T.chat_has("- patch: ") and T.chat_has("(ok)"), "the call and its result in the chat")

  vim.api.nvim_set_current_buf(buf)
  vim.cmd.undo()
  T.expect(T.buffer_text(buf) == "x = 1\ny = 2", "undone: " .. T.buffer_text(buf))
end)
