#!/usr/bin/env bash
# Installs every tool Tessera needs on a fresh Debian machine of this kind, skipping each one that is
# already present at the right version (a warm run takes seconds). Recipe: ../shared/TOOLCHAIN.md.
#   scripts/setup.sh          build tools (wasm target, cargo-leptos, wasm-bindgen-cli, npm packages)
#   scripts/setup.sh --test   also the test tools: Debian's Chromium, nginx, openssl, systemd-analyze and a Java runtime (for the
#                             Nu HTML checker), Playwright, axe-core, Prism and GitHub's OpenAPI document from npm, and Schemathesis and
#                             aiosmtpd from PyPI in a virtualenv at .tools/py
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== setup: %s\n' "$*"; }
need_browser_tools=false
[ "${1:-}" = "--test" ] && need_browser_tools=true

export PATH="$HOME/.cargo/bin:$PATH"

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

if [ "$(cargo leptos --version 2>/dev/null)" != "cargo-leptos 0.3.10" ]; then
  # 0.3.11 needs a newer rustc; --debug halves the 20-minute compile and builds the app just as well.
  step "cargo install cargo-leptos 0.3.10 (about 11 minutes, once)"
  cargo install --debug --locked --features no_downloads cargo-leptos --version 0.3.10
fi

bindgen_version=$(sed -n '/^name = "wasm-bindgen"$/{n;s/^version = "\(.*\)"$/\1/p}' Cargo.lock)
if [ -z "$bindgen_version" ]; then
  echo "setup: cannot read the wasm-bindgen version from Cargo.lock" >&2
  exit 1
fi
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $bindgen_version" ]; then
  # Unlocked on purpose: its lockfile pins a webpki-roots release the registry here lacks.
  step "cargo install wasm-bindgen-cli $bindgen_version (about 4 minutes, once)"
  cargo install wasm-bindgen-cli --version "$bindgen_version" --force
fi

# `npm install`, not `npm ci`: the lockfile cannot list the other platforms' Tailwind binaries here.
if [ ! -x node_modules/.bin/tailwindcss ] || [ ! -x node_modules/.bin/wasm-opt ] || [ package.json -nt node_modules/.package-lock.json ]; then
  step "npm install (Tailwind v4, binaryen's wasm-opt)"
  npm install --no-audit --no-fund
fi

if $need_browser_tools; then
  if ! command -v chromium >/dev/null 2>&1; then
    step "apt-get install chromium"
    if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
  fi
  if ! command -v java >/dev/null 2>&1; then
    # The browser suite checks every page it visits with the Nu HTML checker (vnu-jar), a Java program.
    step "apt-get install default-jre-headless"
    if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y default-jre-headless
  fi
  if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    # The deployment test puts Debian's nginx with TLS in front of the server.
    step "apt-get install nginx-light"
    if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y nginx-light
  fi
  if ! command -v systemd-analyze >/dev/null 2>&1; then
    # ...and checks the systemd unit it ships (systemd need not be running).
    step "apt-get install systemd"
    if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y systemd
  fi
  if ! command -v openssl >/dev/null 2>&1; then
    # ...with a certificate it makes for itself each run.
    step "apt-get install openssl"
    if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y openssl
  fi
  py_tools="schemathesis==4.32.5 aiosmtpd==1.4.6"
  if [ "$(cat .tools/py/installed 2>/dev/null)" != "$py_tools" ]; then
    # Schemathesis checks the served OpenAPI document; aiosmtpd is the real SMTP server mail tests read.
    step "pip install $py_tools into .tools/py"
    python3 -m venv .tools/py
    .tools/py/bin/pip install --quiet --disable-pip-version-check $py_tools
    echo "$py_tools" > .tools/py/installed
  fi
  if [ ! -d end2end/node_modules/@playwright/test ] || [ end2end/package-lock.json -nt end2end/node_modules/.package-lock.json ]; then
    step "npm ci in end2end (Playwright without its browser download, axe-core)"
    (cd end2end && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
  fi
  if [ ! -d tests/tools/node_modules/@stoplight/prism-cli ] || [ tests/tools/package-lock.json -nt tests/tools/node_modules/.package-lock.json ]; then
    # The site tests serve GitHub's OpenAPI document with Prism; the import bench reads all of it.
    step "npm ci in tests/tools (@octokit/openapi, @stoplight/prism-cli)"
    (cd tests/tools && npm ci --no-audit --no-fund)
  fi
fi
echo "setup: all tools present"
