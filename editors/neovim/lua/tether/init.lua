-- tether: an LLM coding agent hosted in a language server. See :help tether.
local M = {}

---@class tether.Config
---@field cmd string[] the server command
---@field env? table<string, string> extra environment for the server
---@field settings? table sent as initializationOptions `{ tether = settings }`
---@field root_dir? string|fun(): string the workspace (default: the cwd's git root, or the cwd)
M.config = {
  cmd = { "tether", "serve" },
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

--- Open the transcript and move there.
function M.chat()
  require("tether.chat").open(true)
end

return M
