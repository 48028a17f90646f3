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
. "$(dirname "$0")/microbench_lib.sh"
mb_require "" "$bsprun" "$build/bench/bsp_microbench" "$build/bench/bsp_microbench_unchecked"
mb_begin uptime.txt

run() { # run PROGRAM P OPTIONS...
  prog=$1 p=$2
  shift 2
  base=$out/${prog}_p$p
  mb_run "$base" "$prog, p=$p" "$prog at p=$p" \
    "$bsprun" -n "$p" "$build/bench/$prog" --json "$base.jsonl" "$@"
}

for p in 2 4 8; do
  run bsp_microbench "$p" "$@"
done
run bsp_microbench_unchecked 2 "$@"
mb_end
