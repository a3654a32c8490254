-- A turn patches a.txt (allowed in the dialog, saved: the buffer had no changes of the
-- person's); :TetherRewind takes it back in the buffer, says so with vim.notify and in the
-- chat; a second rewind of the conversation names no file; a wrong argument sends nothing;
-- the session's history shows both rewinds.
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
T.setup()

local notes = {} ---@type { message: string, level: integer? }[]
local notify = vim.notify
vim.notify = function(message, level)
  table.insert(notes, { message = message, level = level })
  notify(message, level)
end

local function notified(text)
  for _, note in ipairs(notes) do
    if note.message:find(text, 1, true) then
      return note
    end
  end
end

T.run(function()
  require("tether.client").ensure()
  vim.cmd.edit("a.txt")
  local buf = vim.api.nvim_get_current_buf()
  T.answers = { "Allow" }
  vim.cmd("TetherAsk change a.txt")
  T.wait_chat("*done*")
  T.expect(T.buffer_text(buf) == "two", "patched: " .. T.buffer_text(buf))

  vim.cmd("TetherRewind nonsense")
  T.expect(notified("not a turn nor one of files"), vim.inspect(notes))

  vim.cmd("TetherRewind")
  T.wait_chat("*rewound turn 1 (files): restored a.txt.*")
  T.wait_for("the notification", function()
    return notified("tether: rewound turn 1 (files): restored a.txt.") ~= nil
  end)
  T.expect(T.buffer_text(buf) == "one", "rewound in the buffer: " .. T.buffer_text(buf))
  T.expect(not vim.bo[buf].modified, "and saved, like a patch")

  vim.cmd("TetherRewind 1 conversation")
  T.wait_chat("*rewound turn 1 (conversation): the model is no longer sent turn 1")
  T.expect(T.buffer_text(buf) == "one", "a conversation rewind leaves the files")

  -- The session shown again from its history: both rewinds, after the turn.
  local session = require("tether.session")
  local id = session.id
  session.follow(nil)
  T.expect(not T.chat_has("rewound"), "the chat started afresh")
  session.open(id)
  T.wait_chat("*rewound turn 1 (conversation)")
  local lines = table.concat(require("tether.chat").lines(), "\n")
  local patched, files = lines:find("patched", 1, true), lines:find("(files)", 1, true)
  T.expect(patched and files and patched < files, "in their place: " .. lines)
end)
