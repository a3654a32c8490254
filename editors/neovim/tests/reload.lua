-- A command that changes files on disk: a buffer of such a file with no unsaved changes is
-- read again once the command ends, so the agent's next read sees what the command wrote; a
-- buffer with unsaved changes of the person's keeps them.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  require("tether.client").ensure()
  vim.cmd.edit("b.py")
  local b = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(b, 0, -1, false, { "Y = 5" }) -- the person's, unsaved
  vim.cmd.edit("a.py")
  local a = vim.api.nvim_get_current_buf()
  T.answers = { "Allow" }
  vim.cmd("TetherAsk rewrite them")
  T.wait_chat("*done*")
  T.expect(T.buffer_text(a) == "X = 3", "a.py was read again: " .. T.buffer_text(a))
  T.expect(not vim.bo[a].modified, "and is unmodified")
  T.expect(T.buffer_text(b) == "Y = 5", "b.py keeps the person's text: " .. T.buffer_text(b))
end)
