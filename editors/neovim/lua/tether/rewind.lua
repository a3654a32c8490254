-- Rewind: take a turn of the followed session back (`tether.rewind`): its change to the
-- files (the person's edits since stay), what the model is sent of it and what followed,
-- or both. The answer is told with vim.notify; the chat shows the rewind from its update.
local M = {}

M.WHATS = { "files", "conversation", "both" }

--- The first few of `paths`, then how many more.
---@param paths string[]
---@return string
local function list(paths)
  local shown = vim.list_slice(paths, 1, 5)
  local more = #paths > 5 and (" and %d more"):format(#paths - 5) or ""
  return table.concat(shown, ", ") .. more
end

--- How a rewind (`tether.rewind`'s answer, a `rewind` update, a history's entry) reads:
--- what it did, and apart (a warning) what it left as it is and why.
---@param r table
---@return string text, string? warning
function M.describe(r)
  local done = {}
  if #(r.restored or {}) > 0 then
    done[#done + 1] = "restored " .. list(r.restored)
  end
  if #(r.removed or {}) > 0 then
    done[#done + 1] = "removed " .. list(r.removed)
  end
  if r.what ~= "conversation" and #done == 0 then
    done[#done + 1] = "no file changed"
  end
  if r.what ~= "files" then
    done[#done + 1] = ("the model is no longer sent turn %d and what followed"):format(r.turn)
  end
  local text = ("rewound turn %d (%s): %s."):format(r.turn, r.what, table.concat(done, "; "))
  for _, note in ipairs(r.notes or {}) do
    text = text .. " " .. note
  end
  local left = {}
  for _, conflict in ipairs(r.conflicts or {}) do
    left[#left + 1] = ("%s: %s"):format(conflict.path, conflict.reason)
  end
  if #left == 0 then
    return text
  end
  return text, "left as they are (your edits overlap the turn's): " .. table.concat(left, "; ")
end

--- A rewind as notes in the chat (from its update, or a history).
---@param r table
function M.show(r)
  local chat = require("tether.chat")
  local text, warning = M.describe(r)
  chat.note(text)
  if warning then
    chat.note("! " .. warning)
  end
end

--- `:TetherRewind [turn] [files|conversation|both]`, in either order.
---@param args string
---@return integer? turn, string? what, string? err
function M.parse(args)
  local turn, what
  for _, word in ipairs(vim.split(vim.trim(args or ""), "%s+", { trimempty = true })) do
    if word:match("^%d+$") and tonumber(word) >= 1 then
      turn = tonumber(word)
    elseif vim.tbl_contains(M.WHATS, word) then
      what = word
    else
      return nil, nil, ("not a turn nor one of files, conversation, both: %q"):format(word)
    end
  end
  return turn, what
end

--- Take back `turn` of the followed session (default: the last turn that changed files),
--- `what` of it (default: files).
---@param turn? integer
---@param what? "files"|"conversation"|"both"
function M.rewind(turn, what)
  local session = require("tether.session")
  if not session.id then
    return vim.notify(
      "tether: no session is followed (:TetherSessions picks one)",
      vim.log.levels.WARN
    )
  end
  local argument = { session = session.id, turn = turn, what = what }
  require("tether.client").command("tether.rewind", argument, function(err, result)
    if err then
      local message = "rewind failed: " .. (err.message or vim.inspect(err))
      require("tether.chat").note(message)
      return vim.notify("tether: " .. message, vim.log.levels.ERROR)
    end
    local text, warning = M.describe(result)
    vim.notify("tether: " .. text, vim.log.levels.INFO)
    if warning then
      vim.notify("tether: " .. warning, vim.log.levels.WARN)
    end
  end)
end

return M
