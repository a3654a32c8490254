-- Finding the server: an explicit command, else `tether` on PATH, else the workspace's
-- `.venv/bin/tether` (`.venv\Scripts\tether.exe` on Windows).
local M = {}

local windows = vim.fn.has("win32") == 1

--- The workspace of a buffer or the cwd: the git root above it, or the directory itself.
---@param from? string a file or directory (default: the cwd)
---@return string
function M.workspace(from)
  local start = from and from ~= "" and from or vim.fn.getcwd()
  return vim.fs.root(start, { ".git" }) or start
end

--- The `tether` a workspace's own virtual environment holds, if it holds one.
---@param root string
---@return string?
function M.venv_tether(root)
  local path = windows and vim.fs.joinpath(root, ".venv", "Scripts", "tether.exe")
    or vim.fs.joinpath(root, ".venv", "bin", "tether")
  return vim.fn.executable(path) == 1 and path or nil
end

---@class tether.Found
---@field cmd string[]? the command that starts `tether serve`; nil when none was found
---@field how "explicit"|"PATH"|"venv"|nil where it came from
---@field looked string[] where it was looked for (for messages)

--- The command that starts the server for workspace `root`: `explicit` when given, else
--- `tether serve` when `tether` is on PATH, else the workspace's `.venv` tether.
---@param explicit string[]?
---@param root string?
---@return tether.Found
function M.find(explicit, root)
  if explicit then
    return { cmd = explicit, how = "explicit", looked = {} }
  end
  if vim.fn.executable("tether") == 1 then
    return { cmd = { "tether", "serve" }, how = "PATH", looked = {} }
  end
  root = root or M.workspace()
  local venv = M.venv_tether(root)
  if venv then
    return { cmd = { venv, "serve" }, how = "venv", looked = {} }
  end
  local where = windows and ".venv\\Scripts\\tether.exe" or ".venv/bin/tether"
  return { looked = { "`tether` on PATH", ("%s in %s"):format(where, root) } }
end

--- The source tree this plugin came from, when it sits inside a tether checkout
--- (editors/neovim of it): what `pipx install` can be pointed at.
---@return string?
function M.source_tree()
  local here = debug.getinfo(1, "S").source:sub(2) -- .../editors/neovim/lua/tether/server.lua
  local root = vim.fn.fnamemodify(here, ":p:h:h:h:h:h")
  local pyproject = vim.fs.joinpath(root, "pyproject.toml")
  if vim.fn.filereadable(pyproject) == 1 then
    for _, line in ipairs(vim.fn.readfile(pyproject, "", 40)) do
      if line:match('^name%s*=%s*"tether') then
        return root
      end
    end
  end
  return nil
end

--- How to install the server so that the plugin finds it (lines of advice).
---@return string[]
function M.advice()
  local tree = M.source_tree() or "/path/to/tether"
  return {
    ("install it so that `tether` is on PATH: `pipx install %s` or `uv tool install %s`"):format(
      tree,
      tree
    ) .. " (the distribution is tether-lsp; the command is `tether`)",
    "or install it into the workspace's .venv (`.venv/bin/pip install " .. tree .. "`)",
    "or name the command: require('tether').setup({ cmd = { '/path/to/tether', 'serve' } })"
      .. ", or vim.lsp.config('tether', { cmd = { ... } })",
  }
end

return M
