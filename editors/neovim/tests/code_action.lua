-- With dialogs off, the parked patch is offered as code actions: Allow, Deny, and the patch
-- itself as an edit (its preview). The action named by $TETHER_NVIM_ACTION is applied
-- through vim.lsp.buf.code_action; the patch lands in the unsaved buffer either way.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup({ settings = { approval = { dialogs = false } } })

T.run(function()
  require("tether.client").ensure() -- running before the file opens: BufReadPost attaches it
  vim.cmd.edit("app.py")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 1, 1, false, { "y = 2" }) -- unsaved
  vim.cmd("TetherAsk bump y")
  T.wait_chat("*awaiting approval")

  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } },
    context = { diagnostics = {} },
  }
  local titles, preview = {}, nil
  local responses = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 5000)
  for _, response in pairs(responses or {}) do
    for _, action in ipairs(response.result or {}) do
      table.insert(titles, action.title:match("^[^:]+"))
      preview = action.edit and action.edit.documentChanges[1].edits[1].newText or preview
    end
  end
  table.sort(titles)
  T.expect(vim.deep_equal(titles, { "Allow", "Apply patch", "Deny" }), vim.inspect(titles))
  T.expect(preview and preview:find("y = 3", 1, true), "the patch action previews the edit")

  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return vim.startswith(action.title, vim.env.TETHER_NVIM_ACTION .. ": ")
    end,
  })
  T.wait_chat("patched")
  T.wait_chat("*done*")
  T.expect(#T.dialogs == 0, "no dialog with dialogs off")
  T.expect(T.buffer_text(buf) == "x = 1\ny = 3", "patched buffer: " .. T.buffer_text(buf))
  T.expect(vim.fn.readfile("app.py")[2] == nil, "the file on disk is untouched")
  T.expect(T.chat_has("(ok)"), "the call shows as done")

  vim.cmd.undo()
  T.expect(T.buffer_text(buf) == "x = 1\ny = 2", "undone: " .. T.buffer_text(buf))
end)
