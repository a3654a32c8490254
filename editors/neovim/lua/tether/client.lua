-- The language client: start `tether serve` once, attach file buffers, send commands.
local M = {}

local NAME = "tether"
local has_011 = vim.fn.has("nvim-0.11") == 1

--- `value` with JSON nulls (vim.NIL: some Neovim versions decode them so) made nil.
---@generic T
---@param value T
---@return T
function M.nonull(value)
  if value == vim.NIL then
    return nil
  elseif type(value) == "table" then
    for key, item in pairs(value) do
      value[key] = M.nonull(item)
    end
  end
  return value
end

--- Handlers this plugin adds to the client (also used by `lsp/tether.lua`).
M.handlers = {
  ["tether/update"] = function(_, update)
    require("tether.session").on_update(M.nonull(update))
  end,
  -- Results of turn commands sent some other way (a code action from an older config).
  ["workspace/executeCommand"] = function(err, result)
    require("tether.session").on_result(err, M.nonull(result))
  end,
  -- A patch lands through Neovim's own handler, and is saved where nothing else was unsaved.
  ["workspace/applyEdit"] = function(err, params, ctx)
    return require("tether.edits").apply(err, params, ctx)
  end,
  -- The approval dialog: the whole message as the prompt, a diff coloured beside it.
  ["window/showMessageRequest"] = function(err, params, ctx)
    return require("tether.dialog").show(err, params, ctx)
  end,
}

--- Client-side handlers of the server's commands that code actions carry: they decide a
--- parked call through the plugin, so that the turn runs on with `wait: false` and the chat
--- knows (see tether.session.decide).
M.commands = {}
for _, name in ipairs({ "tether.approve", "tether.deny", "tether.applied" }) do
  M.commands[name] = function(command, ctx)
    require("tether.session").decide(name, (command.arguments or {})[1] or {}, ctx)
  end
end

--- Client capabilities: Neovim's own, with `additionalPropertiesSupport` on dialog actions
--- (tether then puts the call's id on each of them).
---@return lsp.ClientCapabilities
function M.capabilities()
  return vim.tbl_deep_extend("force", vim.lsp.protocol.make_client_capabilities(), {
    window = { showMessage = { messageActionItem = { additionalPropertiesSupport = true } } },
  })
end

--- The server exited: a turn it ran is over. (Called in a fast event: schedule.)
function M.on_exit(code)
  vim.schedule(function()
    require("tether.session").on_exit(code)
  end)
end

--- A `cmd` for vim.lsp.config (lsp/tether.lua): finds the server for the client's workspace
--- when it starts (tether on PATH, else the workspace's .venv).
---@param dispatchers vim.lsp.rpc.Dispatchers
---@param config? vim.lsp.ClientConfig (Neovim 0.11.2+ passes it)
function M.lsp_config_cmd(dispatchers, config)
  config = config or vim.lsp.config[NAME] or {}
  local root = config.root_dir
  local found = require("tether.server").find(nil, type(root) == "string" and root or nil)
  if not found.cmd then
    local message = "tether: no server found (looked for " .. table.concat(found.looked, ", ")
    error(message .. "); see :checkhealth tether")
  end
  return vim.lsp.rpc.start(found.cmd, dispatchers, {
    cwd = config.cmd_cwd,
    env = config.cmd_env,
    detached = config.detached,
  })
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
  return root or require("tether.server").workspace()
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
end

-- Progress (and the status it shows) redraws the statusline; a code action request notes
-- which buffers had nothing unsaved (for saving a patch applied from it).
local function watch_any()
  local group = vim.api.nvim_create_augroup("tether.any", { clear = true })
  vim.api.nvim_create_autocmd("LspProgress", {
    group = group,
    desc = "tether: show turn progress in the statusline (vim.lsp.status())",
    callback = function(args)
      local client = M.get()
      if client and args.data.client_id == client.id then
        vim.cmd.redrawstatus({ bang = true })
      end
    end,
  })
  vim.api.nvim_create_autocmd("LspRequest", {
    group = group,
    desc = "tether: note what a code action may patch, to save it and preview it",
    callback = function(args)
      local client, request = M.get(), args.data.request
      if client and args.data.client_id == client.id and request.type == "pending" then
        if request.method == "textDocument/codeAction" then
          require("tether.edits").code_action_asked(request.bufnr)
          require("tether.preview").code_action_asked()
        end
      end
    end,
  })
end
watch_any()

--- The running client, or else start one (and attach every loaded file buffer).
---@return vim.lsp.Client? client
---@return string? why there is none
local function start()
  local client = M.get()
  if client then
    return client
  end
  local config = require("tether").config
  local root = root_dir(config)
  local found = require("tether.server").find(config.cmd, root)
  if not found.cmd then
    local looked = table.concat(found.looked, ", ")
    return nil, ("no server found (looked for %s); see :checkhealth tether"):format(looked)
  end
  local lsp_config = {
    name = NAME,
    cmd = found.cmd,
    cmd_env = config.env,
    root_dir = root,
    init_options = config.settings and { tether = config.settings } or nil,
    capabilities = M.capabilities(),
    handlers = M.handlers,
    commands = M.commands,
    on_exit = M.on_exit,
  }
  local ok, id
  if has_011 then
    ok, id = pcall(vim.lsp.start, lsp_config, { attach = false })
  else
    ok, id = pcall(vim.lsp.start_client, lsp_config) ---@diagnostic disable-line: deprecated
  end
  started = ok and id or nil
  if not started then
    return nil, ("could not start `%s`; see :checkhealth tether"):format(
      table.concat(found.cmd, " ")
    )
  end
  watch()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(buf)
  end
  return M.get()
end

--- The running client, started (and every loaded file buffer attached) when there is none;
--- nil, and an error shown, when it cannot start.
---@return vim.lsp.Client?
function M.ensure()
  local client, why = start()
  if not client then
    vim.notify("tether: " .. why, vim.log.levels.ERROR)
  end
  return client
end

--- Run `fn` once the server has answered `initialize` (no request may go before that);
--- `failed(why)` when it exits first or takes over 30 s.
local function when_ready(client, fn, failed, waited)
  if client.initialized then
    return fn()
  end
  if vim.lsp.get_client_by_id(client.id) == nil then
    return failed("the server exited as it started; see :checkhealth tether and :LspLog")
  elseif waited > 30000 then
    return failed("the server did not answer `initialize` within 30 s; see :LspLog")
  end
  vim.defer_fn(function()
    when_ready(client, fn, failed, waited + 25)
  end, 25)
end

--- Send `workspace/executeCommand` without blocking; `on_result(err, result)` gets the answer,
--- or an error when the server cannot start (without `on_result`, an error is shown).
---@param name string
---@param argument table
---@param on_result? fun(err: lsp.ResponseError?, result: any)
function M.command(name, argument, on_result)
  local function handler(err, result)
    if on_result then
      return on_result(err, M.nonull(result))
    elseif err then
      vim.notify("tether: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
  end
  local function failed(why)
    handler({ code = vim.lsp.protocol.ErrorCodes.InternalError, message = why })
  end
  local client, why = start()
  if not client then
    return failed(why)
  end
  local params = { command = name, arguments = { argument } }
  when_ready(client, function()
    if has_011 then
      client:request("workspace/executeCommand", params, handler)
    else
      client.request("workspace/executeCommand", params, handler) ---@diagnostic disable-line
    end
  end, failed, 0)
end

return M
