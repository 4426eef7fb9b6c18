#!/usr/bin/env bash
# Static analysis: cppcheck and clang-tidy over src/, tools/ and examples/ (both must be clean;
# src/harness/c_runtime.c included), g++ over the C++ harness, shellcheck over scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
read -ra pkg_inc <<< "$(pkg-config --cflags-only-I libseccomp jansson fuse3 nettle libmicrohttpd)"
inc=(-Iinclude -Isrc "${pkg_inc[@]}")
echo "== cppcheck"
cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,portability,performance \
  --suppress=missingIncludeSystem --inline-suppr -D_GNU_SOURCE --library=posix \
  -D"json_object_foreach(o,k,v)=for(k=0;v;)" -D"json_array_foreach(a,i,v)=for(i=0;v;)" "${inc[@]}" src tools examples
echo "== clang-tidy"
checks='-*,bugprone-*,cert-*,clang-analyzer-*,-bugprone-easily-swappable-parameters,-cert-err33-c,'
checks+='-bugprone-reserved-identifier,-cert-dcl37-c,-cert-dcl51-cpp,-bugprone-assignment-in-if-condition,'
checks+='-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling,-bugprone-narrowing-conversions,'
# clang 14 reports every va_start/vsnprintf pair as an uninitialized va_list (a false positive).
checks+='-clang-analyzer-valist.Uninitialized'
mapfile -t files < <(find src tools examples -name '*.c' | sort)
clang-tidy --quiet --warnings-as-errors='*' --checks="$checks" "${files[@]}" -- \
  -std=gnu11 -D_GNU_SOURCE "${inc[@]}" 2>/dev/null
echo "== C++ harness"
# cpp_prelude.hpp is not a translation unit of its own: checked as a C++ program holds it, after the runtime.
printf '#define FNBOX__FN static\n#include "c_runtime.c"\n#include "cpp_prelude.hpp"\n' |
  g++ -std=gnu++17 -Wall -Wextra -Werror -fsyntax-only -Isrc/harness "${pkg_inc[@]}" -x c++ -
echo "== shellcheck"
shellcheck scripts/*.sh .ci/run
echo "lint: clean"
