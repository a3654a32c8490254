-- A running command's output streams into the chat below its line, dimmed; once the
-- command ends all but its last lines fold away, and the tail stays in view. $/progress
-- shows the last line while it runs. Output past the chat's limit keeps its tail.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  local chat = require("tether.chat")
  local progress = {}
  vim.api.nvim_create_autocmd("LspProgress", {
    callback = function(ev)
      table.insert(progress, ev.data.params.value.message or "")
    end,
  })
  T.answers = { "Allow" }
  vim.cmd("TetherAsk run the tests")
  T.wait_chat("│ line 2")
  T.expect(T.chat_has("(allowed, running)"), "the output shows while the command runs")
  T.wait_chat("*done*")
  T.expect(T.chat_has("(error: exit code: 1)"), "the call failed")

  local win = vim.fn.bufwinid(chat.buf())
  local lines = chat.lines()
  local function lnum(text)
    for i, line in ipairs(lines) do
      if line == text then
        return i
      end
    end
    error("no line " .. vim.inspect(text) .. " in the chat")
  end
  vim.api.nvim_win_call(win, function()
    T.expect(vim.fn.foldclosed(lnum("  │ line 1")) ~= -1, "the head of the output is folded")
    local last = lnum("  │ No module named pytest")
    T.expect(vim.fn.foldclosed(last) == -1, "its tail is in view")
    T.expect(vim.fn.foldclosedend(lnum("  │ line 1")) == last - 3, "all but 3 lines fold")
  end)
  local shown = vim.iter(progress):any(function(message)
    return message:find("line %d") ~= nil
  end)
  T.expect(shown, "$/progress showed the output's last line: " .. vim.inspect(progress))

  -- The chat keeps the last 200 lines of a call's output.
  chat.call("local", "command", "yes | head -300")
  local many = {}
  for i = 1, 300 do
    many[i] = "y" .. i
  end
  chat.output("local", table.concat(many, "\n") .. "\n")
  T.expect(T.chat_has("  │ … 100 earlier lines"), "the head that went is counted")
  T.expect(T.chat_has("  │ y300") and not T.chat_has("  │ y100"), "the tail is kept")
end)
