#!/bin/sh
# run_matmul_bench.sh [BUILD_DIR] [N] [ROUNDS] - the BSP matrix multiplications at p = 2 beside
# OpenBLAS's own dgemm on 1 and 2 threads, alternating in one run (so that all of them see the
# same machine state); builds nothing.
#
# Each round runs, in turn: dgemm 1 thread, bspalg-matmul (blockcyclic q = 1 and 8, static2d
# q = 8) and bspalg-cannon (put) at p = 2 on the threads back end (pinned), dgemm 2 threads.
# The table gives medians over the rounds and, per BSP run, the efficiency of eq. (4.12) against
# one core's dgemm rate (2 n^3 / (p T F1)) and the time ratio to OpenBLAS on 2 threads.
# Results: results/algorithms/matmul_bench_n<N>.txt (and .log), load before and after.
set -eu
build=${1:-build}
n=${2:-4000}
rounds=${3:-5}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
for f in "$build/bin/bsprun" "$build/bin/bspalg-matmul" "$build/bin/bspalg-cannon" "$build/bench/dgemm_bench"; do
  [ -x "$f" ] || { echo "run_matmul_bench.sh: $f not found; build first (cmake --build $build)" >&2; exit 2; }
done
out=$root/results/algorithms
mkdir -p "$out"
txt=$out/matmul_bench_n$n.txt
log=$out/matmul_bench_n$n.log
: > "$log"
echo "load before: $(uptime)" | tee -a "$log"
echo "OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE, n = $n, $rounds rounds" | tee -a "$log"

bsp() { # label, driver, args...
  label=$1; shift
  t=$("$build/bin/bsprun" -b threads -n 2 "$@" --size "$n" --reps 1 --no-check | sed -n 's/.*: \([0-9.]*\) s (median.*/\1/p')
  echo "$label $t" >> "$log"
}
dg() { # threads
  t=$("$build/bench/dgemm_bench" "$n" "$1" 1 | sed -n 's/.*median_s=\([0-9.]*\).*/\1/p')
  echo "dgemm-$1t $t" >> "$log"
}
r=1
while [ "$r" -le "$rounds" ]; do
  echo "round $r of $rounds" >&2
  dg 1
  bsp blockcyclic-q1 "$build/bin/bspalg-matmul" --dist blockcyclic --q 1
  bsp blockcyclic-q8 "$build/bin/bspalg-matmul" --dist blockcyclic --q 8
  bsp static2d-q8 "$build/bin/bspalg-matmul" --dist static2d --q 8
  bsp cannon-put "$build/bin/bspalg-cannon" --variant put
  dg 2
  r=$((r + 1))
done
echo "load after: $(uptime)" | tee -a "$log"

awk -v n="$n" '
  NF == 2 && $2 != "" { v[$1] = v[$1] " " $2; k[$1] = 1 }
  function median(s,   a, m, i, j, t) {
    m = split(s, a, " ")
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    f1 = median(v["dgemm-1t"]); f2 = median(v["dgemm-2t"])
    flops = 2 * n * n * n
    printf "%-16s %10s %9s %12s %12s\n", "run (p = 2)", "median s", "GFLOP/s", "efficiency", "T/T(dgemm 2t)"
    printf "%-16s %10.4f %9.2f %12s %12s\n", "dgemm 1 thread", f1, flops / f1 / 1e9, "(F1)", ""
    printf "%-16s %10.4f %9.2f %11.1f%% %12.3f\n", "dgemm 2 threads", f2, flops / f2 / 1e9, 100 * f1 / (2 * f2), 1
    split("blockcyclic-q1 blockcyclic-q8 static2d-q8 cannon-put", names, " ")
    for (i = 1; i <= 4; i++) {
      m = median(v[names[i]])
      printf "%-16s %10.4f %9.2f %11.1f%% %12.3f\n", names[i], m, flops / m / 1e9, 100 * f1 / (2 * m), m / f2
    }
  }' "$log" | tee "$txt"
