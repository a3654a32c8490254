-- Shared by the headless scenarios (`nvim --headless -u <scenario>.lua`, driven by
-- tests/editors/test_neovim.py). A scenario exits 0 when it passes and non-zero (`cq`) when
-- an expectation fails, an error is raised, or it runs past its time limit.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)")
local plugin = vim.fn.fnamemodify(here .. "..", ":p")
vim.opt.runtimepath:prepend(plugin)
vim.g.loaded_python3_provider = 0 -- ftplugin/python.vim would probe it: about 1 s

local T = {
  dialogs = {}, ---@type string[] the prompts vim.ui.select was shown
  answers = {}, ---@type string[] titles to choose, in order; none left: dismiss
  ---@type { prompt: string, kind: string?, items: table[], previews: string[][] }[]
  selects = {}, -- every vim.ui.select call, with the preview floats open at that moment
}

local function log(...)
  io.stderr:write(table.concat({ ... }, " "), "\n")
end

local function fail(message, code)
  log("FAILED:", message)
  log("chat:\n" .. table.concat(require("tether.chat").lines(), "\n"))
  vim.cmd.cquit(code or 1)
end

--- The plugin, set up against the server and provider stub that pytest started.
function T.setup(opts)
  require("tether").setup(vim.tbl_extend("force", {
    cmd = { vim.env.TETHER_NVIM_PYTHON, "-m", "tether", "serve" },
    env = { TETHER_BASE_URL = vim.env.TETHER_NVIM_STUB_URL },
  }, opts or {}))
end

vim.notify = function(message, level)
  log("notify:", tostring(level), message)
end

--- The lines of the floating windows open now.
function T.floats()
  local floats = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      local buf = vim.api.nvim_win_get_buf(win)
      table.insert(floats, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    end
  end
  return floats
end

-- The server's approval dialog arrives here (the plugin's showMessageRequest handler), and
-- so do code action pickers: answered with the next of T.answers (a title or a prefix).
vim.ui.select = function(items, opts, on_choice)
  table.insert(
    T.selects,
    { prompt = opts.prompt, kind = opts.kind, items = items, previews = T.floats() }
  )
  if opts.kind == "codeaction" then
    local answer = table.remove(T.answers, 1)
    for i, item in ipairs(items) do
      if answer and vim.startswith(item.action.title, answer) then
        return on_choice(item, i)
      end
    end
    return on_choice(nil, nil)
  end
  table.insert(T.dialogs, opts.prompt)
  local answer = table.remove(T.answers, 1)
  for i, item in ipairs(items) do
    if item.title == answer then
      return on_choice(item, i)
    end
  end
  on_choice(nil, nil)
end

function T.expect(condition, message)
  if not condition then
    error(message, 2)
  end
end

--- Wait (processing events) until `predicate()` holds, or fail naming `what`.
function T.wait_for(what, predicate, timeout_ms)
  if not vim.wait(timeout_ms or 15000, predicate, 10) then
    error("timed out waiting for " .. what, 2)
  end
end

--- Does a line of the chat contain `text` (plain)?
function T.chat_has(text)
  for _, line in ipairs(require("tether.chat").lines()) do
    if line:find(text, 1, true) then
      return true
    end
  end
  return false
end

function T.wait_chat(text, timeout_ms)
  T.wait_for("the chat to show " .. vim.inspect(text), function()
    return T.chat_has(text)
  end, timeout_ms)
end

function T.buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf or 0, 0, -1, false), "\n")
end

--- Run `body` once Neovim has started; quit with its outcome, within `limit_ms`.
function T.run(body, limit_ms)
  vim.api.nvim_create_autocmd("VimEnter", {
    once = true,
    nested = true, -- so that :edit in a scenario fires BufReadPost, FileType, ...
    callback = function()
      vim.defer_fn(function()
        fail("the scenario ran past its time limit", 2)
      end, limit_ms or 30000)
      local ok, err = xpcall(body, debug.traceback)
      if not ok then
        fail(err)
      end
      log("chat:\n" .. table.concat(require("tether.chat").lines(), "\n"))
      vim.cmd("qall!")
    end,
  })
end

return T
