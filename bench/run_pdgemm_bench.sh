#!/bin/sh
# run_pdgemm_bench.sh [BUILD_DIR] [P] [ROUNDS] - the thesis' comparison with PBLAS (seed 000,
# sec. 4.6, Fig. 4.11, lines ~905-935): the effective flop rate F = n^3 / T of bspalg-matmul with
# the customized (block-cyclic) distribution at the smallest q beside ScaLAPACK's pdgemm
# (bench/matmul_pdgemm) at the same n and P; builds nothing.
#
# F counts n^3, not the 2 n^3 flops of a product, as the figure does: F is half the usual
# GFLOP/s. The smallest q is the smallest cube with q^(2/3) >= P (q = c^3, c = ceil(sqrt P):
# q = 8 at P = 2 to 4, 27 at P = 5 to 9). pdgemm runs on the grid closest to square (R = the
# largest divisor of P at most sqrt P) with NB x NB blocks, one BLAS thread per rank, mpirun
# --bind-to core (oversubscribed when P exceeds the cores).
#
# Each round runs, for every n of N_LIST, bspalg-matmul on every back end of BACKENDS, then
# pdgemm, alternating so that all of them see the same machine state; every run without its
# check (the ctests check both: alg.matmul.*, alg.matmul.pdgemm.p4). The table gives medians
# over the rounds: time and F per program and n.
# Environment: N_LIST (default "1000 2000 3000 4000"), BACKENDS (default "threads mpi"),
# NB (default 64), MPIRUN (default mpirun).
# Results: results/algorithms/pdgemm_bench_p<P>.txt (the table) and .log (every time, the
# machine, the load before and after).
set -eu
build=${1:-build}
p=${2:-2}
rounds=${3:-5}
n_list=${N_LIST:-1000 2000 3000 4000}
backends=${BACKENDS:-threads mpi}
nb=${NB:-64}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
for f in "$build/bin/bsprun" "$build/bin/bspalg-matmul" "$build/bench/matmul_pdgemm"; do
  [ -x "$f" ] || { echo "run_pdgemm_bench.sh: $f not found; build first (cmake --build $build; matmul_pdgemm needs ScaLAPACK and MPI)" >&2; exit 2; }
done
case "$p" in '' | *[!0-9]* | 0) echo "run_pdgemm_bench.sh: P must be a positive integer, not '$p'" >&2; exit 2 ;; esac
mpirun=${MPIRUN:-mpirun}
if [ "$(id -u)" = 0 ]; then # Open MPI refuses root unless told (as bsprun does)
  OMPI_ALLOW_RUN_AS_ROOT=1
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
c=1
while [ $((c * c)) -lt "$p" ]; do c=$((c + 1)); done
q=$((c * c * c))
rows=1 d=1
while [ $((d * d)) -le "$p" ]; do
  [ $((p % d)) -ne 0 ] || rows=$d
  d=$((d + 1))
done
grid=${rows}x$((p / rows))
cores=$(nproc 2>/dev/null || echo 1)

out=$root/results/algorithms
mkdir -p "$out"
txt=$out/pdgemm_bench_p$p.txt
log=$out/pdgemm_bench_p$p.log
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$log"
note() { echo "$*" | tee -a "$log"; }
note "load before: $(uptime)"
note "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $cores cores; OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
note "P = $p, n in $n_list, bspalg-matmul blockcyclic q = $q on $backends, pdgemm grid $grid nb = $nb, $rounds rounds; commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ "$p" -le "$cores" ]; then bind="--bind-to core"; else
  bind="--oversubscribe --bind-to none"
  note "P = $p is OVERSUBSCRIBED: $p processes on $cores cores"
fi

# measure LABEL N COMMAND...: one run; "LABEL N seconds" in the log, or "LABEL N failed" with
# the command's output.
measure() {
  label=$1 size=$2
  shift 2
  t=
  if "$@" > "$tmp/out" 2>&1; then
    t=$(sed -n -e 's/.*time_s=\([0-9.]*\).*/\1/p' -e 's/.*: \([0-9.]*\) s (median.*/\1/p' "$tmp/out" | head -n 1)
  fi
  if [ -n "$t" ]; then
    echo "$label $size $t" >> "$log"
  else
    echo "$label $size failed" >> "$log"
    sed 's/^/  | /' "$tmp/out" | tail -n 20 >> "$log"
    echo "run_pdgemm_bench.sh: $label at n = $size failed (its output is in $log)" >&2
  fi
}

round=1
while [ "$round" -le "$rounds" ]; do
  echo "round $round of $rounds" >&2
  for n in $n_list; do
    for b in $backends; do
      measure "bspalg-matmul-$b-q$q" "$n" "$build/bin/bsprun" -b "$b" -n "$p" \
        "$build/bin/bspalg-matmul" --dist blockcyclic --q "$q" --size "$n" --reps 1 --no-check
    done
    # shellcheck disable=SC2086 # $bind is two or three words on purpose
    OPENBLAS_NUM_THREADS=1 measure "pdgemm-$grid-nb$nb" "$n" "$mpirun" -n "$p" $bind \
      "$build/bench/matmul_pdgemm" --size "$n" --nb "$nb" --grid "$grid" --reps 1 --no-check
  done
  round=$((round + 1))
done
note "load after: $(uptime)"

{
  echo "C = A B beside PBLAS (thesis Fig. 4.11), P = $p: medians of $rounds rounds"
  echo "F = n^3 / T in Gflop/s (n^3, not 2 n^3: the thesis' effective flop rate, half the usual rate)"
  awk '
    function median(list,   a, k, i, j, x) {
      k = split(list, a, " ")
      for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    NF == 3 && $3 != "failed" && $1 ~ /^(bspalg-matmul|pdgemm)/ {
      key = $1 " " $2
      if (!(key in t)) order[++count] = key
      t[key] = t[key] " " $3
    }
    END {
      printf "%-32s %7s %10s %12s\n", "program", "n", "time s", "F Gflop/s"
      for (i = 1; i <= count; i++) {
        split(order[i], part, " "); tm = median(t[order[i]])
        printf "%-32s %7d %10.4f %12.3f\n", part[1], part[2], tm, part[2] ^ 3 / tm / 1e9
      }
    }' "$log"
} > "$txt"
cat "$txt"
echo "(table: $txt; every time and the machine: $log)"
