-- A patch saves the buffer it lands in when the buffer had no unsaved changes, so that the
-- command after it runs against the patched file; a buffer with unsaved changes of the
-- person's is left alone, and the command's dialog names it. $TETHER_NVIM_CASE:
--   clean  [patch a.py, command] allowed in the dialog: a.py is saved, undo takes it back
--   dirty  the same with a.py changed in the buffer first: not saved, the dialog names it
--   apply  dialogs off: the patch applied from its code action is saved too
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
local case = vim.env.TETHER_NVIM_CASE
T.setup(case == "apply" and { settings = { approval = { dialogs = false } } } or nil)

local function disk()
  return table.concat(vim.fn.readfile("a.py"), "\n")
end

T.run(function()
  require("tether.client").ensure()
  vim.cmd.edit("a.py")
  local buf = vim.api.nvim_get_current_buf()
  if case == "dirty" then
    vim.api.nvim_buf_set_lines(buf, 1, 1, false, { "Y = 5" }) -- the person's, unsaved
  end

  if case == "apply" then
    vim.cmd("TetherAsk set X to 2")
    T.wait_chat("*awaiting approval")
    T.answers = { "Apply patch" }
    vim.lsp.buf.code_action()
    T.wait_chat("*done*")
    T.expect(not vim.bo[buf].modified, "the buffer was saved after the code action's patch")
    T.expect(disk() == "X = 2", "the file holds the patch: " .. disk())
    return
  end

  T.answers = { "Allow", "Allow" }
  vim.cmd("TetherAsk set X to 2 and check")
  T.wait_chat("*done*")
  T.expect(#T.dialogs == 2, "asked twice: " .. vim.inspect(T.dialogs))
  T.expect(T.chat_has("print(a.X)") and T.chat_has("(ok)"), "the command ran")
  local unsaved = T.dialogs[2]:match("\n(Unsaved in the editor[^\n]*)")

  if case == "clean" then
    T.expect(not vim.bo[buf].modified, "the patched buffer was saved")
    T.expect(disk() == "X = 2", "the file holds the patch: " .. disk())
    T.expect(unsaved == nil, "nothing unsaved to name: " .. T.dialogs[2])
    T.expect(not T.chat_has("  ! "), "nor a note in the chat")
    vim.api.nvim_set_current_buf(buf)
    vim.cmd.undo()
    T.expect(T.buffer_text(buf) == "X = 1", "undo takes the patch back: " .. T.buffer_text(buf))
  else
    T.expect(vim.bo[buf].modified, "the buffer with the person's change was not saved")
    T.expect(T.buffer_text(buf) == "X = 2\nY = 5", "patched buffer: " .. T.buffer_text(buf))
    T.expect(disk() == "X = 1", "the file is untouched: " .. disk())
    T.expect(unsaved and unsaved:find("a.py", 1, true), "the dialog names a.py: " .. T.dialogs[2])
    T.expect(T.chat_has("  ! the editor has unsaved changes in a.py"), "so does the chat")
  end
end)
