-- luacheck . (Debian: apt install lua-check)
std = "luajit"
globals = { "vim" }
max_line_length = 100
