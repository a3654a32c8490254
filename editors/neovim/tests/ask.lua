-- Ask twice in one session: the answers stream into the chat, progress reaches the statusline.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  local chat = require("tether.chat")
  local progress, statuses, changes = {}, {}, 0
  vim.api.nvim_create_autocmd("LspProgress", {
    callback = function(ev)
      table.insert(progress, ev.data.params.value.kind)
      table.insert(statuses, vim.lsp.status())
    end,
  })
  vim.api.nvim_buf_attach(chat.buf(), false, {
    on_lines = function()
      changes = changes + 1
    end,
  })

  vim.cmd("TetherAsk What is this project?")
  T.wait_chat("It is a small project, answered in pieces.")
  T.wait_chat("*done*")
  T.expect(changes >= 8, "the answer streamed in pieces, got " .. changes .. " changes")
  T.expect(vim.fn.bufwinid(chat.buf()) ~= -1, "the chat is shown in a window")

  vim.ui.input = function(opts, on_confirm)
    T.expect(opts.prompt == "tether> ", "a prompt was asked for")
    on_confirm("And the tests?")
  end
  vim.cmd("TetherAsk")
  T.wait_chat("They run headless.")
  T.wait_for("the second turn to end", function()
    return #vim.tbl_filter(function(l)
      return l == "*done*"
    end, chat.lines()) == 2
  end)

  local text = table.concat(chat.lines(), "\n")
  T.expect(select(2, text:gsub("# tether session", "")) == 1, "both turns in one session")
  T.expect(text:find("## You\nAnd the tests?", 1, true), "the second prompt is shown")
  T.expect(vim.tbl_contains(progress, "begin") and vim.tbl_contains(progress, "end"), "progress")
  local named = vim.iter(statuses):any(function(status)
    return status:find("tether", 1, true) ~= nil
  end)
  T.expect(named, "vim.lsp.status() names the turn: " .. vim.inspect(statuses))
end)
