#!/bin/sh
# run_rdxsort_speedup.sh [BUILD_DIR] [ROUNDS] - the radix sorts' speedup table in the layout of
# Gerbessiotis & Lee's Tables 2 and 3: sizes 4M, 8M, 16M, 32M keys (the paper's M is 1024000),
# time on p = 1 and speedup T(1) / T(p) at p = 2, 4, 8, for RDXSORT (plain), RDXSORTOPT (opt) and
# the combined variant, on the threads and mpi back ends; builds nothing.
#
# Every run is `bspalg-rdxsort --reps 3 --no-check` (the driver's median); the runs of one round
# go through every (back end, variant, size, p) in turn, and the table takes the median over
# ROUNDS rounds (default 3). p beyond the cores is oversubscribed (bsprun then lets the processes
# share cores: the table says so). Environment: SIZES (keys, space-separated) and PROCS override
# the sizes and the p list, BACKENDS the back ends.
# Results: results/algorithms/rdxsort_speedup.txt (and .log), with the machine's state.
set -eu
build=${1:-build}
rounds=${2:-3}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
sizes=${SIZES:-"4096000 8192000 16384000 32768000"}
procs=${PROCS:-"1 2 4 8"}
backends=${BACKENDS:-"threads mpi"}
variants="plain opt combined"
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
for f in "$build/bin/bsprun" "$build/bin/bspalg-rdxsort"; do
  [ -x "$f" ] || { echo "run_rdxsort_speedup.sh: $f not found; build first (cmake --build $build)" >&2; exit 2; }
done
out=$root/results/algorithms
mkdir -p "$out"
txt=$out/rdxsort_speedup.txt
log=$out/rdxsort_speedup.log
cores=$(nproc)
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
: > "$log"
{
  echo "load before: $(uptime)"
  echo "cpu: $cpu, $cores cores; OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE; $rounds rounds"
} | tee -a "$log"

r=1
while [ "$r" -le "$rounds" ]; do
  for b in $backends; do
    for v in $variants; do
      for n in $sizes; do
        for p in $procs; do
          echo "round $r of $rounds: $b $v n = $n p = $p" >&2
          t=$("$build/bin/bsprun" -b "$b" -n "$p" "$build/bin/bspalg-rdxsort" --variant "$v" \
                --size "$n" --reps 3 --no-check | sed -n 's/.*: \([0-9.]*\) s (median.*/\1/p')
          echo "$b $v $n $p ${t:-nan}" >> "$log"
        done
      done
    done
  done
  r=$((r + 1))
done
echo "load after: $(uptime)" | tee -a "$log"

awk -v cores="$cores" -v procs="$procs" -v sizes="$sizes" -v backends="$backends" \
    -v variants="$variants" '
  NF == 5 && $5 != "nan" { v[$1 " " $2 " " $3 " " $4] = v[$1 " " $2 " " $3 " " $4] " " $5 }
  function median(s,   a, m, i, j, t) {
    m = split(s, a, " ")
    if (m == 0) return ""
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    np = split(procs, P, " "); ns = split(sizes, N, " ")
    nb = split(backends, B, " "); nv = split(variants, V, " ")
    head = "| size | variant | time p = 1 (s) |"
    rule = "|---|---|---|"
    for (k = 2; k <= np; k++) {
      head = head " p = " P[k] (P[k] > cores ? " (oversubscribed)" : "") " |"
      rule = rule "---|"
    }
    for (ib = 1; ib <= nb; ib++) {
      printf "\nSpeedup T(1) / T(p), back end %s (median over rounds of the driver'"'"'s median of 3):\n\n", B[ib]
      print head; print rule
      for (is = 1; is <= ns; is++) for (iv = 1; iv <= nv; iv++) {
        t1 = median(v[B[ib] " " V[iv] " " N[is] " " P[1]])
        line = sprintf("| %gM | %s | %s |", N[is] / 1024000, V[iv], t1 == "" ? "-" : sprintf("%.4g", t1))
        for (k = 2; k <= np; k++) {
          tp = median(v[B[ib] " " V[iv] " " N[is] " " P[k]])
          line = line (tp == "" || t1 == "" ? " - |" : sprintf(" %.2f |", t1 / tp))
        }
        print line
      }
    }
  }' "$log" | tee "$txt"
echo "table: $txt; samples and machine state: $log" >&2
