#!/bin/sh
# run_lu_bench.sh [BUILD_DIR] [N] [ROUNDS] - the BSP LU decomposition (bspalg-lu) beside
# ScaLAPACK's pdgetrf and LAPACK's dgetrf, alternating in one run so that all of them see the same
# machine state; builds nothing. Each round runs, for every block size in NB_LIST (default 64) and
# every grid in GRIDS (default "1x2 2x1", P = R C processes, all grids of one P):
#   bspalg-lu on threads, bspalg-lu on the mpi back end, lu_scalapack (mpirun --bind-to core,
#   one BLAS thread per rank);
# then lu_lapack (OpenBLAS dgetrf) on 1 and on P threads, and, when BSPEDUPACK_DIR names a copy of
# BSPedupack 2.0 (outside this repository), its unblocked bsplu on threads with the same grid
# (its own M x N cyclic distribution; built here with bspcc in a temporary directory).
# Every program factors a random n x n matrix with entries in [-1, 1); ours and the peers run
# without their checks (tested elsewhere). The table gives medians over the rounds: time,
# GFLOP/s (2/3 n^3 flops) and the time in communication: for bspalg-lu the JSON's
# time_sync_s (inside bsp_sync, min over processes); for ScaLAPACK the paper's estimate (Horvitz &
# Bisseling sec. 3: computation and idling are the same in both, so its communication is its
# time minus bspalg-lu's (mpi) time outside communication).
# Environment: NB_LIST, GRIDS, BSPEDUPACK_DIR, MPIRUN (default mpirun).
# Results: results/algorithms/lu_bench_n<N>.txt (the table) and .log (every time, the machine).
set -eu
build=${1:-build}
n=${2:-4000}
rounds=${3:-5}
nb_list=${NB_LIST:-64}
grids=${GRIDS:-1x2 2x1}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
for f in "$build/bin/bsprun" "$build/bin/bspalg-lu" "$build/bench/lu_lapack"; do
  [ -x "$f" ] || { echo "run_lu_bench.sh: $f not found; build first (cmake --build $build)" >&2; exit 2; }
done
mpirun=${MPIRUN:-mpirun}
if [ "$(id -u)" = 0 ]; then # Open MPI refuses root unless told (as bsprun does)
  OMPI_ALLOW_RUN_AS_ROOT=1
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
cores=$(nproc 2>/dev/null || echo 1)
p=
for g in $grids; do
  r=${g%x*} c=${g#*x}
  case "$r$c" in '' | *[!0-9]*) echo "run_lu_bench.sh: a grid is RxC, not '$g'" >&2; exit 2 ;; esac
  [ -z "$p" ] || [ "$p" = $((r * c)) ] || { echo "run_lu_bench.sh: GRIDS must all have the same P" >&2; exit 2; }
  p=$((r * c))
done

out=$root/results/algorithms
mkdir -p "$out"
txt=$out/lu_bench_n$n.txt
log=$out/lu_bench_n$n.log
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$log"
note() { echo "$*" | tee -a "$log"; }

note "load before: $(uptime)"
note "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $cores cores; OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
note "n = $n, grids $grids (P = $p), nb $nb_list, $rounds rounds; commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ "$p" -le "$cores" ]; then bind="--bind-to core"; else
  bind="--oversubscribe --bind-to none"
  note "P = $p is OVERSUBSCRIBED: $p processes on $cores cores"
fi
have_scalapack=0
if [ -x "$build/bench/lu_scalapack" ]; then have_scalapack=1; else note "skipped: ScaLAPACK (no $build/bench/lu_scalapack)"; fi
have_bsplu=0
if [ -n "${BSPEDUPACK_DIR:-}" ]; then
  if [ -f "$BSPEDUPACK_DIR/bsplu.c" ] && cp -r "$BSPEDUPACK_DIR" "$tmp/bspedupack" \
    && make -C "$tmp/bspedupack" -s CC="$build/bin/bspcc" lu > "$tmp/make.log" 2>&1; then
    have_bsplu=1
    note "BSPedupack bsplu: built from $BSPEDUPACK_DIR with bspcc"
  else
    note "skipped: BSPedupack's bsplu (cannot build it from $BSPEDUPACK_DIR; see $tmp/make.log)"
  fi
fi

