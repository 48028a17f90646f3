#!/usr/bin/env bash
# checkpoint_overhead.sh [BUILD_DIR] [--rounds N] [--every T] [--dir DIR] [--only lu|rdxsort]
# What checkpoints cost a long run: LU (n = 8000, 12 repetitions) and radix sort (2^27 keys,
# 50 repetitions), p = 2 on threads, each run without checkpoints and with
# `bsprun --checkpoint-dir D --checkpoint-every T` (default 15s), alternating (plain first in
# odd rounds), N rounds (default 2). Prints per run its wall time and the checkpoints it saved,
# then per algorithm the median of each and the overhead (with / without - 1). The overhead
# at an interval I is about t_checkpoint / I, so the one at 60 s is the measured one times
# T / 60: printed beside it. Builds nothing; D is a temporary directory under DIR (default
# $TMPDIR, else /tmp). LU_SIZE, LU_REPS, SORT_SIZE, SORT_REPS (environment) change the runs.
set -euo pipefail
lu_size=${LU_SIZE:-8000} lu_reps=${LU_REPS:-12} sort_size=${SORT_SIZE:-134217728} sort_reps=${SORT_REPS:-50}
build=build rounds=2 every=15s dir=${TMPDIR:-/tmp} only=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "checkpoint_overhead.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
work=$(mktemp -d "$dir/ckpt-overhead.XXXXXX") && trap 'rm -rf "$work"' EXIT
seconds=$(awk -v t="$every" 'BEGIN { u = 1; if (t ~ /m$/) u = 60; if (t ~ /h$/) u = 3600; sub(/[smh]$/, "", t); print t * u }')
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); cores $(nproc); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
echo "checkpoints in $dir ($(df -T "$dir" | awk 'NR == 2 { print $1, $2 }')), every $every; $rounds rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

one() { # one NAME with|without DRIVER ARGS...: prints "NAME with|without SECONDS SAVED"
  local name=$1 mode=$2; shift 2
  local ckpt=()
  if [ "$mode" = with ]; then rm -rf "$work/ckpt"; ckpt=(--checkpoint-dir "$work/ckpt" --checkpoint-every "$every"); fi
  local start end
  start=$(date +%s.%N)
  "$build/bin/bsprun" -b threads -n 2 "${ckpt[@]}" "$@" --json "$work/run.json" >/dev/null
  end=$(date +%s.%N)
  python3 - "$work/run.json" "$name" "$mode" "$start" "$end" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
saved = (d.get("checkpoints") or {}).get("saved", 0)
check = {1: "checked", 0: "unchecked", -1: "WRONG"}.get(d.get("verified"), "unchecked")
print(sys.argv[2], sys.argv[3], f"{float(sys.argv[5]) - float(sys.argv[4]):.3f}", saved, check, d.get("result_digest"))
PY
}

log=$work/log
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then order="without with"; else order="with without"; fi
  for mode in $order; do
    [ "$only" = rdxsort ] || one lu "$mode" "$build/bin/bspalg-lu" --size "$lu_size" -r "$lu_reps" | tee -a "$log"
    [ "$only" = lu ] || one rdxsort "$mode" "$build/bin/bspalg-rdxsort" --size "$sort_size" -r "$sort_reps" | tee -a "$log"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$log" "$seconds" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, mode, t, saved, _, _ = line.split()
    rows.setdefault(name, {}).setdefault(mode, []).append((float(t), int(saved)))
every = float(sys.argv[2])
for name, modes in rows.items():
    plain = statistics.median(t for t, _ in modes["without"])
    ckpt = statistics.median(t for t, _ in modes["with"])
    saved = statistics.median(s for _, s in modes["with"])
    over = ckpt / plain - 1
    per = (ckpt - plain) / saved if saved else float("nan")
    print(f"{name:<8} without {plain:7.2f} s, with {ckpt:7.2f} s ({saved:.0f} checkpoints, {per:.2f} s each): "
          f"overhead {over:+.2%} at {every:g} s, so about {over * every / 60:+.2%} at 60 s")
PY
