-- The session the chat follows: its pending calls, whether a turn runs, and the turns sent.
local chat = require("tether.chat")
local client = require("tether.client")

local M = {
  id = nil, ---@type string?
  running = false,
  pending = {}, ---@type table<string, { tool: string, summary: string }>
}

local adopting = false -- a new session was asked for: follow the first one that speaks
local seen = {} ---@type table<string, true>

local function follows(session)
  if session == M.id then
    return true
  end
  if adopting and not seen[session] then
    adopting, M.id, seen[session] = false, session, true
    chat.session(session)
    return true
  end
  return false
end

--- Follow `id` from now on (nil: the next turn starts a new session).
---@param id string?
function M.follow(id)
  if id ~= M.id or id == nil then
    M.id, M.running, M.pending = id, false, {}
    if id then
      seen[id] = true
    end
    chat.session(id)
  end
end

--- Handle one `tether/update` notification.
function M.on_update(update)
  if not follows(update.session) then
    return
  end
  local kind, id = update.kind, update.call_id
  if kind == "text" then
    chat.text(update.text)
  elseif kind == "tool_call" then
    chat.call(id, update.tool, update.summary)
  elseif kind == "approval" then
    local waiting = update.decision == "pending"
    M.pending[id] = waiting and { tool = update.tool, summary = update.summary } or nil
    chat.call_state(id, waiting and "awaiting approval" or update.decision)
  elseif kind == "tool_result" then
    M.pending[id] = nil
    chat.call_state(id, update.status, update.status ~= "ok" and update.content or nil)
  elseif kind == "status" then
    M.running = update.status == "running"
    if update.status ~= "running" then
      if update.status ~= "awaiting_approval" then
        M.pending = {}
      end
      chat.status(update.status, update.detail)
    end
  end
end

--- Handle the answer to a turn command (a TurnResult, or an error).
function M.on_result(err, result)
  if err then
    chat.note("error: " .. (err.message or vim.inspect(err)))
    return vim.notify("tether: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
  end
  if type(result) ~= "table" or not result.status or result.session ~= M.id then
    return
  end
  M.running = false
  M.pending = {}
  for _, call in ipairs(result.pending or {}) do
    M.pending[call.call_id] = { tool = call.tool, summary = call.summary }
  end
end

--- The server exited (`code`): whatever it ran is over.
function M.on_exit(code)
  if M.running then
    chat.note(("the server exited (code %d) during the turn"):format(code))
  end
  M.running = false
end

--- Send a turn command (`tether.run`, `tether.approve`, `tether.deny`) without blocking.
function M.send(command, argument)
  if argument.session == nil then
    adopting = true
  end
  client.command(command, argument, M.on_result)
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
    if err or not result.cancelled then
      vim.notify("tether: nothing to cancel", vim.log.levels.WARN)
    end
  end)
end

return M
