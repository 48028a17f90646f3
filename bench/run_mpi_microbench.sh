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
case $build in /*) ;; *) build=$(pwd)/$build ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
bsprun=$build/bin/bsprun
prog=$build/bench/bsp_mpi_microbench
for f in "$bsprun" "$prog"; do
  if [ ! -x "$f" ]; then
    echo "run_mpi_microbench.sh: $f not found; build first (cmake --build $build; the" \
      "benchmark is built only when CMake found MPI)" >&2
    exit 2
  fi
done

out=$root/results/microbench
mkdir -p "$out"
echo "before: $(uptime)" > "$out/mpi_uptime.txt"
echo "load before: $(uptime)"

status=0
run() { # run BACKEND P OPTIONS...
  backend=$1 p=$2
  shift 2
  base=$out/mpi_${backend}_p$p
  echo
  echo "=== bsp_mpi_microbench, backend $backend, p=$p ==="
  rc=0
  "$bsprun" -b "$backend" -n "$p" "$prog" --json "$base.jsonl" "$@" >"$base.txt" 2>"$base.log" ||
    rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "run_mpi_microbench.sh: backend $backend at p=$p failed (exit $rc); see $base.log" >&2
    tail -n 5 "$base.log" >&2
    status=1
  fi
  cat "$base.txt"
}

for backend in mpi mpi-rma; do
  run "$backend" 2 "$@"
  run "$backend" 4 --quick "$@"
done

echo "after:  $(uptime)" >> "$out/mpi_uptime.txt"
echo
echo "load after: $(uptime)"
echo "results in $out"
exit $status
