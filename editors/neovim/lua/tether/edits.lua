-- Patches land in buffers through Neovim's own `workspace/applyEdit` handler (so `u` takes
-- them back); a buffer that had no unsaved change of the person's is then saved, so that a
-- command the model runs next sees the patched file (contract v2, Approval). After a command,
-- buffers whose files it changed are read again, so that the agent's reads see its effects.
local M = {}

--- The loaded buffers a WorkspaceEdit touches, by URI.
---@param edit lsp.WorkspaceEdit
---@return integer[]
local function touched(edit)
  local uris = {}
  for uri in pairs(edit.changes or {}) do
    uris[#uris + 1] = uri
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      uris[#uris + 1] = change.textDocument.uri
    end
  end
  local by_name = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      by_name[vim.api.nvim_buf_get_name(buf)] = buf
    end
  end
  local bufs = {}
  for _, uri in ipairs(uris) do
    bufs[#bufs + 1] = by_name[vim.uri_to_fname(uri)]
  end
  return bufs
end

--- Tell the server about the buffer's text now, not after the change debounce: the answer
--- to `workspace/applyEdit` goes out next, and the server may look at the text right then.
local function flush(client, buf)
  local ok, changetracking = pcall(require, "vim.lsp._changetracking")
  if ok and client and changetracking.flush then
    pcall(changetracking.flush, client, buf)
  end
end

--- Write `buf` as the person would with :write; false (and a warning) when that fails.
---@param buf integer
---@return boolean
function M.save(buf)
  local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
    vim.cmd("silent keepalt keepjumps write")
  end)
  if not ok then
    vim.notify(
      ("tether: could not save %s after the patch: %s"):format(vim.api.nvim_buf_get_name(buf), err),
      vim.log.levels.WARN
    )
  end
  return ok
end

--- Save each of `bufs` that the edit left modified, then send its text to the server.
local function save_all(bufs, client)
  for _, buf in ipairs(bufs) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      M.save(buf)
    end
    flush(client, buf)
  end
end

--- The `workspace/applyEdit` handler of tether's client: Neovim's own, then the save.
function M.apply(err, params, ctx)
  local clean = {}
  for _, buf in ipairs(params and params.edit and touched(params.edit) or {}) do
    if not vim.bo[buf].modified then
      clean[#clean + 1] = buf
    end
  end
  local result = vim.lsp.handlers["workspace/applyEdit"](err, params, ctx)
  if type(result) == "table" and result.applied then
    save_all(clean, vim.lsp.get_client_by_id(ctx.client_id))
  end
  return result
end

-- Buffers with nothing unsaved when a code action was last asked for (by changedtick).
local clean_at_code_action = {} ---@type table<integer, integer>

--- A code action was asked for in `buf`: note whether it had unsaved changes then.
---@param buf integer?
function M.code_action_asked(buf)
  if buf and vim.api.nvim_buf_is_loaded(buf) then
    clean_at_code_action[buf] = not vim.bo[buf].modified and vim.b[buf].changedtick or nil
  end
end

--- The person applied a waiting patch to `buf` from its code action (Neovim applied the
--- edit just before): save it when it had nothing unsaved when the actions were asked for.
---@param buf integer?
---@param client vim.lsp.Client?
function M.applied_from_code_action(buf, client)
  if not (buf and vim.api.nvim_buf_is_loaded(buf)) then
    return
  end
  if clean_at_code_action[buf] then
    save_all({ buf }, client)
  else
    flush(client, buf)
  end
  clean_at_code_action[buf] = nil
end

--- A command ran: file buffers with no unsaved changes whose files it changed are read
--- again (where 'autoread' is on, as Neovim would on focus), so that the agent's next read
--- sees what the command did to them, not the text from before it.
function M.command_ran()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local file = vim.api.nvim_buf_is_loaded(buf)
      and vim.bo[buf].buftype == ""
      and vim.api.nvim_buf_get_name(buf) ~= ""
    if file and not vim.bo[buf].modified then
      local autoread = vim.api.nvim_buf_call(buf, function()
        return vim.o.autoread
      end)
      if autoread then
        pcall(vim.cmd.checktime, buf)
      end
    end
  end
end

return M
