#!/bin/sh
# expect_compile_error.sh REGEX... -- COMPILER [args...]
#
# Passes (exit 0) only if the compiler command fails (a nonzero status) and its output has,
# for each REGEX, a line matching it (grep -E): a program that must not compile, and the
# diagnostic that says why. Otherwise prints what happened and exits 1; 2 on bad usage.
set -u
regexes=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  regexes="$regexes$1
"
  shift
done
[ $# -gt 1 ] && [ -n "$regexes" ] || {
  echo "usage: $0 REGEX... -- COMPILER [args...]" >&2
  exit 2
}
shift
cmdline=$*
out=$(mktemp "${TMPDIR:-/tmp}/expect_compile_error.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
status=$?
fail() {
  echo "FAIL: $1"
  echo "  command: $cmdline"
  echo "---- output ----"
  cat "$out"
  exit 1
}
[ $status != 0 ] || fail "it compiled (status 0)"
printf '%s' "$regexes" | while IFS= read -r regex; do
  grep -E -q -e "$regex" "$out" || { echo "no line matches: $regex"; exit 1; }
done || fail "the diagnostic is not the expected one"
echo "PASS: status $status, the expected diagnostic:"
printf '%s' "$regexes" | while IFS= read -r regex; do grep -E -m 1 -e "$regex" "$out" | sed 's/^/  /'; done
exit 0
