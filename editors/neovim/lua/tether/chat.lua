-- The transcript buffer: the followed session's turns, rendered as they happen.
local M = {}

local NAME = "tether://chat"
local ns = vim.api.nvim_create_namespace("tether.chat")
local buf ---@type integer?
local shown ---@type string? the session shown
local tail = "header" -- what the last line holds: "header", "text", "call", "note"
local calls = {} ---@type table<string, { mark: integer, tool: string, summary: string }>

local STATUS = { -- how a turn's end reads; other statuses read as themselves
  awaiting_approval = "awaiting approval: a allow · A allow always · d deny"
    .. " (or :TetherApprove, :TetherDeny, code actions)",
}

local function keymaps(b)
  local tether = require("tether")
  local function map(lhs, rhs, desc)
    vim.keymap.set("n", lhs, rhs, { buffer = b, nowait = true, desc = "tether: " .. desc })
  end
  map("a", tether.approve, "allow the pending calls")
  map("A", function()
    tether.approve("workspace")
  end, "allow the pending calls, and their like from now on")
  map("d", tether.deny, "deny the pending calls")
  map("i", tether.ask, "ask")
  map("<C-c>", tether.cancel, "cancel the running turn")
  map("q", "<Cmd>close<CR>", "close the chat window")
end

--- The chat buffer, created on first use.
---@return integer
function M.buf()
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, NAME)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "# tether" })
  local bo = vim.bo[buf]
  bo.bufhidden, bo.swapfile, bo.undolevels, bo.modifiable = "hide", false, -1, false
  bo.filetype = "tether"
  pcall(vim.treesitter.start, buf, "markdown")
  keymaps(buf)
  shown, tail, calls = nil, "header", {}
  return buf
end

--- Show the chat in a window (a split on the right) unless one shows it already.
---@param enter boolean? move the cursor there
function M.open(enter)
  local b = M.buf()
  local win = vim.fn.win_findbuf(b)[1]
  if not win then
    win = vim.api.nvim_open_win(b, false, { split = "right", win = -1 })
    vim.wo[win].wrap, vim.wo[win].linebreak = true, true
  end
  if enter then
    vim.api.nvim_set_current_win(win)
  end
end

--- Change the buffer with `edit(buf)`, keeping windows at the end following it.
local function modify(edit)
  local b = M.buf()
  local count = vim.api.nvim_buf_line_count(b)
  local following = {}
  for _, win in ipairs(vim.fn.win_findbuf(b)) do
    following[win] = vim.api.nvim_win_get_cursor(win)[1] == count
  end
  vim.bo[b].modifiable = true
  edit(b)
  vim.bo[b].modifiable = false
  count = vim.api.nvim_buf_line_count(b)
  for win, follow in pairs(following) do
    if follow then
      vim.api.nvim_win_set_cursor(win, { count, 0 })
    end
  end
end

--- Replace lines [first, last) with `lines`.
local function write(first, last, lines)
  modify(function(b)
    vim.api.nvim_buf_set_lines(b, first, last, false, lines)
  end)
end

---@param lines string[]
---@return integer row of the first new line (0-based)
local function append(lines)
  local count = vim.api.nvim_buf_line_count(M.buf())
  write(count, count, lines)
  return count
end

--- Show session `id` (nil: a new session, not named yet). The transcript starts afresh
--- unless the chat is naming the new session it already shows.
---@param id string?
function M.session(id)
  local b = M.buf()
  if id == shown and id ~= nil then
    return
  end
  local header = id and ("# tether session " .. id) or "# tether"
  if shown == nil and id ~= nil then
    write(0, 1, { header })
  else
    write(0, -1, { header })
    tail, calls = "header", {}
    vim.api.nvim_buf_clear_namespace(b, ns, 0, -1)
  end
  shown = id
end

---@param prompt string
function M.turn(prompt)
  local lines = { "", "## You" }
  vim.list_extend(lines, vim.split(prompt, "\n", { plain = true }))
  vim.list_extend(lines, { "", "## tether" })
  append(lines)
  tail = "header"
end

--- A streamed piece of the model's answer.
---@param delta string
function M.text(delta)
  if tail ~= "text" then
    append(tail == "header" and { "" } or { "", "" })
    tail = "text"
  end
  local b = M.buf()
  local last = vim.api.nvim_buf_line_count(b) - 1
  local current = vim.api.nvim_buf_get_lines(b, last, last + 1, false)[1]
  write(last, last + 1, vim.split(current .. delta, "\n", { plain = true }))
end

local function call_line(call, state)
  return ("- %s: %s (%s)"):format(call.tool, call.summary, state)
end

---@param id string the call id
---@param tool string
---@param summary string
function M.call(id, tool, summary)
  if calls[id] then -- a resumed turn goes on with the calls it parked on
    return
  end
  local call = { tool = tool, summary = (summary:gsub("\n", " ")) }
  local row = append({ call_line(call, "…") })
  call.mark = vim.api.nvim_buf_set_extmark(M.buf(), ns, row, 0, {})
  calls[id] = call
  tail = "call"
end

---@param id string the call id
---@param state string
---@param detail? string what went wrong, for a call that failed
function M.call_state(id, state, detail)
  local call = calls[id]
  if not call then
    return
  end
  if state == "allowed" then
    state = "allowed, running"
  elseif detail and vim.trim(detail) ~= "" then
    local first = vim.split(vim.trim(detail), "\n")[1]
    state = vim.startswith(first, state) and first or ("%s: %s"):format(state, first)
  end
  local row = vim.api.nvim_buf_get_extmark_by_id(M.buf(), ns, call.mark, {})[1]
  if row then
    modify(function(b) -- in place, so that the call's mark stays on its line
      local old = vim.api.nvim_buf_get_lines(b, row, row + 1, false)[1]
      vim.api.nvim_buf_set_text(b, row, 0, row, #old, { call_line(call, state) })
    end)
  end
end

---@param text string
function M.note(text)
  append({ "", ("*%s*"):format((text:gsub("\n", " "))) })
  tail = "note"
end

---@param status string
---@param detail string?
function M.status(status, detail)
  local text = STATUS[status] or status
  M.note(type(detail) == "string" and ("%s: %s"):format(text, detail) or text)
end

--- The transcript as lines (for tests and scripts).
---@return string[]
function M.lines()
  return vim.api.nvim_buf_get_lines(M.buf(), 0, -1, false)
end

return M
