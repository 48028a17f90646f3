#!/bin/sh
# run_microbench.sh [BUILD_DIR [OPTIONS...]] - runs the BSPlib microbenchmarks; builds nothing.
#
#   bsp_microbench            at p = 2, 4 and 8
#   bsp_microbench_unchecked  at p = 2   (the library with its argument checks compiled out)
#
# through BUILD_DIR/bin/bsprun (BUILD_DIR defaults to "build", relative to the current
# directory). OPTIONS (e.g. --quick, --only sync) are passed to every run. For each run,
# results/microbench/ under the repository root gets
#   <program>_p<P>.txt    the table (also printed here)
#   <program>_p<P>.jsonl  JSON lines: a header record, then every benchmark's per-round samples
#   <program>_p<P>.log    progress and diagnostics (stderr)
# and uptime.txt gets the machine load before and after. Exit status 1 if any run failed.
set -eu

build=${1:-build}
[ $# -gt 0 ] && shift
case $build in /*) ;; *) build=$(pwd)/$build ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
bsprun=$build/bin/bsprun
for f in "$bsprun" "$build/bench/bsp_microbench" "$build/bench/bsp_microbench_unchecked"; do
  if [ ! -x "$f" ]; then
    echo "run_microbench.sh: $f not found; build first (cmake --build $build)" >&2
    exit 2
  fi
done

out=$root/results/microbench
mkdir -p "$out"
echo "before: $(uptime)" > "$out/uptime.txt"
echo "load before: $(uptime)"

status=0
run() { # run PROGRAM P OPTIONS...
  prog=$1 p=$2
  shift 2
  base=$out/${prog}_p$p
  echo
  echo "=== $prog, p=$p ==="
  rc=0
  "$bsprun" -n "$p" "$build/bench/$prog" --json "$base.jsonl" "$@" >"$base.txt" 2>"$base.log" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "run_microbench.sh: $prog at p=$p failed (exit $rc); see $base.log" >&2
    tail -n 5 "$base.log" >&2
    status=1
  fi
  cat "$base.txt"
}

for p in 2 4 8; do
  run bsp_microbench "$p" "$@"
done
run bsp_microbench_unchecked 2 "$@"

echo "after:  $(uptime)" >> "$out/uptime.txt"
echo
echo "load after: $(uptime)"
echo "results in $out"
exit $status
