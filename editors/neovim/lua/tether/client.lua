-- The language client: start `tether serve` once, attach file buffers, send commands.
local M = {}

local NAME = "tether"
local has_011 = vim.fn.has("nvim-0.11") == 1

--- Handlers this plugin adds to the client (also used by `lsp/tether.lua`).
M.handlers = {
  ["tether/update"] = function(_, update)
    require("tether.session").on_update(update)
  end,
  -- Results of commands sent without a handler of ours (code actions): keep the state true.
  ["workspace/executeCommand"] = function(err, result)
    require("tether.session").on_result(err, result)
  end,
}

--- The server exited: a turn it ran is over. (Called in a fast event: schedule.)
function M.on_exit(code)
  vim.schedule(function()
    require("tether.session").on_exit(code)
  end)
end

local started ---@type integer? the client this plugin started (found before it initializes)

---@return vim.lsp.Client?
function M.get()
  return started and vim.lsp.get_client_by_id(started) or vim.lsp.get_clients({ name = NAME })[1]
end

local function root_dir(config)
  local root = config.root_dir
  if type(root) == "function" then
    root = root()
  end
  return root or vim.fs.root(vim.fn.getcwd(), { ".git" }) or vim.fn.getcwd()
end

---@param buf integer
function M.attach(buf)
  local client = M.get()
  local file = vim.bo[buf].buftype == "" and vim.api.nvim_buf_get_name(buf) ~= ""
  if client and file and vim.api.nvim_buf_is_loaded(buf) then
    vim.lsp.buf_attach_client(buf, client.id)
  end
end

local function watch()
  local group = vim.api.nvim_create_augroup("tether", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    desc = "tether: let the agent read unsaved buffers and edit them",
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd("LspProgress", {
    group = group,
    desc = "tether: show turn progress in the statusline (vim.lsp.status())",
    callback = function(args)
      if args.data.client_id == started then
        vim.cmd.redrawstatus()
      end
    end,
  })
end

--- The running client, started (and every loaded file buffer attached) when there is none.
---@return vim.lsp.Client?
function M.ensure()
  local client = M.get()
  if client then
    return client
  end
  local config = require("tether").config
  local lsp_config = {
    name = NAME,
    cmd = config.cmd,
    cmd_env = config.env,
    root_dir = root_dir(config),
    init_options = config.settings and { tether = config.settings } or nil,
    handlers = M.handlers,
    on_exit = M.on_exit,
  }
  if has_011 then
    started = vim.lsp.start(lsp_config, { attach = false })
  else
    started = vim.lsp.start_client(lsp_config) ---@diagnostic disable-line: deprecated
  end
  if not started then
    vim.notify("tether: could not start " .. table.concat(config.cmd, " "), vim.log.levels.ERROR)
    return nil
  end
  watch()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(buf)
  end
  return M.get()
end

--- Run `fn` once the server has answered `initialize` (no request may go before that).
local function when_ready(client, fn, waited)
  if client.initialized then
    return fn()
  end
  local exited = vim.lsp.get_client_by_id(client.id) == nil
  if exited or waited > 30000 then
    return vim.notify("tether: the server did not start", vim.log.levels.ERROR)
  end
  vim.defer_fn(function()
    when_ready(client, fn, waited + 25)
  end, 25)
end

--- Send `workspace/executeCommand` without blocking; `on_result(err, result)` gets the answer.
---@param name string
---@param argument table
---@param on_result? fun(err: lsp.ResponseError?, result: any)
function M.command(name, argument, on_result)
  local client = M.ensure()
  if not client then
    return
  end
  local params = { command = name, arguments = { argument } }
  local handler = on_result or function() end
  when_ready(client, function()
    if has_011 then
      client:request("workspace/executeCommand", params, handler)
    else
      client.request("workspace/executeCommand", params, handler) ---@diagnostic disable-line
    end
  end, 0)
end

return M
