#!/usr/bin/env bash
# Every fnbox test, as run by `make test` (the README's test command):
#   1. the cmocka unit tests (build/tests/*/test_*) and the pytest suites tests/integration + tests/security
#      against build/fnbox, then the client packages' suites (clients/node: node:test; clients/python:
#      pytest) against it;
#   2. `make sanitize`, then the same unit tests and suites against the ASan+UBSan build (build-asan/);
#   3. the adversarial suite's weak run against build-weak/ (-DFB_DEFENCE_SWITCHES): every attack whose
#      defence has a switch must get through with it off;
#   4. static analysis (scripts/lint.sh: cppcheck, clang-tidy, shellcheck), counted as one test;
#   5. a short run of every libFuzzer target (scripts/fuzz.sh, clang + ASan + UBSan, FUZZ_SECONDS each,
#      default 15), one test per target.
# Before its last line it lists every test that did not run, one line each, "== skipped: [PASS] NAME: REASON"
# (pytest skips and xfails, from each run's junit XML; cmocka skips, from the TAP output, with the message
# the test printed before skipping), so a skip in CI is visible by name. Ends with exactly one line
# "N passed, M failed, K skipped" (totals over everything; an xfail counts as skipped: it proves nothing
# about the behaviour it names) and exits non-zero if anything failed or nothing passed. Skips alone do
# not fail the run: a test skips only when this machine lacks something it cannot be given (no root, no
# Landlock, not x86_64); a dependency scripts/install-deps.sh installs is a failure when it is missing.
#
# Environment: WARM=0 skips the warm pass (pass 1); CLIENTS=0 skips the client packages' suites (pass 1); SANITIZE=0 skips pass 2; WEAK=0 pass 3; LINT=0 pass 4; FUZZ=0 pass 5; PYTHON (default /usr/bin/python3, which has pytest);
# ENVPASS=0 skips the environment pass (run_environment, after the warm pass); UNPRIV=0 skips the unprivileged pass (run_unprivileged, after pass 1's client suites).
# PYTEST_ARGS adds arguments to both pytest runs (e.g. PYTEST_ARGS="-k roundtrip -x").
# Nothing is written into the repository besides the build directories (no .pytest_cache, no __pycache__).
set -u
cd "$(dirname "$0")/.." || exit 1

PYTHON=${PYTHON:-/usr/bin/python3}
MAKE=${MAKE:-make}
SANITIZE=${SANITIZE:-1}
UNIT_TIMEOUT=${UNIT_TIMEOUT:-300}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fnbox-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
export PYTHONDONTWRITEBYTECODE=1

PASSED=0
FAILED=0
SKIPPED=0
SKIPLIST="$TMP/skipped.txt"   # one line per test that did not run: "[PASS] NAME: REASON"
: >"$SKIPLIST"

say() { printf '== %s\n' "$*"; }

