#!/usr/bin/env bash
# Builds the tests' second Linux root (a minimal Debian trixie with python3 and nodejs, issue 30's named
# environments) with mmdebstrap, once per machine, into a cache directory named after what goes into it.
#   scripts/build-root.sh [SUITE]          build it if absent, print its path
#   scripts/build-root.sh --path [SUITE]   only print where it is (or would be)
# The cache is $FNBOX_TEST_ROOTS (default /var/cache/fnbox-test/roots); the root is SUITE-<hash>, the hash
# of this script's package list, variant and mirror, so a changed list builds a new root beside the old.
# Built in a temporary directory beside it and renamed into place: a root under that name is complete.
set -euo pipefail
print_only=0
if [[ ${1:-} == --path ]]; then print_only=1; shift; fi
suite=${1:-trixie}
mirror=${FNBOX_TEST_MIRROR:-http://deb.debian.org/debian}
variant=essential            # Essential: yes packages only (no apt), plus the list below
include=python3,nodejs        # the interpreters the tests run in the root
# No documentation, manual pages or translations: nothing runs them and they are most of the size.
dpkgopts=(
  'path-exclude=/usr/share/man/*'
  'path-exclude=/usr/share/doc/*'
  'path-include=/usr/share/doc/*/copyright'
  'path-exclude=/usr/share/info/*'
  'path-exclude=/usr/share/locale/*'
  'path-exclude=/usr/share/lintian/*'
)
cache=${FNBOX_TEST_ROOTS:-/var/cache/fnbox-test/roots}
hash=$(printf '%s\n' "$suite" "$variant" "$include" "$mirror" "${dpkgopts[@]}" | sha256sum | cut -c1-12)
dest=$cache/$suite-$hash
if ((print_only)) || [[ -d $dest ]]; then
  echo "$dest"
  exit 0
fi
command -v mmdebstrap >/dev/null || { echo "build-root.sh: mmdebstrap is not installed" >&2; exit 1; }
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.build-$suite-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
args=(--variant="$variant" --include="$include" --quiet)
for o in "${dpkgopts[@]}"; do args+=(--dpkgopt="$o"); done
# mmdebstrap wants an empty directory; apt's lists and caches are left out of the result (its defaults).
mmdebstrap "${args[@]}" "$suite" "$tmp/root" "$mirror" >&2
mv -T "$tmp/root" "$dest"
echo "$dest"
