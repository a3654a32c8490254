-- :checkhealth tether runs `tether doctor` with the server's executable and reports the
-- command sandbox's self-check. $TETHER_NVIM_CASE:
--   real    the bubblewrap installed here: the probe holds, reported OK
--   fake    a `bwrap` on PATH that fails as AppArmor makes it fail: a warning with the
--           cause and advice, and the rest of the report still there
--   broken  an executable with no `doctor`: an error that says why
local T = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "helper.lua")
local case = vim.env.TETHER_NVIM_CASE
if case == "broken" then
  T.setup({ cmd = { vim.env.TETHER_NVIM_PYTHON, "-c", "raise SystemExit('no doctor here')" } })
else
  T.setup()
end

T.run(function()
  vim.cmd("checkhealth tether")
  local report = T.buffer_text()
  io.stderr:write(report, "\n") -- shown with pytest -s or on failure
  local function has(text)
    T.expect(report:find(text, 1, true), ("no %q in:\n%s"):format(text, report))
  end
  local function line_with(text)
    for _, line in ipairs(vim.split(report, "\n")) do
      if line:find(text, 1, true) then
        return line
      end
    end
    error(("no line with %q in:\n%s"):format(text, report))
  end
  if case == "broken" then
    has("tether: sandbox and setup")
    local line = line_with(" doctor --workspace " .. vim.fn.getcwd())
    T.expect(line:find("ERROR", 1, true) and line:find("no doctor here", 1, true), report)
    return
  end
  has("tether: sandbox and setup (tether doctor)")
  has("workspace " .. vim.fn.getcwd())
  T.expect(line_with("settings: ok"):find("OK", 1, true), report)
  if case == "real" then
    T.expect(line_with("sandbox: on (sandbox.mode = auto)"):find("OK", 1, true), report)
    T.expect(not report:find("WARNING", 1, true), report)
  else
    local line = line_with("sandbox: NOT USED (sandbox.mode = auto)")
    T.expect(line:find("WARNING", 1, true), report)
    T.expect(line:find("user namespaces are restricted", 1, true), report)
    T.expect(line:find("setting up uid map: Permission denied", 1, true), report)
    has("install bubblewrap")
    has("security model")
    has("bwrap: " .. vim.env.TETHER_NVIM_FAKE_BWRAP)
  end
  T.expect(not report:find("ERROR", 1, true), report)
  has("commands: approval.commands = ask")
end)
