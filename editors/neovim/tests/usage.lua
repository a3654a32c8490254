-- The statusline component shows the followed session's state, how much of the context
-- window it uses and its tokens, from the server's `usage` updates.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  local tether = require("tether")
  local seen, events = {}, 0
  vim.api.nvim_create_autocmd("User", {
    pattern = "TetherStatus",
    callback = function()
      events = events + 1
      table.insert(seen, tether.statusline())
    end,
  })
  T.expect(tether.statusline() == "", "nothing before the first turn")
  vim.cmd("TetherAsk count the tokens")
  T.wait_chat("*done*")
  local line = tether.statusline()
  local shape = line:match("^tether · ctx %d") and line:match("· [%d.]+[kM]? tok$")
  T.expect(shape, "statusline: " .. line)
  T.expect(vim.tbl_contains(seen, "tether running"), "the turn showed as running")
  local session = require("tether.session")
  local usage = session.usage[session.id]
  T.expect(usage.input > 0 and usage.output > 0, "tokens counted: " .. vim.inspect(usage))
  T.expect(events >= 2, "User TetherStatus fired")
end)
