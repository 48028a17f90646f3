#!/bin/sh
# run_mpi_microbench.sh [BUILD_DIR [OPTIONS...]] - runs bsp_mpi_microbench (BSPlib on the
# MPI back ends against raw MPI); builds nothing.
#
#   back ends mpi and mpi-rma, at p = 2, and at p = 4 (oversubscribed on a 2-core machine)
#   with --quick
#
# through BUILD_DIR/bin/bsprun (BUILD_DIR defaults to "build", relative to the current
# directory). OPTIONS (e.g. --quick, --only sync) are passed to every run. For each run,
# results/microbench/ under the repository root gets
#   mpi_<backend>_p<P>.txt    the table (also printed here)
#   mpi_<backend>_p<P>.jsonl  JSON lines: a header record, then every benchmark's samples
#   mpi_<backend>_p<P>.log    progress and diagnostics (stderr)
# and mpi_uptime.txt the machine load before and after. Exit status 1 if any run failed.
set -eu

build=${1:-build}
[ $# -gt 0 ] && shift
. "$(dirname "$0")/microbench_lib.sh"
prog=$build/bench/bsp_mpi_microbench
mb_require "; the benchmark is built only when CMake found MPI" "$bsprun" "$prog"
mb_begin mpi_uptime.txt

run() { # run BACKEND P OPTIONS...
  backend=$1 p=$2
  shift 2
  base=$out/mpi_${backend}_p$p
  mb_run "$base" "bsp_mpi_microbench, backend $backend, p=$p" "backend $backend at p=$p" \
    "$bsprun" -b "$backend" -n "$p" "$prog" --json "$base.jsonl" "$@"
}

for backend in mpi mpi-rma; do
  run "$backend" 2 "$@"
  run "$backend" 4 --quick "$@"
done
mb_end
