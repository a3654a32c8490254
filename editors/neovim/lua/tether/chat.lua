-- The transcript buffer: the followed session's turns, rendered as they happen.
local M = {}

local NAME = "tether://chat"
local ns = vim.api.nvim_create_namespace("tether.chat")
local OUT = "  │ " -- the prefix of a command's output lines
local NOTE = "  ! " -- the prefix of the note a command's result ends with
local KEEP = 200 -- output lines of one call kept in the chat (its tail)
local TAIL = 3 -- output lines left in view when a call's output is folded

vim.api.nvim_set_hl(0, "TetherOutput", { default = true, link = "Comment" })
vim.api.nvim_set_hl(0, "TetherAsking", { default = true, link = "WarningMsg" })
vim.api.nvim_set_hl(0, "TetherNote", { default = true, link = "WarningMsg" })

---@class tether.Output
---@field n integer lines of output in the buffer (below the call's line)
---@field dropped integer lines dropped from its head (KEEP)
---@field partial boolean the last line is still being written
---@field ended boolean the call has ended
---@field hl integer? the extmark that dims it

---@class tether.ChatCall
---@field mark integer the extmark on the call's line
---@field tool string
---@field summary string
---@field out tether.Output?
---@field asking integer? the extmark saying the dialog asks about this call

local buf ---@type integer?
local shown ---@type string? the session shown
local tail = "header" -- what the last line holds: "header", "text", "call", "note"
local calls = {} ---@type table<string, tether.ChatCall>
local waiting ---@type integer? the extmark on the "awaiting approval" note
local streamed = false -- the current turn's answer has streamed in

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
  map("s", tether.sessions, "pick a session to follow")
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
  vim.api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    desc = "tether: fold the chat's finished command output in this window",
    callback = function()
      M.refold(vim.api.nvim_get_current_win())
    end,
  })
  shown, tail, calls, waiting, streamed = nil, "header", {}, nil, false
  return buf
end

--- Show the chat in a window (a split on the right) unless one shows it already.
---@param enter boolean? move the cursor there
function M.open(enter)
  local b = M.buf()
  local win = vim.fn.win_findbuf(b)[1]
  if not win then
    win = vim.api.nvim_open_win(b, false, { split = "right", win = -1 })
    M.refold(win)
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
--- unless the chat is naming the new session it already shows (and not `fresh`).
---@param id string?
---@param fresh? boolean an existing session: start afresh whatever is shown
function M.session(id, fresh)
  local b = M.buf()
  if id == shown and id ~= nil then
    return
  end
  local header = id and ("# tether session " .. id) or "# tether"
  if shown == nil and id ~= nil and not fresh then
    write(0, 1, { header })
  else
    write(0, -1, { header })
    tail, calls, waiting, streamed = "header", {}, nil, false
    vim.api.nvim_buf_clear_namespace(b, ns, 0, -1)
  end
  shown = id
end

---@param prompt string
function M.turn(prompt)
  M.settled()
  local lines = { "", "## You" }
  vim.list_extend(lines, vim.split(prompt, "\n", { plain = true }))
  vim.list_extend(lines, { "", "## tether" })
  append(lines)
  tail, streamed = "header", false
end

--- A turn (a new one, or a parked one resumed) runs.
function M.running()
  M.settled()
  streamed = false
end

--- A streamed piece of the model's answer.
---@param delta string
function M.text(delta)
  if tail ~= "text" then
    append(tail == "header" and { "" } or { "", "" })
    tail = "text"
  end
  streamed = true
  local b = M.buf()
  local last = vim.api.nvim_buf_line_count(b) - 1
  local current = vim.api.nvim_buf_get_lines(b, last, last + 1, false)[1]
  write(last, last + 1, vim.split(current .. delta, "\n", { plain = true }))
end

--- The turn's answer as its result has it: shown when none of it streamed in.
---@param answer string?
function M.answer(answer)
  if type(answer) == "string" and answer ~= "" and not streamed then
    M.text(answer)
  end
end

local function call_line(call, state)
  return ("- %s: %s (%s)"):format(call.tool, call.summary, state)
end

---@param call tether.ChatCall
---@return integer? row of the call's line
local function row_of(call)
  return vim.api.nvim_buf_get_extmark_by_id(M.buf(), ns, call.mark, {})[1]
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

--- Output text as it shows: colours (ANSI sequences) dropped, a line rewritten with \r
--- shown as it ends up.
---@param text string
---@return string[] lines; the last is "" when `text` ended a line
local function output_lines(text)
  text = text:gsub("\27%[[%d;?]*%a", ""):gsub("\r\n", "\n")
  local lines = vim.split(text, "\n", { plain = true })
  return lines
end

local function overwritten(line)
  return line:find("\r", 1, true) and line:match("([^\r]*)\r*$") or line
end