# run_units BUILD_DIR LABEL: every cmocka binary under BUILD_DIR/tests, TAP output counted per test.
# cmocka 1.1 reports a skip as "not ok N # SKIP name" (TAP's own form is "ok N # SKIP"): both are skips,
# never failures; the reason is the line the test printed just before (call_testlib.h's fbt_can_run).
run_units() {
    local build=$1 label=$2 bin out rc planned ok notok skip n=0
    local bins=()
    # One binary per source (tests/unit/<dir>/test_*.c): a missing one is a failure, and a binary left
    # behind by a test that was moved or removed is not run.
    local src
    while IFS= read -r src; do
        src=${src#tests/unit/}
        bins+=("$build/tests/${src%.c}")
    done < <(find tests/unit -name 'test_*.c' | sort)
    if [ ${#bins[@]} -eq 0 ]; then
        say "$label: no unit tests under tests/unit"
        FAILED=$((FAILED + 1))
        return
    fi
    for bin in "${bins[@]}"; do
        if [ ! -x "$bin" ]; then
            say "$label: FAIL $bin was not built"
            FAILED=$((FAILED + 1))
            continue
        fi
        out="$TMP/unit.out"
        CMOCKA_MESSAGE_OUTPUT=TAP timeout "$UNIT_TIMEOUT" "$bin" >"$out" 2>"$TMP/unit.err"
        rc=$?
        planned=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$out" | head -n1)
        skip=$(grep -cE '^(not )?ok [0-9]+ # SKIP' "$out")
        ok=$(grep -E '^ok [0-9]' "$out" | grep -cv '^ok [0-9]* # SKIP')
        notok=$(grep -E '^not ok [0-9]' "$out" | grep -cv '^not ok [0-9]* # SKIP')
        # tests that never reported (the binary crashed or hung) count as failures
        if [ -n "$planned" ] && [ "$planned" -gt $((ok + notok + skip)) ]; then
            notok=$((planned - ok - skip))
        fi
        if [ "$rc" -ne 0 ] && [ "$notok" -eq 0 ]; then
            notok=1
        fi
        if [ "$notok" -ne 0 ] || [ "$rc" -ne 0 ]; then
            say "$label: FAIL $bin (exit $rc, $ok passed, $notok failed)"
            grep -v '^ok [0-9]' "$out" | head -n 60
            head -n 60 "$TMP/unit.err"
        fi
        awk -v pass="$label" -v bin="${bin#"$build"/tests/}" '
            /^(not )?ok [0-9]+ # SKIP/ {
                name = $0; sub(/^(not )?ok [0-9]+ # SKIP */, "", name)
                reason = (prev ~ /^((not )?ok [0-9]|1\.\.|#)/ || prev == "") ? "(no reason printed)" : prev
                printf "[%s] %s: %s: %s\n", pass, bin, name, reason
            }
            { prev = $0 }' "$out" >>"$SKIPLIST"
        PASSED=$((PASSED + ok))
        FAILED=$((FAILED + notok))
        SKIPPED=$((SKIPPED + skip))
        n=$((n + ok + notok + skip))
    done
    say "$label: ${#bins[@]} unit test binaries, $n tests"
}

# run_pytest FNBOX_BINARY LABEL [PATH...]: pytest on the paths (default: the integration and security
# suites) against one binary.
run_pytest() {
    local fnbox=$1 label=$2 xml="$TMP/$2.xml" rc counts p f s
    shift 2
    local paths=("$@")
    [ ${#paths[@]} -gt 0 ] || paths=(tests/integration tests/security)
    if [ ! -x "$fnbox" ]; then
        say "$label: $fnbox missing, pytest not run"
        FAILED=$((FAILED + 1))
        return
    fi
    say "$label: pytest ${paths[*]} with FNBOX=$fnbox"
    # shellcheck disable=SC2086
    FNBOX="$fnbox" "$PYTHON" -m pytest -p no:cacheprovider -q -rfE --junitxml="$xml" \
        "${paths[@]}" ${PYTEST_ARGS:-}
    rc=$?
    if [ ! -s "$xml" ]; then
        say "$label: pytest exited $rc without a report"
        FAILED=$((FAILED + 1))
        return
    fi
    # Counts from the suites' attributes; each skipped or xfailed testcase appended to the skip list.
    counts=$("$PYTHON" - "$xml" "$label" "$SKIPLIST" <<'EOF'
import sys
import xml.etree.ElementTree as ET
xml, label, skiplist = sys.argv[1:4]
root = ET.parse(xml).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
t = f = e = s = 0
lines = []
for su in suites:
    t += int(su.get("tests", 0)); f += int(su.get("failures", 0))
    e += int(su.get("errors", 0)); s += int(su.get("skipped", 0))
    for case in su.iter("testcase"):
        sk = case.find("skipped")
        if sk is None:
            continue
        name = "::".join(x for x in (case.get("classname"), case.get("name")) if x)
        reason = " ".join((sk.get("message") or sk.text or "(no reason given)").split())
        kind = "xfail: " if sk.get("type") == "pytest.xfail" else ""
        lines.append("[%s] %s: %s%s\n" % (label, name or "(collection)", kind, reason))
with open(skiplist, "a", encoding="utf-8") as out:
    out.writelines(lines)
print(t - f - e - s, f + e, s)
EOF
)
    read -r p f s <<<"$counts"
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1  # interrupted, internal error, or nothing collected
    fi
    say "$label: $p passed, $f failed, $s skipped"
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + f))
    SKIPPED=$((SKIPPED + s))
}

# run_node LABEL DIR CMD...: a node:test run (CMD in DIR, TAP output), counted from its summary lines
# ("# pass N", "# fail N", "# skipped N", "# todo N"; the last of each: a runner that runs several suites
# prints its totals last); each skipped test ("ok N - name # SKIP reason") goes to the skip list.
run_node() {
    local label=$1 dir=$2 out="$TMP/$1.out" rc p f s
    shift 2
    say "$label: (cd $dir && $*)"
    (cd "$dir" && "$@") >"$out" 2>&1
    rc=$?
    grep -vE '^ *(ok [0-9]+ - |# Subtest:|duration_ms:|---$|\.\.\.$|type: .test.$|1\.\.[0-9]+$)' "$out" | tail -n 80
    sumof() { sed -n "s/^# $1 \([0-9][0-9]*\)$/\1/p" "$out" | tail -n 1 | awk '{n += $1} END {print n + 0}'; }
    p=$(sumof pass)
    f=$(sumof fail)
    s=$(( $(sumof skipped) + $(sumof todo) ))
    sed -n 's/^ *ok [0-9]* - \(.*\) # SKIP *\(.*\)$/\1: \2/p' "$out" | sed "s/^/[$label] /" >>"$SKIPLIST"
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1  # the build, install or runner failed
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
        f=1  # nothing ran
    fi
    say "$label: $p passed, $f failed, $s skipped"
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + f))
    SKIPPED=$((SKIPPED + s))
}

# The warm pass: the integration and security suites' calls through `fnbox serve --warm` (pools of sandboxes
# started ahead of their calls, docs/internals/pools.md): tests/integration/fnboxlib.py posts every plain
# `fnbox call -` to FNBOX_WARM_SOCKET instead. The pass fails if no call was served warm, or if the server
# does not stop cleanly.
run_warm() {
    local dir sock pid rc served
    dir=$(mktemp -d /tmp/fnbox-warm.XXXXXX)
    sock=$dir/warm.sock
    build/fnbox serve --listen "unix:$sock" --warm python=2,javascript=2,ruby=1,php=1,c=1,cpp=1 --max-concurrency 16 \
        --max-queue 1024 --grace 5 2>"$dir/serve.log" &
    pid=$!
    for _ in $(seq 300); do [ -S "$sock" ] && break; sleep 0.1; done
    FNBOX_WARM_SOCKET=$sock FNBOX_WARM_CWD=$PWD run_pytest build/fnbox "pytest-warm" "$@"
    served=$("$PYTHON" - "$sock" <<'EOF'
import http.client, json, socket, sys
class C(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sys.argv[1])
c = C("localhost", timeout=30)
c.request("GET", "/v1/health")
pools = json.loads(c.getresponse().read())["warm"]
print(sum(p["served"] for p in pools.values() if isinstance(p, dict)))
EOF
)
    kill -TERM "$pid"
    wait "$pid"
    rc=$?
    say "pytest-warm: ${served:-no} calls served by pooled sandboxes; the server exited $rc"
    if [ "${served:-0}" -lt 1 ] || [ "$rc" != 0 ]; then
        tail -20 "$dir/serve.log"
        FAILED=$((FAILED + 1))
    fi
    rm -rf "$dir"
}

# The environment pass (issue 30): the security suites once more with every call and execute request in a
# named environment (tests/integration/fnboxlib.py adds "environment" to each): its root is "/" given as an
# environment's root (so every path of the system tree is resolved through the untrusted-root code:
# spec.sysroot), it places a Python and a Node package directory (spec.layers), and every Python request
# also names a dependency (a layer installed once from a PEP 503 index on loopback, built from the fixtures
# of tests/integration/registries/python). A first check shows all three are in effect (the packages
# import); it counts as one test.
run_environment() {
    local dir rc out port srv
    dir=$(mktemp -d /tmp/fnbox-envpass.XXXXXX)
    mkdir -p "$dir/py" "$dir/node_modules/envpass"
    echo 'WHERE = "layer"' >"$dir/py/envpass_mod.py"
    echo 'module.exports = "layer";' >"$dir/node_modules/envpass/index.js"
    port=$(PYTHONPATH=tests/integration "$PYTHON" -c '
import sys
from pathlib import Path
import registrylib
out = Path(sys.argv[1])
registrylib.simple_index(registrylib.build_wheels(out / "wheels"), out / "index")
print(registrylib.free_port())' "$dir") || port=
    chmod -R a+rX "$dir"
    srv=
    if [ -n "$port" ]; then
        "$PYTHON" -m http.server --bind 127.0.0.1 --directory "$dir/index" "$port" >/dev/null 2>&1 &
        srv=$!
        for _ in $(seq 100); do "$PYTHON" -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$port" 2>/dev/null && break; sleep 0.1; done
    fi
    printf '{"environments": {"escape": {"root": "/", "python": {"paths": ["%s/py"]}, "javascript": {"paths": ["%s/node_modules"]}, "indexes": {"python": "http://127.0.0.1:%s/simple/"}}}}\n' \
        "$dir" "$dir" "${port:-1}" >"$dir/envs.json"
    out=$(printf '%s\n' '{"language": "python", "code": "import envpass_mod, fixdep\nprint(envpass_mod.WHERE, fixdep.__name__)", "environment": "escape", "dependencies": {"python": ["fixdep"]}}' |
        FNBOX_ENVIRONMENTS=$dir/envs.json build/fnbox exec)
    rc=$?
    if [ "$rc" = 0 ] && [ "$(printf '%s' "$out" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["stdout"], end="")')" = "layer fixdep" ]; then
        PASSED=$((PASSED + 1))
        FNBOX_ENVIRONMENTS=$dir/envs.json FNBOX_TEST_ENVIRONMENT=escape FNBOX_TEST_DEPENDENCIES='{"python": ["fixdep"]}' \
            run_pytest build/fnbox "pytest-environment" "$@"
    else
        say "pytest-environment: FAIL the environment is not in effect (exit $rc): $out"
        FAILED=$((FAILED + 1))
    fi
    [ -z "$srv" ] || kill "$srv"
    rm -rf "$dir"
}

# The unprivileged pass (issue 29): the session, kernel and client suites once more as an ordinary user, as a
# developer's own `fnbox serve` and the clients' local mode run them: user namespaces only, no writable
# cgroup, no /dev/fuse (the mount tests skip, saying so). Needs root to switch users: UNPRIV_USER (default
# fnbox-test, a system user created when missing). The user runs a copy of what the suites need, in a temp
# directory of its own: the checkout may sit under root's closed home. The strands runner's `npm ci` reads a
# copy of root's npm cache, as pass 1's does (--prefer-offline); one SDK is enough here (the server is what
# differs, not the SDK). About 2.5 minutes on a loaded 2-core machine.
run_unprivileged() {
    local user=${UNPRIV_USER:-fnbox-test} started=$SECONDS dir cache reason p f s
    if [ "$(id -u)" != 0 ]; then
        say "unprivileged: skipped (not root: the passes above ran as $(id -un) already)"
        echo "[unprivileged] the unprivileged pass: needs root to switch users; the passes above ran unprivileged" \
            >>"$SKIPLIST"
        SKIPPED=$((SKIPPED + 1))
        return
    fi
    if ! id -u "$user" >/dev/null 2>&1 &&
        ! useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"; then
        say "unprivileged: FAIL could not create the user $user"
        FAILED=$((FAILED + 1))
        return
    fi
    dir=$(mktemp -d /tmp/fnbox-unpriv.XXXXXX) || return
    tar -c --exclude=node_modules --exclude=__pycache__ build/fnbox scripts/install-deps.sh docs/openapi.yaml tests/integration \
        clients/python clients/node |
        tar -x -C "$dir"
    [ ! -d clients/node/node_modules ] || cp -a clients/node/node_modules "$dir/clients/node/"
    cache=$(npm config get cache 2>/dev/null)
    if [ -n "$cache" ] && [ -d "$cache" ]; then cp -a "$cache" "$dir/npm-cache"; else mkdir "$dir/npm-cache"; fi
    mkdir "$dir/home" "$dir/tmp"
    : >"$dir/skipped.txt"
    chown -R "$user:" "$dir"
    chmod 755 "$dir"
    # as-user CMD...: CMD as the user, in the copy, with a home and temp directory of its own
    printf '#!/bin/sh\ncd %s && exec setpriv --reuid=%s --regid=%s --clear-groups env HOME=%s TMPDIR=%s npm_config_cache=%s FNBOX_BIN=%s "$@"\n' \
        "$dir" "$user" "$user" "$dir/home" "$dir/tmp" "$dir/npm-cache" "$dir/build/fnbox" >"$dir/as-user"
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$dir/as-user" "$PYTHON" >"$dir/as-user-python"
    chmod 755 "$dir/as-user" "$dir/as-user-python"
    if ! reason=$("$dir/as-user" build/fnbox doctor 2>&1); then
        say "unprivileged: fnbox doctor fails for $user:"
        printf '%s\n' "$reason"
        if [ "${CI:-}" = true ]; then
            FAILED=$((FAILED + 1))
        else
            echo "[unprivileged] the unprivileged pass: fnbox doctor fails for $user" >>"$SKIPLIST"
            SKIPPED=$((SKIPPED + 1))
        fi
        rm -rf "$dir"
        return
    fi
    p=$PASSED f=$FAILED s=$SKIPPED
    run_unprivileged_suites "$dir"
    cat "$dir/skipped.txt" >>"$SKIPLIST"
    rm -rf "$dir"
    say "unprivileged: as $user: $((PASSED - p)) passed, $((FAILED - f)) failed, $((SKIPPED - s)) skipped" \
        "in $((SECONDS - started)) s"
}

# run_unprivileged_suites DIR: the suites, run by DIR/as-user from DIR (run_unprivileged's copy). run_pytest
# and run_node write their reports into TMP and the skip list, here the user's own.
run_unprivileged_suites() {
    local dir=$1
    local TMP=$dir/tmp SKIPLIST=$dir/skipped.txt PYTHON=$dir/as-user-python
    run_pytest "$dir/build/fnbox" "unprivileged-pytest" tests/integration/test_serve_sessions.py \
        tests/integration/test_serve_kernels.py clients/python/tests
    run_node "unprivileged-clients-node" "$dir" "$dir/as-user" sh -c 'cd clients/node && npm run --silent build &&
        node --test --test-reporter=tap --test-concurrency=1 test/executor*.test.mjs'
    run_node "unprivileged-clients-node-strands" "$dir" "$dir/as-user" sh -c \
        'cd clients/node && node test/strands.run.mjs --sdk 1.16'
}

# The defence-switch build first: the weak run below needs it, and so do the tests that simulate a
# missing kernel feature (tests/security/test_landlock.py) in the passes before.
weak_built=0
if [ "${WEAK:-1}" != 0 ]; then
    say "build: $MAKE BUILD=build-weak CFLAGS=-DFB_DEFENCE_SWITCHES all"
    $MAKE --no-print-directory -s BUILD=build-weak CFLAGS=-DFB_DEFENCE_SWITCHES all && weak_built=1
fi

say "build: $MAKE all unit"
if $MAKE --no-print-directory all unit; then
    run_units build "unit"
    run_pytest build/fnbox "pytest"
    # the suites whose calls go through fnboxlib.call (the server, MCP and client suites start servers of their
    # own; mounts and network run cold anyway; C and C++ compile in pooled compilers and run in pooled program
    # sandboxes)
    [ "${WARM:-1}" = 0 ] || run_warm tests/security tests/integration/test_{arguments,args_text,errors,files}.py \
        tests/integration/test_{harness_python,lang_c,lang_cpp,lang_php,lang_ruby,large,limits,output}.py \
        tests/integration/test_{parallel,permissions}.py \
        tests/integration/test_{request,roundtrip,scratch_root,schema_strict,seed_compat,seed_compat_args}.py \
        tests/integration/test_{timeout,usage,workspace}.py
    [ "${ENVPASS:-1}" = 0 ] || run_environment tests/security
else
    say "build failed"
    FAILED=$((FAILED + 1))
fi

# The client packages (clients/node, clients/python) against the real build/fnbox: their own suites.
if [ "${CLIENTS:-1}" != 0 ] && [ -x build/fnbox ]; then
    export FNBOX_BIN=$PWD/build/fnbox
    run_node "clients-node" clients/node sh -c \
        'npm run --silent build && node --test --test-reporter=tap --test-concurrency=1 test/executor*.test.mjs'
    # fnbox/strands as a registry user gets it: the packed tarball in scratch apps with their own SDK (Node 20
    # + @strands-agents/sdk 1.16, Node 22 + 1.19), clients/node/test/strands.run.mjs
    run_node "clients-node-strands" clients/node node test/strands.run.mjs
    # the README's install routes in fresh scratch apps, from a fresh checkout of clients/node (no dist/):
    # `npm install <folder>` and a packed tarball, then both entry points and the seed's quick start
    run_node "clients-node-install" clients/node node test/install.run.mjs
    run_pytest build/fnbox "clients-python" clients/python/tests
    unset FNBOX_BIN
fi
[ "${UNPRIV:-1}" = 0 ] || [ ! -x build/fnbox ] || run_unprivileged

if [ "$SANITIZE" != 0 ]; then
    say "build: $MAKE sanitize (ASan + UBSan)"
    if $MAKE --no-print-directory sanitize; then
        export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
        export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
        run_units build-asan "unit-asan"
        run_pytest build-asan/fnbox "pytest-asan"
    else
        say "sanitize build failed"
        FAILED=$((FAILED + 1))
    fi
fi

# The adversarial suite's weak run: each attack against a build with test-only defence switches, with its
# defence switched off, must now get through (tests/security/adversarial/conftest.py).
if [ "${WEAK:-1}" != 0 ]; then
    if [ "$weak_built" = 1 ]; then
        ADVERSARIAL_WEAK=1 FNBOX_WEAK=build-weak/fnbox run_pytest build-weak/fnbox "adversarial-weak" \
            tests/security/adversarial
    else
        say "weak build failed"
        FAILED=$((FAILED + 1))
    fi
fi

if [ "${LINT:-1}" != 0 ]; then
    say "lint: scripts/lint.sh"
    if scripts/lint.sh; then
        PASSED=$((PASSED + 1))
    else
        say "lint: FAILED"
        FAILED=$((FAILED + 1))
    fi
fi

if [ "${FUZZ:-1}" != 0 ]; then
    say "fuzz: scripts/fuzz.sh ${FUZZ_SECONDS:-15}"
    scripts/fuzz.sh "${FUZZ_SECONDS:-15}" | tee "$TMP/fuzz.out"
    rc=${PIPESTATUS[0]}
    p=$(grep -c '^fuzz [a-z_]*: ok' "$TMP/fuzz.out")
    f=$(grep -c '^fuzz [a-z_]*: FAILED' "$TMP/fuzz.out")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1  # the build failed or a target could not start
    fi
    if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
        f=1  # nothing ran
    fi
    say "fuzz: $p passed, $f failed"
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + f))
fi

while IFS= read -r line; do
    printf '== skipped: %s\n' "$line"
done <"$SKIPLIST"
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
