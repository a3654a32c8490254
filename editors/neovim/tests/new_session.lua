-- A new session's id comes from the answer to tether.run (`wait: false`), not from whichever
-- session speaks first: two new sessions asked for at once, the chat follows the second
-- one asked for, and shows nothing of the first, though the first may speak first. The
-- answer comes at once: the chat names the session while its first turn still runs.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

local function history(id)
  local client = require("tether.client").get()
  local params = { command = "tether.history", arguments = { { session = id } } }
  local reply = client:request_sync("workspace/executeCommand", params, 5000)
  T.expect(reply and reply.result, "the history of " .. id .. ": " .. vim.inspect(reply))
  return reply.result.messages
end

T.run(function()
  local session = require("tether.session")
  vim.cmd("TetherAsk! one")
  vim.cmd("TetherAsk! two")
  T.wait_for("the answer to name the session", function()
    return session.id ~= nil
  end)
  T.expect(session.running and not T.chat_has("*done*"), "named while the turn runs")
  T.expect(T.chat_has("# tether session " .. session.id), "the header names it at once")
  T.wait_for("the second session's turn to end", function()
    return session.id ~= nil and not session.running and T.chat_has("*done*")
  end)
  T.expect(T.chat_has("# tether session " .. session.id), "the header names the session")
  local chat = require("tether.chat")
  T.expect(not vim.tbl_contains(chat.lines(), "one"), "nothing of the first session is shown")

  local messages = history(session.id)
  T.expect(messages[1].role == "user" and messages[1].content == "two", vim.inspect(messages))
  local answer = messages[#messages].content
  T.expect(T.chat_has(answer), "the chat shows that session's answer: " .. answer)
  local other = answer == "first answer" and "second answer" or "first answer"
  T.expect(not T.chat_has(other), "and not the other's")
end)
