#!/bin/sh
# run_texch_sweep.sh [BUILD_DIR [MAX_H [OPTIONS...]]] - Gerbessiotis & Lee's total exchange on
# this machine, as their Fig. 6 plots it (seed 002, line 133: t / h in us per 32-bit integer,
# h = p, 2p, 4p, ... doubling); builds nothing.
#
#   at p = 2 and 4, h from p up to MAX_H (default 1048576), each run with --quick:
#   threads        bsp_microbench --only texch_put                  BSPlib put | memcpy
#   mpi, mpi-rma   bsp_mpi_microbench --only texch_put,texch_send   BSPlib put | MPI_Put + fence,
#                                                                   MPI_Irecv + MPI_Send
# through BUILD_DIR/bin/bsprun (BUILD_DIR defaults to "build"). OPTIONS (e.g. --rounds 21) are
# passed to every run. results/microbench/ under the repository root gets, for each run,
# texch_<backend>_p<P>_h<H>.txt, .jsonl and .log (as run_microbench.sh's), and for each back
# end and p the sweep, texch_<backend>_p<P>.txt: one line per h with the medians in us per
# integer (the JSON lines have them per 8-byte word too). Exit status 1 if any run failed.
set -eu

build=${1:-build}
[ $# -gt 0 ] && shift
max_h=${1:-1048576}
[ $# -gt 0 ] && shift
. "$(dirname "$0")/microbench_lib.sh"
mb_require "" "$bsprun" "$build/bench/bsp_microbench"
mb_begin texch_uptime.txt

# sweep BACKEND P PROGRAM ONLY COLUMNS OPTIONS...: the runs, and the summary of their rows
# (the table's ours_med and raw_med columns are in ns per integer).
sweep() {
  backend=$1 p=$2 prog=$3 only=$4 columns=$5
  shift 5
  summary=$out/texch_${backend}_p$p.txt
  echo "# $prog on $backend, p=$p: t/h in us per 32-bit integer (medians)" >"$summary"
  echo "$columns" >>"$summary"
  h=$p
  while [ "$h" -le "$max_h" ]; do
    base=$out/texch_${backend}_p${p}_h$h
    mb_run "$base" "$prog, backend $backend, p=$p, h=$h" "$backend at p=$p, h=$h" \
      "$bsprun" -b "$backend" -n "$p" "$build/bench/$prog" --only "$only" --ints "$h" --quick \
      --json "$base.jsonl" "$@"
    awk -v h="$h" '$1 == "texch_put" { put = $3 / 1000; put_raw = $4 / 1000 }
      $1 == "texch_send" { send_raw = $4 / 1000; two = 1 }
      END { if (two) printf "%10d %12.6f %12.6f %12.6f\n", h, put, put_raw, send_raw
            else if (put != "") printf "%10d %12.6f %12.6f\n", h, put, put_raw }' \
      "$base.txt" >>"$summary"
    h=$((h * 2))
  done
  echo
  cat "$summary"
}

for p in 2 4; do
  sweep threads "$p" bsp_microbench texch_put \
    "         h  bsplib_put       memcpy" "$@"
  if [ -x "$build/bench/bsp_mpi_microbench" ]; then
    for backend in mpi mpi-rma; do
      sweep "$backend" "$p" bsp_mpi_microbench texch_put,texch_send \
        "         h  bsplib_put      mpi_put     mpi_send" "$@"
    done
  fi
done
mb_end