--- Dim the call's output lines (one extmark over them, moved as they grow).
local function dim(b, row, out)
  if out.n == 0 then
    return
  end
  out.hl = vim.api.nvim_buf_set_extmark(b, ns, row + 1, 0, {
    id = out.hl,
    end_row = row + out.n,
    end_col = #vim.api.nvim_buf_get_lines(b, row + out.n, row + out.n + 1, false)[1],
    hl_group = "TetherOutput",
    priority = 200,
  })
end

--- Keep the last KEEP lines of a call's output; a first line says how many went.
local function keep_tail(b, row, out)
  local head = out.dropped > 0 and 1 or 0
  local excess = out.n - head - KEEP
  if excess <= 0 then
    return
  end
  vim.api.nvim_buf_set_lines(b, row + 1 + head, row + 1 + head + excess, false, {})
  out.n, out.dropped = out.n - excess, out.dropped + excess
  local note = OUT .. ("… %d earlier lines"):format(out.dropped)
  vim.api.nvim_buf_set_lines(b, row + 1, row + 1 + head, false, { note })
  out.n = out.n + 1 - head
end

--- A piece of a running command's output, shown below its line as it comes.
---@param id string the call id
---@param text string
function M.output(id, text)
  local call = calls[id]
  if not call or (call.out and call.out.ended) or text == "" then
    return
  end
  local out = call.out or { n = 0, dropped = 0, partial = false, ended = false }
  call.out = out
  local row = row_of(call)
  if not row then
    return
  end
  local pieces = output_lines(text)
  modify(function(b)
    local at = row + out.n -- the last line of output (or the call's line)
    if out.partial then
      local last = vim.api.nvim_buf_get_lines(b, at, at + 1, false)[1]:sub(#OUT + 1)
      vim.api.nvim_buf_set_lines(b, at, at + 1, false, { OUT .. overwritten(last .. pieces[1]) })
      table.remove(pieces, 1)
    end
    local ends_line = #pieces > 0 and pieces[#pieces] == ""
    if ends_line then
      table.remove(pieces)
    end
    out.partial = not ends_line and (#pieces > 0 or out.partial)
    local new = {}
    for _, piece in ipairs(pieces) do
      new[#new + 1] = OUT .. overwritten(piece)
    end
    vim.api.nvim_buf_set_lines(b, at + 1, at + 1, false, new)
    out.n = out.n + #new
    keep_tail(b, row, out)
    dim(b, row, out)
  end)
end

--- Create the fold over an ended call's output (all but its tail) in window `win`.
local function fold(win, call)
  local out, row = call.out, row_of(call)
  if not (out and out.ended and row) or out.n <= TAIL + 1 then
    return
  end
  local first, last = row + 2, row + 1 + out.n - TAIL -- 1-based lines
  vim.api.nvim_win_call(win, function()
    vim.cmd(("silent! %d,%dfold"):format(first, last))
  end)
end

--- Set up window `win` for the chat: wrapping, and the finished outputs folded.
---@param win integer
function M.refold(win)
  if not (buf and vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == buf) then
    return
  end
  local wo = vim.wo[win]
  wo.wrap, wo.linebreak, wo.breakindent = true, true, true
  wo.foldmethod, wo.foldenable, wo.foldcolumn = "manual", true, "0"
  wo.foldtext = "v:lua.require'tether.chat'.foldtext()"
  vim.api.nvim_win_call(win, function()
    vim.opt_local.fillchars:append({ fold = " " })
    vim.cmd("silent! normal! zE")
  end)
  for _, call in pairs(calls) do
    fold(win, call)
  end
end

--- How a folded output reads.
function M.foldtext()
  local count = vim.v.foldend - vim.v.foldstart + 1
  return OUT .. ("⋯ %d more lines of output (zo shows them)"):format(count)
end

--- Below a command's output, the note its result ends with, if any (e.g. that the command
--- saw files on disk that differ from unsaved buffers); not folded.
---@param call tether.ChatCall
---@param note string
local function add_note(call, note)
  local row = row_of(call)
  if not row then
    return
  end
  local at = row + 1 + (call.out and call.out.n or 0)
  modify(function(b)
    vim.api.nvim_buf_set_lines(b, at, at, false, { NOTE .. note })
    vim.api.nvim_buf_set_extmark(b, ns, at, #NOTE, {
      end_row = at,
      end_col = #NOTE + #note,
      hl_group = "TetherNote",
    })
  end)
end

---@param id string the call id
---@param call tether.ChatCall
---@param content string? the call's result
local function output_ended(id, call, content)
  if call.tool ~= "command" or type(content) ~= "string" then
    return
  end
  local body, note = content:match("^(.-)\n%[note: ([^\n]*)%]%s*$")
  content = body or content
  if not call.out then
    -- no output streamed (an older server): show what the result holds below its first line
    local rest = content:match("^[^\n]*\n(.+)$")
    if rest and vim.trim(rest) ~= "" then
      M.output(id, rest:sub(-1) == "\n" and rest or rest .. "\n")
    end
  end
  if note then
    add_note(call, note)
  end
  if call.out then
    call.out.ended = true
    for _, win in ipairs(vim.fn.win_findbuf(M.buf())) do
      fold(win, call)
    end
  end
end

---@param id string the call id
---@param state string
---@param detail? string what went wrong, for a call that failed
---@param content? string the call's result, for one that ended
function M.call_state(id, state, detail, content)
  local call = calls[id]
  if not call then
    return
  end
  if content ~= nil then
    output_ended(id, call, content)
  end
  if state == "allowed" then
    state = "allowed, running"
  elseif detail and vim.trim(detail) ~= "" then
    local first = vim.split(vim.trim(detail), "\n")[1]
    state = vim.startswith(first, state) and first or ("%s: %s"):format(state, first)
  end
  local row = row_of(call)
  if row then
    modify(function(b) -- in place, so that the call's mark stays on its line
      local old = vim.api.nvim_buf_get_lines(b, row, row + 1, false)[1]
      vim.api.nvim_buf_set_text(b, row, 0, row, #old, { call_line(call, state) })
    end)
  end
end

--- Mark (or unmark) the call that a dialog asks about.
---@param id string
---@param on boolean
function M.asking(id, on)
  local call = calls[id]
  local row = call and row_of(call)
  if not row then
    return
  end
  if on then
    call.asking = vim.api.nvim_buf_set_extmark(M.buf(), ns, row, 0, {
      id = call.asking,
      virt_text = { { "  ◂ the dialog asks about this", "TetherAsking" } },
    })
  elseif call.asking then
    vim.api.nvim_buf_del_extmark(M.buf(), ns, call.asking)
    call.asking = nil
  end
end

--- A call's summary from its arguments, as a history has no summaries.
---@param tool string
---@param arguments table|string
---@return string
local function summary_of(tool, arguments)
  if type(arguments) ~= "table" then
    return tostring(arguments)
  elseif tool == "patch" and arguments.path then
    return "edit " .. arguments.path
  end
  local main = arguments.command or arguments.path or arguments.pattern
  if main then
    return tostring(main)
  end
  return next(arguments) and vim.json.encode(arguments) or ""
end

--- Show a session's history (`tether.history`): its prompts, answers, calls and their
--- results; `pending`: the calls waiting for approval; `rewinds`: where turns were rewound
--- (each after the `before` messages before it).
---@param messages table[]
---@param pending table[]
---@param rewinds? table[]
function M.history(messages, pending, rewinds)
  local function rewound(index)
    for _, r in ipairs(rewinds or {}) do
      if r.before == index then
        require("tether.rewind").show(r)
      end
    end
  end
  for index, message in ipairs(messages) do
    rewound(index - 1)
    if message.role == "user" then
      M.turn(message.content or "")
    elseif message.role == "assistant" then
      if (message.content or "") ~= "" then
        M.text(message.content)
      end
      for _, call in ipairs(message.tool_calls or {}) do
        M.call(call.id, call.name, summary_of(call.name, call.arguments))
      end
    elseif message.role == "tool" then
      local failed = message.status ~= "ok" and message.content or nil
      M.call_state(message.call_id, message.status, failed, message.content)
    end
  end
  rewound(#messages)
  for _, call in ipairs(pending) do
    M.call(call.call_id, call.tool, call.summary)
    M.call_state(call.call_id, "awaiting approval")
  end
  if #pending > 0 then
    M.status("awaiting_approval")
  end
end

---@param text string
---@return integer row of the note's first line
function M.note(text)
  local row = append({ "", ("*%s*"):format((text:gsub("\n", " "))) })
  tail = "note"
  return row
end

---@param status string
---@param detail string?
function M.status(status, detail)
  local text = STATUS[status] or status
  M.settled()
  local row = M.note(type(detail) == "string" and ("%s: %s"):format(text, detail) or text)
  if status == "awaiting_approval" then
    waiting = vim.api.nvim_buf_set_extmark(M.buf(), ns, row, 0, {})
  end
end

--- The parked calls were decided (or the turn went on): the "awaiting approval" note goes.
function M.settled()
  if not waiting then
    return
  end
  local row = vim.api.nvim_buf_get_extmark_by_id(M.buf(), ns, waiting, {})[1]
  vim.api.nvim_buf_del_extmark(M.buf(), ns, waiting)
  waiting = nil
  if row then
    write(row, row + 2, {})
  end
end

--- The transcript as lines (for tests and scripts).
---@return string[]
function M.lines()
  return vim.api.nvim_buf_get_lines(M.buf(), 0, -1, false)
end

return M
