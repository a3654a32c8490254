-- User commands only; everything else loads on first use. See :help tether-commands.
if vim.g.loaded_tether then
  return
end
vim.g.loaded_tether = true

local command = vim.api.nvim_create_user_command

command("TetherAsk", function(cmd)
  require("tether").ask(cmd.args, { new = cmd.bang })
end, { nargs = "*", bang = true, desc = "tether: ask (! starts a new session)" })

command("TetherApprove", function(cmd)
  require("tether").approve(cmd.args ~= "" and cmd.args or nil)
end, {
  nargs = "?",
  complete = function()
    return { "session", "workspace" }
  end,
  desc = "tether: allow the pending calls (and remember the rule for the session or workspace)",
})

command("TetherDeny", function(cmd)
  require("tether").deny(cmd.args)
end, { nargs = "*", desc = "tether: deny the pending calls, with an optional reason" })

command("TetherCancel", function()
  require("tether").cancel()
end, { desc = "tether: cancel the running turn" })

command("TetherRewind", function(cmd)
  local rewind = require("tether.rewind")
  local turn, what, err = rewind.parse(cmd.args)
  if err then
    return vim.notify("tether: " .. err, vim.log.levels.ERROR)
  end
  rewind.rewind(turn, what)
end, {
  nargs = "*",
  complete = function()
    return { "files", "conversation", "both" }
  end,
  desc = "tether: take a turn back ([turn] [files|conversation|both])",
})

command("TetherChat", function()
  require("tether").chat()
end, { desc = "tether: open the transcript" })

command("TetherSessions", function()
  require("tether").sessions()
end, { desc = "tether: pick a session to follow (its history shown in the chat)" })

-- <Plug> mappings to map keys to (see :help tether-mappings for suggested keys).
local function plug(name, rhs, desc)
  vim.keymap.set("n", "<Plug>(" .. name .. ")", rhs, { desc = "tether: " .. desc })
end
plug("TetherAsk", function()
  require("tether").ask()
end, "ask")
plug("TetherApprove", function()
  require("tether").approve()
end, "allow the pending calls")
plug("TetherDeny", function()
  require("tether").deny()
end, "deny the pending calls")
plug("TetherCancel", function()
  require("tether").cancel()
end, "cancel the running turn")
plug("TetherRewind", function()
  require("tether").rewind()
end, "take back the last turn that changed files")
plug("TetherChat", function()
  require("tether").chat()
end, "open the transcript")
plug("TetherSessions", function()
  require("tether").sessions()
end, "pick a session to follow")
