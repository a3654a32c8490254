-- The <Plug> mappings: each exists, and keys mapped to them drive the plugin (chat, and an
-- approval of a parked call).
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  local names =
    { "TetherAsk", "TetherApprove", "TetherDeny", "TetherCancel", "TetherChat", "TetherSessions" }
  for _, name in ipairs(names) do
    T.expect(vim.fn.maparg("<Plug>(" .. name .. ")", "n") ~= "", "<Plug>(" .. name .. ") exists")
  end
  vim.keymap.set("n", "<Space>ta", "<Plug>(TetherApprove)")
  vim.keymap.set("n", "<Space>tt", "<Plug>(TetherChat)")
  vim.keymap.set("n", "<Space>tq", "<Plug>(TetherAsk)")

  vim.ui.input = function(_, on_confirm)
    on_confirm("make a file")
  end
  vim.cmd.normal({ vim.keycode("<Space>tq"), bang = false })
  T.wait_chat("*awaiting approval") -- the dialog was dismissed
  T.wait_for("the parked call to be known", function()
    return next(require("tether.session").pending) ~= nil
  end)
  vim.cmd.normal({ vim.keycode("<Space>ta"), bang = false })
  T.wait_chat("made it")
  T.expect(vim.fn.filereadable("made.txt") == 1, "the call allowed through the mapping ran")

  vim.cmd.wincmd("p")
  vim.cmd.normal({ vim.keycode("<Space>tt"), bang = false })
  T.expect(vim.api.nvim_get_current_buf() == require("tether.chat").buf(), "in the chat")
end)
