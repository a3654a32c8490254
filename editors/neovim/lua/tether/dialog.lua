-- The server's dialog (`window/showMessageRequest`): through vim.ui.select, with the whole
-- message as the prompt (Neovim's own handler adds ": " after it), and a patch's diff shown
-- coloured beside the picker. Each action carries the call's id (the client advertises
-- additionalPropertiesSupport): the chat marks the call being asked about, and a preview
-- left over from a call decided some other way is closed.
local M = {}

local open = {} ---@type table<string, tether.Preview|false> the dialogs shown, by call id

---@param action lsp.MessageActionItem
local function title(action)
  return (action.title:gsub("\r?\n", " "))
end

---@param message string
---@return string
local function preview_title(message)
  local head = vim.split(message, "\n", { plain = true })[1]
  return (head:gsub("^tether wants to run ", "tether: "))
end

--- The call a dialog asks about: the `call_id` its actions carry.
---@param actions lsp.MessageActionItem[]
---@return string?
local function call_of(actions)
  for _, action in ipairs(actions) do
    if type(action.call_id) == "string" then
      return action.call_id
    end
  end
end

--- The handler (runs in a coroutine: Neovim 0.11 runs server requests so).
function M.show(err, params, ctx)
  local co, is_main = coroutine.running()
  if not co or is_main then -- no coroutine to wait in: Neovim's own handler asks
    return vim.lsp.handlers["window/showMessageRequest"](err, params, ctx)
  end
  local actions = params.actions or {}
  local message = params.message or ""
  local call = call_of(actions)
  local preview = require("tether.preview").has_diff(message)
      and require("tether.preview").open(
        vim.split(message, "\n", { plain = true }),
        preview_title(message)
      )
    or nil
  if call then
    open[call] = preview or false
    require("tether.chat").asking(call, true)
  end
  local answered = false
  vim.ui.select(actions, {
    prompt = message,
    kind = vim.startswith(message, "tether wants to run ") and "tether_approval" or "tether",
    format_item = title,
  }, function(choice)
    if answered then
      return
    end
    answered = true
    -- scheduled, so that a picker that answers at once (inputlist) resumes after the yield
    vim.schedule(function()
      M.settled(call)
      require("tether.preview").close(preview)
      coroutine.resume(co, choice or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

--- The call was decided (here or elsewhere): its dialog's preview and mark go.
---@param call string?
function M.settled(call)
  if call and open[call] ~= nil then
    require("tether.preview").close(open[call] or nil)
    open[call] = nil
    require("tether.chat").asking(call, false)
  end
end

return M
