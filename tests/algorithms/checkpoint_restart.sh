#!/bin/sh
# checkpoint_restart.sh [--no-plain] BSPRUN BACKEND P KILL DRIVER [ARGS...]
#
# A driver killed in the middle of its run and restarted from its checkpoints gives the
# result of a run that went through, bit for bit (algorithms/README.md, "Checkpoints"):
#
#   1. DRIVER ARGS with bsprun --checkpoint-dir (a checkpoint at every stage): exit 0, its
#      check passed, and it saved two checkpoints or more, the first and the last at
#      supersteps F < L (the JSON's "checkpoints"); the JSON is read with python3;
#   2. DRIVER ARGS without checkpoints: the same result_digest and the same counts (W, H, S
#      and every superstep's; a JSON without them fails, so that two empty extractions
#      cannot pass as equal): a checkpoint replaces a sync, it adds none (--no-plain: this
#      run is left out; the counts do not depend on the back end, one of them tests them);
#   3. DRIVER ARGS with --checkpoint-dir D and BSPKIT_KILL_AT=PID:M: process PID kills itself
#      (SIGKILL) at superstep M, and the run ends with a status other than 0 after saving a
#      checkpoint in D. KILL is PID (M three quarters of the way from F to L: with -r 2, in
#      the middle of the second repetition, the first one's time saved) or PID:early (M = F:
#      the restart goes on from the first checkpoint);
#   4. DRIVER ARGS with bsprun --restart D: exit 0, "restarted": true, the check passed, and
#      the result_digest of step 1.
#
# Every run under timeout(1) (60 s). Passes with exit 0; otherwise prints what differed, the
# commands and their output, and exits 1.
set -u
plain=1
[ "${1-}" != --no-plain ] || { plain=0; shift; }
[ $# -ge 5 ] || { echo "usage: $0 [--no-plain] BSPRUN BACKEND P PID[:early] DRIVER [ARGS...]" >&2; exit 2; }
bsprun=$1
backend=$2
p=$3
kill_pid=${4%:early}
when=late
[ "$kill_pid" = "$4" ] || when=early
shift 4
dir=$(mktemp -d "${TMPDIR:-/tmp}/bspalg-restart.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
unset BSPKIT_KILL_AT BSPKIT_CHECKPOINT_DIR BSPKIT_CHECKPOINT_EVERY BSPKIT_RESTART

fail() {
  echo "FAIL: $1"
  for run in reference plain killed restarted; do
    [ -f "$dir/$run.cmd" ] || continue
    echo "---- $run: $(cat "$dir/$run.cmd")"
    tail -n 20 "$dir/$run.out" "$dir/$run.err" 2>/dev/null
  done
  exit 1
}

# run NAME [VAR=value] -- bsprun options -- : DRIVER ARGS with --json DIR/NAME.json
run() {
  name=$1
  shift
  echo "$*" >"$dir/$name.cmd"
  timeout -k 2 60 env "$@" --json "$dir/$name.json" >"$dir/$name.out" 2>"$dir/$name.err" </dev/null
}

# value JSON KEY[.KEY...]: the JSON's value at that key (checkpoints.first_superstep: within
# "checkpoints"): a string as it is, a number, or true/false/null; empty when the file is not
# JSON or has no such key
value() {
  python3 -c 'import json, sys
try:
    v = json.load(open(sys.argv[1]))
    for key in sys.argv[2].split("."):
        v = v[key]
except (OSError, ValueError, KeyError, TypeError):
    sys.exit(0)
print(v if isinstance(v, str) else json.dumps(v))' "$1" "$2"
}

# counts JSON: the counts of a run, "W", "H", "S" and the list of "supersteps", as one line
# of JSON; exits 1 (printing nothing) when the file is not JSON or one of them is missing
counts() {
  python3 -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print(json.dumps({k: d[k] for k in ("W", "H", "S", "supersteps")}, sort_keys=True))
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit(f"{sys.argv[1]}: no counts ({type(e).__name__}: {e})")' "$1"
}

command -v python3 >/dev/null || { echo "$0: needs python3 (scripts/setup.sh installs it)" >&2; exit 2; }

run reference "$bsprun" -b "$backend" -n "$p" --checkpoint-dir "$dir/reference-checkpoints" "$@" ||
  fail "the run with checkpoints exited with status $?"
[ "$(value "$dir/reference.json" verified)" = true ] || fail "the run with checkpoints: its check did not pass"
digest=$(value "$dir/reference.json" result_digest)
first=$(value "$dir/reference.json" checkpoints.first_superstep)
last=$(value "$dir/reference.json" checkpoints.last_superstep)
[ -n "$digest" ] && [ "$digest" != null ] || fail "no result_digest in the JSON"
case "$first$last" in *[!0-9]* | '') fail "no checkpoints were saved (first $first, last $last)" ;; esac
[ "$first" -lt "$last" ] || fail "fewer than two checkpoints (first at superstep $first, last at $last)"

if [ $plain = 1 ]; then
  run plain "$bsprun" -b "$backend" -n "$p" "$@" || fail "the run without checkpoints exited with status $?"
  [ "$(value "$dir/plain.json" result_digest)" = "$digest" ] ||
    fail "the result_digest without checkpoints, $(value "$dir/plain.json" result_digest), is not $digest"
  # an empty extraction must not pass as equal: both runs' counts must be there
  plain_counts=$(counts "$dir/plain.json" 2>&1) || fail "the run without checkpoints: $plain_counts"
  reference_counts=$(counts "$dir/reference.json" 2>&1) || fail "the run with checkpoints: $reference_counts"
  [ "$plain_counts" = "$reference_counts" ] ||
    fail "the counts differ with and without checkpoints: $plain_counts against $reference_counts"
fi

# bspk_checkpoint is entered at superstep n - 1 for the checkpoint named n: killing at M with
# F <= M < L leaves the first checkpoint saved and kills before the last
middle=$first
[ "$when" = early ] || middle=$((first + 3 * (last - first) / 4))
[ "$middle" -lt "$last" ] || middle=$((last - 1))
run killed BSPKIT_KILL_AT="$kill_pid:$middle" "$bsprun" -b "$backend" -n "$p" \
  --checkpoint-dir "$dir/checkpoints" "$@"
status=$?
[ "$status" != 0 ] || fail "the run killed at superstep $middle exited with status 0"
[ "$status" != 124 ] || fail "the run killed at superstep $middle did not end within 60 s"
ls "$dir"/checkpoints/superstep-*/MANIFEST >/dev/null 2>&1 ||
  fail "the run killed at superstep $middle saved no checkpoint"

run restarted "$bsprun" -b "$backend" -n "$p" --restart "$dir/checkpoints" "$@" ||
  fail "the restart exited with status $?"
[ "$(value "$dir/restarted.json" restarted)" = true ] || fail "the restarted run's JSON does not say restarted"
[ "$(value "$dir/restarted.json" verified)" = true ] || fail "the restarted run's check did not pass"
[ "$(value "$dir/restarted.json" result_digest)" = "$digest" ] ||
  fail "the restarted run's result_digest, $(value "$dir/restarted.json" result_digest), is not $digest"
echo "PASS: killed process $kill_pid at superstep $middle (checkpoints at $first..$last, status $status), restarted: result_digest $digest"
exit 0
