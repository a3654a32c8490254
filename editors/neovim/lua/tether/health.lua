-- :checkhealth tether: the server command, its version, what `tether doctor` finds (the
-- settings and the command sandbox's probe), each MCP server's live state and tool count
-- (asked of the running server), the provider reachable.
local M = {}

local health = vim.health

--- The provider address the server will use, resolved as its config does (README:
--- Configuration): settings, then TETHER_BASE_URL, then the kind's default.
local function provider_url(config)
  local provider = (config.settings or {}).provider or {}
  local function env(name)
    local value = (config.env or {})[name] or vim.env[name]
    return value ~= "" and value or nil
  end
  local url = provider.base_url or env("TETHER_BASE_URL")
  if url then
    return url
  end
  local key = provider.api_key or env("TETHER_API_KEY")
  local kind = provider.kind or env("TETHER_PROVIDER")
  if not kind and not key and env("ANTHROPIC_API_KEY") and not env("OPENAI_API_KEY") then
    kind = "anthropic"
  end
  if kind == "anthropic" then
    return "https://api.anthropic.com"
  end
  return (key or env("OPENAI_API_KEY")) and "https://api.openai.com/v1"
    or "http://127.0.0.1:11434/v1"
end

--- Open a TCP connection to the URL's host and port; nil when it connects, else why not.
local function unreachable(url)
  local scheme, authority = url:match("^(%a+)://([^/]+)")
  local host, port = (authority or ""):match("^%[(.+)%]:?(%d*)$") -- [IPv6]:port
  if not host then
    host, port = (authority or ""):match("^([^:]+):?(%d*)$")
  end
  if not host then
    return "not a URL"
  end
  port = tonumber(port) or (scheme == "https" and 443 or 80)
  local found, lookup_err = vim.uv.getaddrinfo(host, nil, { socktype = "stream" })
  if not found or not found[1] then
    return "cannot resolve " .. host .. ": " .. tostring(lookup_err)
  end
  local tcp, outcome = vim.uv.new_tcp(), nil
  tcp:connect(found[1].addr, port, function(err)
    outcome = err or false
  end)
  vim.wait(3000, function()
    return outcome ~= nil
  end, 20)
  tcp:close()
  if outcome == nil then
    return "no answer within 3 s"
  end
  return outcome or nil
end

--- Which configuration starts the client: vim.lsp.config("tether") when it is enabled,
--- else the plugin's setup(). Each as { name, cmd (explicit or nil), env, settings }.
local function route()
  local enabled = vim.lsp.is_enabled and vim.lsp.is_enabled("tether")
  if enabled then
    local config = vim.lsp.config["tether"] or {}
    return {
      name = 'vim.lsp.config("tether") + vim.lsp.enable("tether")',
      cmd = type(config.cmd) == "table" and config.cmd or nil,
      env = config.cmd_env,
      settings = (config.init_options or {}).tether,
    }
  end
  local config = require("tether").config
  return {
    name = "require('tether').setup()" .. (require("tether").configured and "" or " defaults"),
    cmd = config.cmd,
    env = config.env,
    settings = config.settings,
  }
end

--- The server command without `serve` and what follows it: the same executable, for its
--- other subcommands.
local function base_command(cmd)
  local base = {}
  for _, arg in ipairs(cmd) do
    if arg == "serve" then
      break
    end
    base[#base + 1] = arg
  end
  return base
end

local DOCTOR_TIMEOUT_MS = 15000

--- How to report one line of `tether doctor`: a health function and its advice.
---@param line string
---@return fun(msg: string, advice?: string[]), string[]?
local function judge(line)
  if vim.startswith(line, "sandbox: on") then
    return health.ok
  elseif vim.startswith(line, "sandbox: NOT USED (sandbox.mode = off)") then
    return health.info -- the person's choice
  elseif vim.startswith(line, "sandbox: NOT USED") then
    return health.warn,
      {
        "commands run unsandboxed, with your rights, and each one asks",
        "install bubblewrap (Debian/Ubuntu: apt install bubblewrap) or fix what the cause"
          .. " names; see the README's security model",
        "to run commands only in the sandbox, set settings.sandbox.mode = 'required'",
      }
  elseif vim.startswith(line, "settings: ok") then
    return health.ok
  elseif vim.startswith(line, "settings: ") then
    return health.warn, { "see the README's Configuration for the keys and their values" }
  elseif
    vim.startswith(line, "mcp server ")
    and (line:find(": FAILED: ", 1, true) or line:find(": NO ANSWER", 1, true))
  then
    return health.warn,
      {
        "the reason ends with the server's last stderr lines: fix its command or its entry"
          .. " (settings.mcp.servers or .mcp.json), or remove it",
      }
  elseif vim.startswith(line, "provider: ") and line:find("model none", 1, true) then
    return health.warn,
      { "set TETHER_MODEL (in the server's environment) or settings.provider.model" }
  end
  return health.info
end

--- `tether doctor --workspace <root>` with the executable the server starts from, its
--- environment and its settings (as TETHER_ASK_OPTIONS), each line of it reported.
local function doctor(found, chosen, root)
  health.start("tether: sandbox and setup (tether doctor)")
  local cmd = base_command(found.cmd)
  vim.list_extend(cmd, { "doctor", "--workspace", root })
  local env = vim.tbl_extend("force", {}, chosen.env or {})
  if chosen.settings and next(chosen.settings) then
    env.TETHER_ASK_OPTIONS = vim.json.encode(chosen.settings)
  end
  local shown = table.concat(cmd, " ")
  local ok, run = pcall(vim.system, cmd, { env = env, text = true, timeout = DOCTOR_TIMEOUT_MS })
  if not ok then
    health.error(("`%s` cannot run: %s"):format(shown, run))
    return
  end
  local done = run:wait(DOCTOR_TIMEOUT_MS + 2000)
  local lines = vim.split(vim.trim(done.stdout or ""), "\n", { trimempty = true })
  local ran = (done.code == 0 or done.code == 1)
    and vim.iter(lines):any(function(line)
      return vim.startswith(line, "sandbox: ")
    end)
  if not ran then
    local said = vim.split(vim.trim(done.stderr or ""), "\n")
    local why = said[#said] -- a traceback's last line is its message
    if done.code == 124 then
      why = ("it did not finish within %d s"):format(DOCTOR_TIMEOUT_MS / 1000)
    elseif why == "" then
      why = ("it exited %d with %s"):format(done.code, #lines > 0 and lines[1] or "no output")
    end
    health.error(("`%s` failed: %s"):format(shown, why), {
      "a server without `doctor` is older than the sandbox: update it",
      "else run the command above in a terminal to see all it says",
    })
    return
  end
  for _, line in ipairs(lines) do
    local report, advice = judge(line)
    report(line, advice)
  end
  if done.code ~= 0 then
    health.info("`tether doctor` exited 1: something above needs you")
  end
end

--- How to report one MCP server's live state: a health function and its advice.
local function judge_server(server)
  if server.state == "running" then
    return health.ok
  elseif server.state == "failed" then
    return health.error,
      {
        "its last stderr lines are above (and in :LspLog); fix its command or settings",
        "a change to settings.mcp.servers restarts it; so does restarting tether",
      }
  elseif server.state == "waiting" or server.state == "not allowed" then
    return health.warn,
      { "a server of the workspace's .mcp.json starts once you allow its entry (:LspRestart)" }
  end
  return health.info
end

--- Each MCP server's live state, asked of the running server (`tether.tools`).
local function mcp_servers(client)
  health.start("tether: MCP servers")
  if not client then
    health.info("the server is not running: each MCP server's state shows once it runs")
    return
  end
  local params = { command = "tether.tools", arguments = { vim.empty_dict() } }
  local response, err
  if vim.fn.has("nvim-0.11") == 1 then
    response, err = client:request_sync("workspace/executeCommand", params, 5000)
  else
    local request_sync = client.request_sync ---@diagnostic disable-line
    response, err = request_sync("workspace/executeCommand", params, 5000)
  end
  local servers = response and response.result and response.result.servers
  if type(servers) ~= "table" then
    local why = err or (response and response.err and response.err.message) or "no answer"
    health.warn("`tether.tools` did not answer: " .. tostring(why))
    return
  end
  if #servers == 0 then
    health.info("none configured (settings.mcp.servers, or the workspace's .mcp.json)")
  end
  for _, server in ipairs(servers) do
    local line = ("%s: %s, %d tools"):format(server.name, server.state, server.tools)
    if server.detail ~= "" then
      line = line .. ": " .. server.detail:gsub("\n", " / ") -- a report line is one line
    end
    local report, advice = judge_server(server)
    report(line, advice)
  end
end

local HOW = {
  explicit = "as configured",
  PATH = "`tether` on PATH",
  venv = "the workspace's .venv",
}

function M.check()
  local server = require("tether.server")
  local chosen = route()
  health.start("tether: server")
  health.info("configured by " .. chosen.name)
  local client = require("tether.client").get()
  local root = client and client.root_dir or server.workspace()
  local found = server.find(chosen.cmd, root)
  if not found.cmd then
    health.error(
      ("no server found: looked for %s"):format(table.concat(found.looked, " and ")),
      server.advice()
    )
    return
  end
  local exe = found.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(("`%s` (%s) is not executable"):format(exe, HOW[found.how]), server.advice())
    return
  end
  health.ok(
    ("command: %s (%s: %s)"):format(
      table.concat(found.cmd, " "),
      HOW[found.how],
      vim.fn.exepath(exe)
    )
  )

  local version_cmd = base_command(found.cmd)
  version_cmd[#version_cmd + 1] = "--version"
  local ok, run = pcall(vim.system, version_cmd, { env = chosen.env, text = true })
  local done = ok and run:wait(15000)
  if done and done.code == 0 then
    health.ok("version: " .. vim.trim(done.stdout))
  else
    health.warn(
      ("`%s` failed: %s"):format(table.concat(version_cmd, " "), done and done.stderr or run)
    )
  end

  health.info(
    client and ("running (client %d, workspace %s)"):format(client.id, client.root_dir or "?")
      or "not started yet: it starts on first use"
  )

  doctor(found, chosen, root)
  mcp_servers(client)

  health.start("tether: provider")
  local url = provider_url(chosen)
  local why = unreachable(url)
  if why then
    health.error(("%s is not reachable: %s"):format(url, why), {
      "set TETHER_BASE_URL (in the server's environment) or settings.provider.base_url;"
        .. " see the README",
    })
  else
    health.ok(url .. " is reachable")
  end
end

return M
