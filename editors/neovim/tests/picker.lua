-- The approval dialog through vim.ui.select: the whole message as the prompt, without the
-- ": " Neovim's own handler adds; the patch's diff coloured in a float beside the picker,
-- closed once answered; the actions carry the call's id, and the chat marks that call.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

local seen = {}
local answer = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  local groups = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })) do
        groups[#groups + 1] = mark[4].line_hl_group
      end
    end
  end
  local chat = require("tether.chat")
  local marks = vim.api.nvim_buf_get_extmarks(chat.buf(), -1, 0, -1, { details = true })
  local asking = vim.iter(marks):any(function(mark)
    return mark[4].virt_text ~= nil
  end)
  local pending = vim.deepcopy(require("tether.session").pending)
  table.insert(seen, { items = items, groups = groups, asking = asking, pending = pending })
  return answer(items, opts, on_choice)
end

T.run(function()
  vim.cmd.edit("app.py")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 1, 1, false, { "y = 2" })
  T.answers = { "Allow" }
  vim.cmd("TetherAsk bump y")
  T.wait_chat("*done*")

  local select = T.selects[1]
  T.expect(select.kind == "tether_approval", "kind: " .. tostring(select.kind))
  T.expect(vim.startswith(select.prompt, "tether wants to run patch: "), select.prompt)
  T.expect(not select.prompt:match(":%s*$"), "no trailing colon: " .. vim.inspect(select.prompt))
  T.expect(select.prompt:find("\n+y = 3", 1, true), "the prompt holds the diff")
  local float = select.previews[1]
  T.expect(float and vim.tbl_contains(float, "+y = 3"), "the diff beside the picker")
  local groups = seen[1].groups
  T.expect(vim.tbl_contains(groups, "TetherDiffAdd"), "coloured: " .. vim.inspect(groups))
  T.expect(vim.tbl_contains(groups, "TetherDiffDelete"), "coloured: " .. vim.inspect(groups))
  T.expect(#T.floats() == 0, "the float closed once answered")

  local call = select.items[1].call_id
  T.expect(type(call) == "string", "the actions carry the call's id: " .. vim.inspect(select.items))
  for _, item in ipairs(select.items) do
    T.expect(item.call_id == call, "every action carries it")
  end
  T.expect(seen[1].pending[call], "it is the call waiting: " .. vim.inspect(seen[1].pending))
  T.expect(seen[1].asking, "the chat marked the call asked about")
  local marks = vim.api.nvim_buf_get_extmarks(require("tether.chat").buf(), -1, 0, -1, {
    details = true,
  })
  local still = vim.iter(marks):any(function(mark)
    return mark[4].virt_text ~= nil
  end)
  T.expect(not still, "the mark went once answered")
  T.expect(T.buffer_text(buf) == "x = 1\ny = 3", "allowed: " .. T.buffer_text(buf))
end)
