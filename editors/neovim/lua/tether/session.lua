-- The session the chat follows: its pending calls, whether a turn runs, its usage, and the
-- turns sent. Turn commands go with `wait: false`: the answer names the session at once
-- (so a new session's id is known, not guessed), and the turn's end comes as a `status`
-- update that carries the TurnResult.
local chat = require("tether.chat")
local client = require("tether.client")

local M = {
  id = nil, ---@type string?
  running = false,
  pending = {}, ---@type table<string, { tool: string, summary: string }>
  ---@type table<string, { input: integer, output: integer, context: integer?, window: integer? }>
  usage = {},
}

-- A request that starts a new session is out: updates of sessions not followed wait here
-- until its answer names the session; then that session's are shown, the others dropped.
local starting ---@type { request: integer, updates: table[] }?
local requests = 0

local function redraw()
  vim.cmd.redrawstatus({ bang = true })
  vim.api.nvim_exec_autocmds("User", { pattern = "TetherStatus", modeline = false })
end

--- Follow `id` from now on (nil: the next turn starts a new session).
---@param id string?
function M.follow(id)
  if id ~= M.id or id == nil then
    M.id, M.running, M.pending, starting = id, false, {}, nil
    chat.session(id, id ~= nil)
    redraw()
  end
end

--- Follow the existing session `id` with its history shown in the chat, then `after()`.
---@param id string
---@param after? fun()
function M.open(id, after)
  if id == M.id then
    return after and after()
  end
  M.follow(id)
  client.command("tether.history", { session = id }, function(err, result)
    if err then
      vim.notify("tether: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif M.id == id then
      chat.history(result.messages or {}, result.pending or {}, result.rewinds or {})
      local stats, usage = result.stats or {}, M.usage[id] or {}
      M.usage[id] = vim.tbl_extend("force", usage, { -- the whole session's, so far
        input = tonumber(stats.input_tokens) or usage.input or 0,
        output = tonumber(stats.output_tokens) or usage.output or 0,
      })
      for _, call in ipairs(result.pending or {}) do
        M.pending[call.call_id] = { tool = call.tool, summary = call.summary }
      end
      redraw()
    end
    if after then
      after()
    end
  end)
end

--- The turn ended with `result` (a TurnResult).
local function finish(result)
  M.running = false
  if result.pending or result.status ~= "awaiting_approval" then
    M.pending = {}
  end
  for _, call in ipairs(result.pending or {}) do
    M.pending[call.call_id] = { tool = call.tool, summary = call.summary }
  end
  chat.answer(result.answer)
  chat.status(result.status, result.error)
  redraw()
end

local function count(usage, update)
  local function int(value)
    return type(value) == "number" and value or nil
  end
  usage.input = usage.input + (int(update.input_tokens) or 0)
  usage.output = usage.output + (int(update.output_tokens) or 0)
  usage.context = int(update.context_tokens) or usage.context
  usage.window = int(update.context_window) or usage.window
end

local function show(update)
  local kind, id = update.kind, update.call_id
  if kind == "text" then
    chat.text(update.text)
  elseif kind == "tool_call" then
    chat.call(id, update.tool, update.summary)
  elseif kind == "output" then
    chat.output(id, update.text or "")
  elseif kind == "approval" then
    local waiting = update.decision == "pending"
    M.pending[id] = waiting and { tool = update.tool, summary = update.summary } or nil
    chat.call_state(id, waiting and "awaiting approval" or update.decision)
    if not waiting then
      require("tether.dialog").settled(id)
    end
  elseif kind == "tool_result" then
    M.pending[id] = nil
    require("tether.dialog").settled(id)
    local failed = update.status ~= "ok" and update.content or nil
    chat.call_state(id, update.status, failed, update.content)
    if update.tool == "command" then
      require("tether.edits").command_ran()
    end
  elseif kind == "rewind" then
    require("tether.rewind").show(update)
  elseif kind == "usage" then
    M.usage[update.session] = M.usage[update.session] or { input = 0, output = 0 }
    count(M.usage[update.session], update)
    redraw()
  elseif kind == "status" then
    if update.status == "running" then
      M.running = true
      chat.running()
      redraw()
    else
      local result = update.result or { status = update.status, error = update.detail }
      if result.error == nil and update.detail then
        result = vim.tbl_extend("force", result, { error = update.detail })
      end
      finish(result)
    end
  end
end

--- Handle one `tether/update` notification.
function M.on_update(update)
  if update.session == M.id and M.id ~= nil then
    return show(update)
  end
  if starting then
    table.insert(starting.updates, update)
  end
end

--- The new session that request `request` started is `id`: follow it, show what it said.
local function adopt(request, id)
  if not (starting and starting.request == request) then
    return false -- a later request started another session: this one runs unseen
  end
  local held = starting.updates
  starting = nil
  M.id = id
  chat.session(id)
  for _, update in ipairs(held) do
    if update.session == id then
      show(update)
    end
  end
  return true
end

--- Handle the answer to a turn command: `{session, status = "running"}`, or a TurnResult
--- for a turn that ended at once (or from a server that waited), or an error.
---@param request? integer the request that started a new session, if it did
function M.on_result(err, result, request)
  if err then
    if request and starting and starting.request == request then
      starting = nil
    end
    M.running = false
    chat.note("error: " .. (err.message or vim.inspect(err)))
    redraw()
    return vim.notify("tether: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
  end
  if type(result) ~= "table" or type(result.session) ~= "string" or not result.status then
    return
  end
  if request and not adopt(request, result.session) then
    return
  end
  if result.session ~= M.id or result.status == "running" then
    return
  end
  if M.running then -- ended before it ran (an unconfigured provider), or a server that waited
    finish(result)
  else -- its end was shown already: keep what it says is waiting
    M.pending = {}
    for _, call in ipairs(result.pending or {}) do
      M.pending[call.call_id] = { tool = call.tool, summary = call.summary }
    end
  end
end

--- The server exited (`code`): whatever it ran is over.
function M.on_exit(code)
  if M.running then
    chat.note(("the server exited (code %d)"):format(code))
  end
  M.running, starting = false, nil
  redraw()
end

--- Send a turn command (`tether.run`, `tether.approve`, `tether.deny`, `tether.applied`)
--- without waiting for the turn.
---@param command string
---@param argument table
function M.send(command, argument)
  argument = vim.tbl_extend("force", argument, { wait = false })
  local request
  if argument.session == nil then
    requests = requests + 1
    request = requests
    starting = { request = request, updates = {} }
  end
  M.running = true
  redraw()
  client.command(command, argument, function(err, result)
    M.on_result(err, result, request)
  end)
end

local NOTES = {
  ["tether.approve"] = function(argument)
    return argument.remember and ("allowed, and remembered for the " .. argument.remember)
      or "allowed"
  end,
  ["tether.deny"] = function(argument)
    return argument.reason and ("denied: " .. argument.reason) or "denied"
  end,
  ["tether.applied"] = function()
    return "applied in the editor"
  end,
}

--- Note the decision in the chat, and send it.
---@param command string
---@param argument table
local function decided(command, argument)
  local what = NOTES[command] and NOTES[command](argument)
  if what and argument.calls and #argument.calls == 1 then
    local call = M.pending[argument.calls[1]]
    what = call and ("%s: %s"):format(what, call.summary) or what
  end
  chat.settled()
  if what then
    chat.note(what)
  end
  M.send(command, argument)
end

--- Decide parked calls (`tether.approve`, `tether.deny`, `tether.applied`), from the
--- plugin's commands or from a code action (`ctx`: the code action's buffer).
---@param command string
---@param argument table
---@param ctx? { bufnr?: integer, client_id?: integer }
function M.decide(command, argument, ctx)
  if type(argument.session) ~= "string" then
    return vim.notify("tether: " .. command .. " without a session", vim.log.levels.ERROR)
  end
  if command == "tether.applied" and ctx then
    local by = ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id) or client.get()
    require("tether.edits").applied_from_code_action(ctx.bufnr, by)
  end
  M.open(argument.session, function()
    decided(command, argument)
  end)
end

---@param prompt string
function M.ask(prompt)
  if M.running then
    return vim.notify("tether: a turn is running (:TetherCancel stops it)", vim.log.levels.WARN)
  end
  chat.turn(prompt)
  M.send("tether.run", { prompt = prompt, session = M.id })
end

function M.cancel()
  if not M.id then
    return vim.notify("tether: no session to cancel", vim.log.levels.WARN)
  end
  client.command("tether.cancel", { session = M.id }, function(err, result)
    if err then
      vim.notify("tether: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif not result.cancelled then
      vim.notify("tether: nothing to cancel", vim.log.levels.WARN)
    end
  end)
end

return M
