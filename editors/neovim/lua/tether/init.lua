-- tether: an LLM coding agent hosted in a language server. See :help tether.
local M = {}

---@class tether.Config
---@field cmd? string[] the server command (default: `tether serve`, found on PATH or in the
---  workspace's .venv)
---@field env? table<string, string> extra environment for the server
---@field settings? table sent as initializationOptions `{ tether = settings }`
---@field root_dir? string|fun(): string the workspace (default: the cwd's git root, or the cwd)
M.config = {
  cmd = nil,
  env = nil,
  settings = nil,
  root_dir = nil,
}

--- Configure the plugin; optional when the defaults suit. The server starts on first use.
---@param opts? tether.Config
function M.setup(opts)
  opts = opts or {}
  if opts.cmd ~= nil and (type(opts.cmd) ~= "table" or #opts.cmd == 0) then
    error("tether: opts.cmd must be a list, like { 'tether', 'serve' }")
  end
  M.config = vim.tbl_extend("force", M.config, opts)
  M.configured = true
end

--- Ask in the followed session (a new one with `opts.new`); no prompt: ask for one.
---@param prompt? string
---@param opts? { new?: boolean }
function M.ask(prompt, opts)
  if not prompt or vim.trim(prompt) == "" then
    return vim.ui.input({ prompt = "tether> " }, function(input)
      if input and vim.trim(input) ~= "" then
        M.ask(input, opts)
      end
    end)
  end
  local session = require("tether.session")
  if opts and opts.new then
    session.follow(nil)
  end
  require("tether.chat").open(false)
  session.ask(prompt)
end

--- Allow the pending calls; `remember`: "session" or "workspace".
---@param remember? "session"|"workspace"
function M.approve(remember)
  require("tether.approvals").approve(remember)
end

--- Deny the pending calls, with an optional reason for the model.
---@param reason? string
function M.deny(reason)
  require("tether.approvals").deny(reason ~= "" and reason or nil)
end

--- Cancel the followed session's turn.
function M.cancel()
  require("tether.session").cancel()
end

--- Take back `turn` of the followed session (default: the last turn that changed files),
--- `what` of it: "files" (default; the person's edits since stay), "conversation" (the
--- model is no longer sent the turn and what followed) or "both".
---@param turn? integer
---@param what? "files"|"conversation"|"both"
function M.rewind(turn, what)
  require("tether.rewind").rewind(turn, what)
end

--- Open the transcript and move there.
function M.chat()
  require("tether.chat").open(true)
end

--- Pick a session of this workspace (with vim.ui.select) and follow it: the chat shows its
--- history, and the next ask continues it.
function M.sessions()
  require("tether.client").command("tether.sessions", vim.empty_dict(), function(err, result)
    if err then
      return vim.notify("tether: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    local sessions = result.sessions or {}
    if #sessions == 0 then
      return vim.notify("tether: no sessions yet", vim.log.levels.INFO)
    end
    local current = require("tether.session").id
    vim.ui.select(sessions, {
      prompt = "tether session",
      kind = "tether_session",
      format_item = function(info)
        local status = (info.status or ""):gsub("_", " ")
        local title = (info.title or ""):gsub("\n", " ")
        local mark = info.id == current and "* " or "  "
        return ("%s%s  %s  (%s, %s)"):format(mark, info.id, title, status, info.updated or "")
      end,
    }, function(choice)
      if choice then
        require("tether.chat").open(false)
        require("tether.session").open(choice.id)
      end
    end)
  end)
end

---@param n integer
---@return string
local function tokens(n)
  if n >= 1e6 then
    return ("%.1fM"):format(n / 1e6)
  elseif n >= 1e4 then
    return ("%dk"):format(math.floor(n / 1e3 + 0.5))
  elseif n >= 1e3 then
    return ("%.1fk"):format(n / 1e3)
  end
  return tostring(n)
end

--- A statusline component: the followed session's state, how much of the model's context
--- window its last request used, and the tokens it has sent and received. Empty before the
--- first turn. E.g. `tether running · ctx 12k/128k (9%) · 45k tok`.
---@return string
function M.statusline()
  local session = package.loaded["tether.session"]
  if not (session and session.id) and not (session and session.running) then
    return ""
  end
  local parts = { "tether" }
  if session.running then
    parts[1] = "tether running"
  elseif next(session.pending) then
    parts[1] = "tether awaiting approval"
  end
  local usage = session.id and session.usage[session.id]
  if usage then
    if usage.context and usage.window and usage.window > 0 then
      local percent = math.floor(usage.context * 100 / usage.window + 0.5)
      parts[#parts + 1] = ("ctx %s/%s (%d%%)"):format(
        tokens(usage.context),
        tokens(usage.window),
        percent
      )
    elseif usage.context then
      parts[#parts + 1] = "ctx " .. tokens(usage.context)
    end
    parts[#parts + 1] = tokens(usage.input + usage.output) .. " tok"
  end
  return table.concat(parts, " · ")
end

return M
