-- :TetherSessions lists the workspace's sessions; the one picked is followed, its history
-- shown in the chat, and the next ask continues it.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

T.run(function()
  local session = require("tether.session")
  vim.cmd("TetherAsk first question")
  T.wait_chat("*done*")
  local first = session.id
  vim.cmd("TetherAsk! second question")
  T.wait_for("the second session's answer", function()
    return session.id ~= first and not session.running and T.chat_has("*done*")
  end)

  local listed
  vim.ui.select = function(items, opts, on_choice)
    T.expect(opts.kind == "tether_session", "kind: " .. tostring(opts.kind))
    listed = vim.tbl_map(opts.format_item, items)
    for i, item in ipairs(items) do
      if item.id == first then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  vim.cmd("TetherSessions")
  T.wait_chat("first answer")
  T.expect(#listed == 2, "both sessions listed: " .. vim.inspect(listed))
  local shown = vim.iter(listed):any(function(line)
    return line:find("^%* " .. session.id) == nil and line:find(first, 1, true) ~= nil
  end)
  T.expect(shown, "listed by id: " .. vim.inspect(listed))
  T.expect(session.id == first, "the picked session is followed")
  T.expect(T.chat_has("# tether session " .. first), "the header names it")
  T.expect(T.chat_has("first question"), "its prompt is shown")
  T.expect(not T.chat_has("second"), "nothing of the other session")
  local tokens = require("tether").statusline():match("· ([%d.]+k?) tok$")
  T.expect(tokens and tokens ~= "0", "its tokens so far: " .. require("tether").statusline())

  vim.cmd("TetherAsk third question")
  T.wait_chat("third answer")
end)
