-- The `Apply patch` code action shows the patch's diff, coloured, beside the code action
-- picker (whatever picker it is); choosing nothing leaves the buffer as it was.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup({ settings = { approval = { dialogs = false } } })

T.run(function()
  require("tether.client").ensure()
  vim.cmd.edit("app.py")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 1, 1, false, { "y = 2" })
  vim.cmd("TetherAsk bump y")
  T.wait_chat("*awaiting approval")

  T.answers = {} -- the picker is dismissed
  vim.lsp.buf.code_action()
  T.wait_for("the code action picker", function()
    return #T.selects == 1
  end)
  local select = T.selects[1]
  T.expect(select.kind == "codeaction", vim.inspect(select.kind))
  local titles = vim.tbl_map(function(item)
    return item.action.title:match("^[^:]+")
  end, select.items)
  T.expect(vim.tbl_contains(titles, "Apply patch"), vim.inspect(titles))
  local float = select.previews[1]
  T.expect(float, "a preview beside the picker")
  T.expect(
    vim.tbl_contains(float, "-y = 2") and vim.tbl_contains(float, "+y = 3"),
    vim.inspect(float)
  )
  T.expect(vim.startswith(float[1], "--- app.py"), "it names the file: " .. float[1])
  T.expect(#T.floats() == 0, "the preview closed with the picker")
  T.expect(T.buffer_text(buf) == "x = 1\ny = 2", "nothing applied: " .. T.buffer_text(buf))
end)
