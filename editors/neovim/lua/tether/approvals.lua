-- Deciding parked calls after the dialog was dismissed (or never shown).
local client = require("tether.client")
local session = require("tether.session")

local M = {}

--- Run `decide(id)` for the followed session when it has calls waiting; otherwise for the
--- most recently parked session of this workspace (parked calls outlive the editor).
local function with_parked(decide)
  if session.id and next(session.pending) then
    return decide(session.id)
  end
  client.command("tether.sessions", vim.empty_dict(), function(err, result)
    if err then
      return vim.notify("tether: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    local parked
    for _, info in ipairs(result.sessions or {}) do
      if info.status == "awaiting_approval" and (not parked or info.id == session.id) then
        parked = info
      end
    end
    if not parked then
      return vim.notify("tether: no calls are waiting for approval", vim.log.levels.WARN)
    end
    decide(parked.id)
  end)
end

--- Allow every pending call of the session; `remember` ("session" or "workspace") also
--- records a rule so that matching calls are allowed without asking.
---@param remember? "session"|"workspace"
function M.approve(remember)
  with_parked(function(id)
    session.decide("tether.approve", { session = id, remember = remember })
  end)
end

--- Deny every pending call of the session; `reason` reaches the model.
---@param reason? string
function M.deny(reason)
  with_parked(function(id)
    session.decide("tether.deny", { session = id, reason = reason })
  end)
end

return M
