-- :checkhealth tether: the server command, its version, the provider reachable.
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

function M.check()
  local config = require("tether").config
  health.start("tether: server")
  local exe = config.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(("`%s` is not executable"):format(exe), {
      "pip install tether, or set require('tether').setup({ cmd = { ... } })",
    })
    return
  end
  health.ok(("command: %s (%s)"):format(table.concat(config.cmd, " "), vim.fn.exepath(exe)))

  local version_cmd = {}
  for _, arg in ipairs(config.cmd) do
    if arg == "serve" then
      break
    end
    version_cmd[#version_cmd + 1] = arg
  end
  version_cmd[#version_cmd + 1] = "--version"
  local ok, run = pcall(vim.system, version_cmd, { env = config.env, text = true })
  local done = ok and run:wait(15000)
  if done and done.code == 0 then
    health.ok("version: " .. vim.trim(done.stdout))
  else
    health.warn(
      ("`%s` failed: %s"):format(table.concat(version_cmd, " "), done and done.stderr or run)
    )
  end

  local client = require("tether.client").get()
  health.info(
    client and ("running (client %d)"):format(client.id)
      or "not started yet: it starts on first use"
  )

  health.start("tether: provider")
  local url = provider_url(config)
  local why = unreachable(url)
  if why then
    health.error(("%s is not reachable: %s"):format(url, why), {
      "set TETHER_BASE_URL (opts.env) or settings.provider.base_url; see the README",
    })
  else
    health.ok(url .. " is reachable")
  end
end

return M
