-- A diff shown coloured in a floating window beside a picker: the approval dialog of a patch,
-- and the `Apply patch` code action (whatever picker vim.ui.select is).
local M = {}

local ns = vim.api.nvim_create_namespace("tether.preview")

vim.api.nvim_set_hl(0, "TetherDiffAdd", { default = true, link = "Added" })
vim.api.nvim_set_hl(0, "TetherDiffDelete", { default = true, link = "Removed" })
vim.api.nvim_set_hl(0, "TetherDiffHunk", { default = true, link = "Changed" })
vim.api.nvim_set_hl(0, "TetherDiffHeader", { default = true, link = "Title" })

--- The highlight group of one line of a unified diff, if it has one.
---@param line string
---@return string?
local function diff_group(line)
  if line:match("^%+%+%+ ") or line:match("^%-%-%- ") or line:match("^diff ") then
    return "TetherDiffHeader"
  elseif line:match("^@@") then
    return "TetherDiffHunk"
  elseif line:match("^%+") then
    return "TetherDiffAdd"
  elseif line:match("^%-") then
    return "TetherDiffDelete"
  end
end

--- Does `text` hold a unified diff (a hunk header)?
---@param text string
---@return boolean
function M.has_diff(text)
  return text:find("\n@@ ", 1, true) ~= nil or vim.startswith(text, "@@ ")
end

---@class tether.Preview
---@field win integer
---@field buf integer

--- Show `lines` in a float at the top right, diff lines coloured; `title` names it.
---@param lines string[]
---@param title string
---@return tether.Preview?
function M.open(lines, title)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local in_diff = false
  for row, line in ipairs(lines) do
    in_diff = in_diff or line:match("^@@") ~= nil or line:match("^%-%-%- ") ~= nil
    local group = in_diff and diff_group(line)
    if group then
      vim.api.nvim_buf_set_extmark(buf, ns, row - 1, 0, { line_hl_group = group })
    end
  end
  vim.bo[buf].modifiable, vim.bo[buf].bufhidden = false, "wipe"
  vim.b[buf].tether_preview = true
  local width = 20
  for _, line in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(line))
  end
  width = math.min(width + 1, math.max(20, vim.o.columns - 4))
  local height = math.min(#lines, math.max(3, math.floor(vim.o.lines / 2)))
  local ok, win = pcall(vim.api.nvim_open_win, buf, false, {
    relative = "editor",
    row = 1,
    col = math.max(0, vim.o.columns - width - 2),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    title = " " .. title .. " ",
    title_pos = "center",
    focusable = false,
    zindex = 60,
  })
  if not ok then
    vim.api.nvim_buf_delete(buf, { force = true })
    return nil
  end
  vim.wo[win].wrap = false
  pcall(vim.cmd.redraw) -- a picker that blocks (inputlist) would hide it otherwise
  return { win = win, buf = buf }
end

---@param preview tether.Preview?
function M.close(preview)
  if preview and vim.api.nvim_win_is_valid(preview.win) then
    vim.api.nvim_win_close(preview.win, true)
  end
end

--- The windows of open previews (for tests and scripts).
---@return integer[]
function M.windows()
  return vim.tbl_filter(function(win)
    local buf = vim.api.nvim_win_get_buf(win)
    return vim.b[buf].tether_preview == true
  end, vim.api.nvim_list_wins())
end

--- The unified diff of `buf` against the text an LSP WorkspaceEdit makes of it.
---@param buf integer
---@param edit lsp.WorkspaceEdit
---@param encoding string the client's offset encoding
---@return string[]? lines of the diff; nil when the edit does not touch `buf`
local function diff_of(buf, edit, encoding)
  local uri = vim.uri_from_bufnr(buf)
  local edits = (edit.changes or {})[uri]
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and change.textDocument.uri == uri then
      edits = change.edits
    end
  end
  if not edits then
    return nil
  end
  local before = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local scratch = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(scratch, 0, -1, false, before)
  local ok = pcall(vim.lsp.util.apply_text_edits, edits, scratch, encoding)
  local after = vim.api.nvim_buf_get_lines(scratch, 0, -1, false)
  vim.api.nvim_buf_delete(scratch, { force = true })
  if not ok then
    return nil
  end
  local diff = vim.diff(table.concat(before, "\n") .. "\n", table.concat(after, "\n") .. "\n", {
    result_type = "unified",
    ctxlen = 3,
  }) --[[@as string]]
  local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":.")
  local lines = { "--- " .. name, "+++ " .. name }
  vim.list_extend(lines, vim.split(vim.trim(diff), "\n", { plain = true }))
  return lines
end

local waiting ---@type fun(items: any[], opts: table, on_choice: fun(item: any?, idx: integer?))?

--- A code action was asked of tether's client: when the picker for it shows a tether
--- `Apply patch` action, show that patch's diff beside it. Wraps whatever vim.ui.select is
--- for that one call (it unwraps itself on its first call, of any kind).
function M.code_action_asked()
  if waiting and vim.ui.select == waiting then
    return
  end
  local select = vim.ui.select
  local function wrapper(items, opts, on_choice)
    if vim.ui.select == wrapper then
      vim.ui.select = select
    end
    waiting = nil
    local preview = (opts or {}).kind == "codeaction" and M.for_code_actions(items) or nil
    if not preview then
      return select(items, opts, on_choice)
    end
    return select(items, opts, function(...)
      M.close(preview)
      on_choice(...)
    end)
  end
  waiting, vim.ui.select = wrapper, wrapper
end

--- The preview of the first tether `Apply patch` action among code action picker items.
---@param items { action: lsp.CodeAction, ctx: lsp.HandlerContext }[]
---@return tether.Preview?
function M.for_code_actions(items)
  for _, item in ipairs(items or {}) do
    local action, ctx = item.action or {}, item.ctx or {}
    local client = ctx.client_id and vim.lsp.get_client_by_id(ctx.client_id)
    if
      client
      and client.name == "tether"
      and type(action.title) == "string"
      and vim.startswith(action.title, "Apply patch: ")
      and action.edit
    then
      local lines = diff_of(ctx.bufnr or 0, action.edit, client.offset_encoding or "utf-16")
      if lines then
        return M.open(lines, "tether: " .. action.title)
      end
    end
  end
  return nil
end

return M
