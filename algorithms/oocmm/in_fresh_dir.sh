#!/bin/sh
# in_fresh_dir.sh STATUS REGEX cmd [args...]
#
# Runs `cmd args --dir D`, D a fresh empty directory, under timeout(1) (60 s), and passes (exit
# 0) only when it exited with STATUS, its stderr has a line matching the extended regular
# expression REGEX (empty: not checked; with STATUS 1, exactly one "bspkit: " line as well)
# and D is empty afterwards: bspalg-oocmm removed every file and directory it made, on success
# and on failure alike. Otherwise prints what happened and exits 1.
# STATUS "term": once the run's files exist, send it SIGTERM (as a timeout would); it must end
# by the signal and D must be empty within 10 s.
set -u
[ $# -ge 3 ] || { echo "usage: $0 STATUS REGEX cmd [args...]" >&2; exit 2; }
expected=$1
regex=$2
shift 2
dir=$(mktemp -d "${TMPDIR:-/tmp}/oocmm-test.XXXXXX") || exit 2
out=$(mktemp "${TMPDIR:-/tmp}/oocmm-test-out.XXXXXX") || exit 2
err=$(mktemp "${TMPDIR:-/tmp}/oocmm-test-err.XXXXXX") || exit 2
trap 'rm -rf "$dir" "$out" "$err"' EXIT

if [ "$expected" = term ]; then
  # the signal goes to bsprun alone, as `kill` would send it (timeout(1) would signal its whole
  # process group, and Open MPI's mpirun ends its processes by SIGKILL on a second signal)
  "$@" --dir "$dir" >"$out" 2>"$err" </dev/null &
  pid=$!
  tries=0
  until [ "$(find "$dir" -type f | wc -l)" -ge 3 ] || [ $tries -ge 300 ]; do
    sleep 0.1
    tries=$((tries + 1))
  done
  kill -TERM $pid
  tries=0
  while kill -0 $pid 2>/dev/null && [ $tries -lt 300 ]; do
    sleep 0.1
    tries=$((tries + 1))
  done
  kill -KILL $pid 2>/dev/null
  wait $pid
  status=$?
  expected=143 # 128 + SIGTERM, as timeout(1) and the shell report it
  tries=0
  while [ -n "$(ls -A "$dir")" ] && [ $tries -lt 100 ]; do
    sleep 0.1
    tries=$((tries + 1))
  done
else
  timeout -k 2 60 "$@" --dir "$dir" >"$out" 2>"$err" </dev/null
  status=$?
fi
left=$(ls -A "$dir"; find "$dir" -mindepth 2)

problem=
if [ "$status" != "$expected" ]; then
  problem="exit status $status, expected $expected"
elif [ -n "$regex" ] && ! grep -E -q -e "$regex" "$err"; then
  problem="stderr has no line matching: $regex"
elif [ -n "$regex" ] && [ "$expected" = 1 ] && [ "$(grep -c -e '^bspkit: ' "$err")" != 1 ]; then
  problem="not exactly one 'bspkit: ' line on stderr"
elif [ -n "$left" ]; then
  problem="left in $dir: $left"
fi
if [ -n "$problem" ]; then
  echo "FAIL: $problem"
  echo "  command: $* --dir $dir"
  echo "---- stderr ----"
  cat "$err"
  echo "---- stdout (last 20 lines) ----"
  tail -n 20 "$out"
  exit 1
fi
echo "PASS: status $status, nothing left in the directory"
[ -z "$regex" ] || grep -E -e "$regex" "$err" | head -n 3 | sed 's/^/  /'
exit 0
