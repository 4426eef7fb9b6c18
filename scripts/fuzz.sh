#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, clang + ASan + UBSan, into build-fuzz/) and runs each for N
# seconds, one after another. Prints one line per target; exits 1 if any target crashed, leaked, hung
# (-timeout) or ran out of memory (-rss_limit_mb), 2 on a usage or build error.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      SECONDS default 20; TARGET e.g. glob or fuzz_glob (default all)
#
# Seeds come from tests/fuzz/corpus/<target>/ (read only); what the fuzzer learns goes to
# build-fuzz/corpus/<target>/ and is reused by the next run; a crashing input is kept as
# build-fuzz/artifacts/<target>/crash-<sha1> (or leak-, timeout-, oom-) and its path printed. Reproduce
# one with `build-fuzz/fuzz/fuzz_<target> FILE`; once fixed, copy it into the seed corpus.
# Environment: FUZZ_NICE (default 10), FUZZ_FLAGS (extra libFuzzer flags, e.g. -jobs=2), CC is ignored.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2; }
shift $(($# > 0 ? 1 : 0))
nice_level=${FUZZ_NICE:-10}
out=build-fuzz

command -v clang >/dev/null || { echo "fuzz: clang not found (scripts/install-deps.sh installs it)" >&2; exit 2; }

# Longest input per target: a request with room for a few KiB of code; a pattern at its 4096-byte cap
# plus a few paths (a test costs path x expanded pattern, up to ~1 s each at the caps in this build, see
# fs/glob.h, so longer inputs would only find -timeout); a proxy client's bytes a little over the 8 KiB
# request-head cap (FB_PROXY_HEAD_BYTES: the 431 answer); signatures, rules and mounts are small.
max_len_of() {
  case $1 in
    fuzz_request) echo 16384 ;;
    fuzz_glob) echo 4608 ;;
    fuzz_proxy) echo 9216 ;;
    *) echo 4096 ;;
  esac
}

targets=()
if (($#)); then
  for t in "$@"; do targets+=("fuzz_${t#fuzz_}"); done
else
  for f in tests/fuzz/fuzz_*.c; do t=$(basename "$f" .c); targets+=("$t"); done
fi
for t in "${targets[@]}"; do
  [[ -f tests/fuzz/$t.c ]] || { echo "fuzz: no target tests/fuzz/$t.c" >&2; exit 2; }
done

build_log=$out/build.log
mkdir -p "$out"
start=$SECONDS
if ! nice -n "$nice_level" make -s -j2 fuzz-build >"$build_log" 2>&1; then
  cat "$build_log" >&2
  echo "fuzz: build failed" >&2
  exit 2
fi
echo "fuzz: built ${#targets[@]} target(s) in $((SECONDS - start)) s; ${seconds} s each"

failed=0
for t in "${targets[@]}"; do
  name=${t#fuzz_}
  corpus=$out/corpus/$name
  artifacts=$out/artifacts/$name
  log=$out/$name.log
  mkdir -p "$corpus" "$artifacts"
  dict=()
  [[ -f tests/fuzz/$name.dict ]] && dict=("-dict=tests/fuzz/$name.dict")
  rc=0
  # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
  UBSAN_OPTIONS=print_stacktrace=1 nice -n "$nice_level" "$out/fuzz/$t" \
    -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -max_len="$(max_len_of "$t")" \
    -artifact_prefix="$artifacts/" -print_final_stats=1 "${dict[@]}" ${FUZZ_FLAGS:-} \
    "$corpus" "tests/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]* corp: [0-9]*' "$log" | tail -1 || true)
  if ((rc == 0)); then
    echo "fuzz $name: ok, ${runs:-? runs}, ${cov:-no coverage line}"
  else
    failed=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    what=$(grep -m1 -o 'ERROR: [A-Za-z]*Sanitizer: [a-z-]*\|ERROR: libFuzzer: [a-z-]*\|fuzz invariant broken.*\|runtime error: .*' "$log" || true)
    echo "fuzz $name: FAILED (exit $rc): ${what:-see $log}; input ${artifact:-none}; log $log"
  fi
done
exit "$failed"
