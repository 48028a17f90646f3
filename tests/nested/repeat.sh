#!/bin/sh
# repeat.sh N cmd [args...] - runs cmd N times in a row; passes (exit 0) when every run
# passed, else shows the failing run's output and its repetition and exits 1.
set -u
[ $# -ge 2 ] || { echo "usage: $0 N cmd [args...]" >&2; exit 2; }
n=$1
shift
case $n in '' | *[!0-9]*) echo "$0: N must be a number, not '$n'" >&2; exit 2 ;; esac
i=1
while [ "$i" -le "$n" ]; do
  if ! out=$("$@" 2>&1); then
    printf '%s\n' "$out"
    echo "FAIL: repetition $i of $n"
    exit 1
  fi
  i=$((i + 1))
done
printf '%s\n' "$out"
echo "PASS: $n repetitions"
