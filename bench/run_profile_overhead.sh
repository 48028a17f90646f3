#!/usr/bin/env bash
# run_profile_overhead.sh [BUILD] [--rounds N] [-b BACKEND] [-n P] [--before BUILD0] [--out DIR]
# What the superstep profile (BSPKIT_PROFILE) costs the algorithms' drivers, measured in one
# run, alternating: each round runs every driver without the profile and with it (the order
# swapped every other round), and with --before also the drivers of another build (e.g. the
# commit before the profiler: "zero when off"). Each run is the driver's median of 3
# repetitions (--no-check); the table gives the median over rounds per driver and the ratios
# on/off and off/before. Profiles go to a temporary directory (removed at the end).
# Builds nothing. BACKEND default threads, P default 2, N default 7.
set -euo pipefail
build=build
case ${1:-} in -* | '') ;; *) build=$1 && shift ;; esac
rounds=7 backend=threads nprocs=2 before= out=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2 && shift 2 ;;
    -b) backend=$2 && shift 2 ;;
    -n) nprocs=$2 && shift 2 ;;
    --before) before=$(cd "$2" && pwd) && shift 2 ;;
    --out) out=$2 && shift 2 ;;
    -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' && exit 0 ;;
    *) echo "run_profile_overhead.sh: unknown option '$1' (try --help)" >&2 && exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell}
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
# Sizes that take 0.05-0.5 s per repetition on 2 cores; llcs and lu have many supersteps.
drivers=("inprod --size 30000000" "matmul --size 1500" "cannon --size 2000" "llcs --size 100000"
  "rdxsort --size 8000000" "lu --size 2000")

run() { # run WHICH BUILD DRIVER ARGS... -> appends "which driver time_s supersteps"
  local which=$1 b=$2 alg=$3 profile=
  shift 3
  [ "$which" = on ] && profile=$tmp/profile.jsonl
  BSPKIT_PROFILE=$profile "$b/bin/bsprun" -b "$backend" -n "$nprocs" "$b/bin/bspalg-$alg" "$@" \
    -r 3 --no-check --json "$tmp/run.json" >/dev/null
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], d["time_s"], d["S"])' \
    "$tmp/run.json" "$which" "$alg" >>"$tmp/times"
}

echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nproc) cores;" \
  "load before: $(cut -d' ' -f1-3 /proc/loadavg); OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE;" \
  "back end $backend, p = $nprocs, $rounds rounds"
for ((r = 1; r <= rounds; r++)); do
  order="off on"
  ((r % 2)) || order="on off"
  [ -n "$before" ] && order="before $order"
  echo "round $r/$rounds ($order)" >&2
  for d in "${drivers[@]}"; do
    # shellcheck disable=SC2086
    for which in $order; do
      b=$build
      [ "$which" = before ] && b=$before
      run "$which" "$b" $d
    done
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/times" <<'EOF'
import statistics, sys
t = {}
for line in open(sys.argv[1]):
    which, alg, time_s, steps = line.split()
    t.setdefault(alg, {}).setdefault(which, []).append(float(time_s))
    t[alg]["S"] = int(steps)
print(f"{'driver':8s} {'S':>5s} {'off (s)':>10s} {'on (s)':>10s} {'on/off':>7s} {'before (s)':>10s} {'off/before':>10s}")
for alg, d in t.items():
    off, on = statistics.median(d["off"]), statistics.median(d["on"])
    line = f"{alg:8s} {d['S']:5d} {off:10.4f} {on:10.4f} {on / off:7.3f}"
    if "before" in d:
        b = statistics.median(d["before"])
        line += f" {b:10.4f} {off / b:10.3f}"
    print(line)
EOF
if [ -n "$out" ]; then mkdir -p "$out" && cp "$tmp/times" "$out/times.txt"; fi
