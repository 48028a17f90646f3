#!/bin/sh
# checkpoint_every.sh BSPRUN DRIVER [ARGS...]
#
# A driver's --checkpoint-every T sets the interval between checkpoints, in place of
# bsprun's (DRIVER must take checkpoints, at least one per repetition):
#   1. bsprun --checkpoint-dir D --checkpoint-every 1h DRIVER ARGS --checkpoint-every 0:
#      a checkpoint at every stage (the JSON's "checkpoints": "saved" > 0);
#   2. bsprun --checkpoint-dir D DRIVER ARGS --checkpoint-every 1h: none ("saved": 0);
# both exit 0 with their check passed. Passes with exit 0; otherwise says what differed and
# exits 1.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BSPRUN DRIVER [ARGS...]" >&2; exit 2; }
bsprun=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/bspalg-every.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
unset BSPKIT_KILL_AT BSPKIT_CHECKPOINT_DIR BSPKIT_CHECKPOINT_EVERY BSPKIT_RESTART

saved() { sed -n 's/.*"checkpoints": {"saved": \([0-9]*\),.*/\1/p' "$1"; }
verified() { grep -q '"verified": true' "$1"; }

timeout -k 2 60 "$bsprun" -n 2 --checkpoint-dir "$dir/every" --checkpoint-every 1h "$@" \
  --checkpoint-every 0 --json "$dir/every.json" >"$dir/every.out" 2>&1 </dev/null ||
  { echo "FAIL: the run with --checkpoint-every 0 exited with status $?"; cat "$dir/every.out"; exit 1; }
verified "$dir/every.json" || { echo "FAIL: the run with --checkpoint-every 0: its check did not pass"; exit 1; }
n=$(saved "$dir/every.json")
[ -n "$n" ] && [ "$n" -gt 0 ] ||
  { echo "FAIL: the driver's --checkpoint-every 0 (bsprun's 1h) saved '$n' checkpoints, expected some"; exit 1; }

timeout -k 2 60 "$bsprun" -n 2 --checkpoint-dir "$dir/hourly" "$@" --checkpoint-every 1h \
  --json "$dir/hourly.json" >"$dir/hourly.out" 2>&1 </dev/null ||
  { echo "FAIL: the run with --checkpoint-every 1h exited with status $?"; cat "$dir/hourly.out"; exit 1; }
verified "$dir/hourly.json" || { echo "FAIL: the run with --checkpoint-every 1h: its check did not pass"; exit 1; }
m=$(saved "$dir/hourly.json")
[ "$m" = 0 ] || { echo "FAIL: the driver's --checkpoint-every 1h saved '$m' checkpoints, expected 0"; exit 1; }
echo "PASS: --checkpoint-every 0 saved $n checkpoints, --checkpoint-every 1h none"