# measure LABEL COMMAND...: one run; "LABEL seconds [communication seconds]" in the log, or
# "LABEL failed" with the command's output.
measure() {
  label=$1
  shift
  t=
  if "$@" > "$tmp/out" 2>&1; then
    t=$(sed -n -e 's/.*time_s=\([0-9.]*\).*/\1/p' -e 's/.*This took only \([0-9.]*\) seconds.*/\1/p' "$tmp/out" | head -n 1)
    if [ -f "$tmp/run.json" ]; then
      t=$(sed -n 's/.*"time_s": \([0-9.e+-]*\),.*"time_sync_s": \([0-9.e+-]*\),.*/\1 \2/p' "$tmp/run.json")
      rm -f "$tmp/run.json"
    fi
  fi
  if [ -n "$t" ]; then
    echo "$label $t" >> "$log"
  else
    echo "$label failed" >> "$log"
    sed 's/^/  | /' "$tmp/out" | tail -n 20 >> "$log"
    echo "run_lu_bench.sh: $label failed (its output is in $log)" >&2
  fi
}
ours() { # back end, grid, nb
  measure "bspalg-lu-$1-$2-nb$3" "$build/bin/bsprun" -b "$1" -n "$p" "$build/bin/bspalg-lu" \
    --size "$n" --nb "$3" --grid "$2" --reps 1 --no-check --json "$tmp/run.json"
}
scalapack() { # grid, nb
  # shellcheck disable=SC2086 # $bind is two or three words on purpose
  OPENBLAS_NUM_THREADS=1 measure "scalapack-$1-nb$2" "$mpirun" -n "$p" $bind \
    "$build/bench/lu_scalapack" --size "$n" --nb "$2" --grid "$1" --reps 1 --no-check
}
bsplu() { # grid: bsplu asks for M, N and n on stdin and prints the whole factorization after
  # its time line: the output is cut after that line (its writer then ends on SIGPIPE)
  printf '%s\n%s\n%s\n' "${1%x*}" "${1#*x}" "$n" > "$tmp/stdin"
  measure "bsplu-threads-$1" sh -c '"$1" -b threads -n "$2" "$3" < "$4" | sed "/This took only/q"' \
    sh "$build/bin/bsprun" "$p" "$tmp/bspedupack/lu" "$tmp/stdin"
}

round=1
while [ "$round" -le "$rounds" ]; do
  echo "round $round of $rounds" >&2
  for nb in $nb_list; do
    for g in $grids; do
      ours threads "$g" "$nb"
      ours mpi "$g" "$nb"
      [ $have_scalapack = 0 ] || scalapack "$g" "$nb"
    done
  done
  measure lapack-1t "$build/bench/lu_lapack" --size "$n" --threads 1 --reps 1 --no-check
  measure "lapack-${p}t" "$build/bench/lu_lapack" --size "$n" --threads "$p" --reps 1 --no-check
  if [ $have_bsplu = 1 ]; then for g in $grids; do bsplu "$g"; done; fi
  round=$((round + 1))
done
note "load after: $(uptime)"

# The table: per label the median time (and communication) over the rounds.
{
  echo "LU decomposition, n = $n, P = $p: medians of $rounds rounds (GFLOP/s = 2/3 n^3 / time)"
  echo "communication: bspalg-lu's time inside bsp_sync (min over processes); ScaLAPACK's is its"
  echo "time - (bspalg-lu on mpi, same grid and nb: time - communication), the paper's estimate"
  awk -v n="$n" '
    function median(list,   a, k, m, i, j, x) {
      k = split(list, a, " ")
      for (i = 2; i <= k; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
      return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
    }
    NF >= 2 && $2 != "failed" && $1 ~ /^(bspalg-lu|scalapack|lapack|bsplu)/ {
      if (!($1 in t)) order[++count] = $1
      t[$1] = t[$1] " " $2
      if (NF >= 3) c[$1] = c[$1] " " $3
    }
    END {
      printf "%-34s %9s %9s %12s\n", "program", "time s", "GFLOP/s", "comm s"
      flops = 2.0 / 3.0 * n * n * n
      for (i = 1; i <= count; i++) {
        l = order[i]; tm = median(t[l]); comm = "-"
        if (l in c) { cm = median(c[l]); comm = sprintf("%.4f", cm); compute[l] = tm - cm }
        if (l ~ /^scalapack-/) {
          ref = l; sub(/^scalapack-/, "bspalg-lu-mpi-", ref)
          if (ref in compute) comm = sprintf("%.4f", tm - compute[ref])
        }
        printf "%-34s %9.4f %9.2f %12s\n", l, tm, flops / tm / 1e9, comm
      }
    }' "$log"
} > "$txt"
cat "$txt"
echo "(table: $txt; every time and the machine: $log)"
