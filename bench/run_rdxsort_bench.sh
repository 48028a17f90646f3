#!/bin/sh
# run_rdxsort_bench.sh [BUILD_DIR] [N] [ROUNDS] - the parallel radix sorts (bspalg-rdxsort)
# beside the sorts people use and the same sort written directly against MPI, alternating in
# one run (so that all of them see the same machine state); builds nothing. N keys (default
# 2^25 = 33554432) of 32 bits, uniform, seed 1: every C program sorts the same keys.
#
# Each round runs, in turn:
#   bspalg-rdxsort at p = 1 on threads (plain, opt, combined: the speedup baselines);
#   __gnu_parallel::sort on PEER_THREADS threads (default 2);
#   for each p in P_LIST (default "2"): bspalg-rdxsort at p on threads (plain, opt, combined);
#   tbb::parallel_sort on PEER_THREADS threads;
#   for each p in P_LIST: bspalg-rdxsort at p on the mpi back end (combined, plain) and
#     rdxsort_mpi (the two-sided MPI version) at p (mpirun --bind-to core);
#   Boost's spreadsort, Highway's vqsort, std::sort, rdx_sort_sequential (rdx-seq: our local
#     pass as a sequential sort) and numpy's sort (bench/numpy_sort.py, numpy's own uniform
#     keys; numpy's sort of uint32 is x86-simd-sort's code, AVX-512 or AVX2, where the CPU has
#     it) on one core;
#   STREAM's copy and triad (bench/stream_bw) on one core and on every core.
# The summary sets the local pass and our fastest p > 1 run against the fastest single-core
# peer (T(peer) / T: at least 1 and 1.6 are issue 41's targets) and against the memory: the
# sort's rate, 2 key_bytes n bytes per round (every round reads and writes every key once: the
# least an LSD pass moves), over STREAM's copy and triad on as many cores.
# Our drivers run with --reps 1 --no-check (each program's own check is tested elsewhere; the
# peers check their result, untimed); the table gives medians over the rounds. A p beyond the
# cores (e.g. P_LIST="2 4" on a 2-core machine) runs oversubscribed (bsprun and this script
# then use --oversubscribe --bind-to none) and the output says so.
# BITS (default 8, the paper's) is the digit width of our drivers and rdxsort_mpi (e.g. BITS=11:
# three rounds instead of four); SEQ_BITS that of rdx_sort_sequential (default 0: its own
# choice by n, rdx_sequential_bits).
# Environment: P_LIST, PEER_THREADS, BITS, SEQ_BITS, PYTHON (default: the repository's .venv/bin/python, else
# python3; numpy is skipped when it cannot import it), MPIRUN (default mpirun).
# Results: results/algorithms/rdxsort_bench_n<N>_b<BITS>.txt (the table) and .log (every time, the
# machine: CPU model, load before and after, OPENBLAS_CORETYPE).
set -eu
build=${1:-build}
n=${2:-33554432}
rounds=${3:-5}
p_list=${P_LIST:-2}
peer_threads=${PEER_THREADS:-2}
bits=${BITS:-8}
seq_bits=${SEQ_BITS:-0}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
for f in "$build/bin/bsprun" "$build/bin/bspalg-rdxsort" "$build/bench/sort_peers"; do
  [ -x "$f" ] || { echo "run_rdxsort_bench.sh: $f not found; build first (cmake --build $build)" >&2; exit 2; }
done
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$root/.venv/bin/python" ]; then PYTHON=$root/.venv/bin/python; else PYTHON=python3; fi
fi
mpirun=${MPIRUN:-mpirun}
if [ "$(id -u)" = 0 ]; then # Open MPI refuses root unless told (as bsprun does)
  OMPI_ALLOW_RUN_AS_ROOT=1
  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
cores=$(nproc 2>/dev/null || echo 1)

out=$root/results/algorithms
mkdir -p "$out"
txt=$out/rdxsort_bench_n${n}_b$bits.txt
log=$out/rdxsort_bench_n${n}_b$bits.log
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
: > "$log"
note() { echo "$*" | tee -a "$log"; }

note "load before: $(uptime)"
note "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $cores cores; OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
note "n = $n uniform 32-bit keys, $bits-bit digits, $rounds rounds, P_LIST = $p_list, peers on $peer_threads threads;" \
  "commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
for p in $p_list; do
  [ "$p" -le "$cores" ] || note "p = $p is OVERSUBSCRIBED: $p processes on $cores cores (--oversubscribe --bind-to none)"
done

# What can run here: the MPI runs need rdxsort_mpi (built only with MPI), each peer its library.
have_mpi=0
if [ -x "$build/bench/rdxsort_mpi" ]; then have_mpi=1; else note "no $build/bench/rdxsort_mpi (built only with MPI): no mpi runs"; fi
built_peers=$("$build/bench/sort_peers" --help | sed -n 's/^Built in://p')
"$build/bench/sort_peers" --help | sed -n 's/^Not built in: /skipped, not built in: /p' | tee -a "$log"
have_peer() { case " $built_peers " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
have_stream=0
if [ -x "$build/bench/stream_bw" ]; then have_stream=1; else note "no $build/bench/stream_bw: no STREAM reference"; fi
have_numpy=0
if "$PYTHON" -c 'import numpy' 2>/dev/null; then have_numpy=1; else note "skipped: numpy ($PYTHON cannot import it)"; fi

# measure LABEL SED_SCRIPT COMMAND...: one run; "LABEL seconds" in the log, or "LABEL failed"
# with the command's output.
measure() {
  label=$1 pattern=$2
  shift 2
  t=
  if "$@" > "$tmp" 2>&1; then t=$(sed -n "$pattern" "$tmp" | head -n 1); fi
  if [ -n "$t" ]; then
    echo "$label $t" >> "$log"
  else
    echo "$label failed" >> "$log"
    sed 's/^/  | /' "$tmp" >> "$log"
    echo "run_rdxsort_bench.sh: $label failed (its output is in $log)" >&2
  fi
}
driver_time='s/.*: \([0-9.]*\) s (median.*/\1/p'
peer_time='s/.*median_s=\([0-9.]*\).*/\1/p'
ours() { # back end, p, variant
  measure "$1-p$2-$3" "$driver_time" \
    "$build/bin/bsprun" -b "$1" -n "$2" "$build/bin/bspalg-rdxsort" --variant "$3" --bits "$bits" --size "$n" --reps 1 --no-check
}
mpi_reference() { # p
  if [ "$1" -le "$cores" ]; then bind="--bind-to core"; else bind="--oversubscribe --bind-to none"; fi
  # shellcheck disable=SC2086 # $bind is two or three words on purpose
  measure "rdxsort_mpi-p$1" "$peer_time" "$mpirun" -n "$1" $bind "$build/bench/rdxsort_mpi" --size "$n" --bits "$bits" -r 1
}
peer() { # sort, threads
  have_peer "$1" || return 0
  digits=
  [ "$1" != rdx-seq ] || digits="--bits $seq_bits"
  # shellcheck disable=SC2086 # $digits is zero or two words on purpose
  measure "$1-$2t" "$peer_time" "$build/bench/sort_peers" --sort "$1" --threads "$2" --size "$n" $digits -r 1
}
stream() { # threads: "stream-copy-<T>t GB/s" and "stream-triad-<T>t GB/s" in the log
  [ $have_stream = 1 ] || return 0
  measure "stream-copy-$1t" 's/.* copy_GBps=\([0-9.]*\).*/\1/p' "$build/bench/stream_bw" --threads "$1" -r 3
  t=$(sed -n 's/.* triad_GBps=\([0-9.]*\).*/\1/p' "$tmp")
  [ -z "$t" ] || echo "stream-triad-$1t $t" >> "$log"
}

r=1
while [ "$r" -le "$rounds" ]; do
  echo "round $r of $rounds" >&2
  for v in plain opt combined; do ours threads 1 "$v"; done
  peer gnu-parallel "$peer_threads"
  for p in $p_list; do
    [ "$p" = 1 ] || for v in plain opt combined; do ours threads "$p" "$v"; done
  done
  peer tbb "$peer_threads"
  if [ $have_mpi = 1 ]; then
    for p in $p_list; do
      ours mpi "$p" combined
      ours mpi "$p" plain
      mpi_reference "$p"
    done
  fi
  stream 1
  peer spreadsort 1
  peer vqsort 1
  peer std 1
  peer rdx-seq 1
  [ "$r" -gt 1 ] || echo "rdx-seq-bits $(sed -n 's/.* bits=\([0-9]*\) .*/\1/p' "$tmp")" >> "$log"
  [ "$cores" = 1 ] || stream "$cores"
  if [ $have_numpy = 1 ]; then
    measure numpy-1t "$peer_time" "$PYTHON" "$root/bench/numpy_sort.py" --size "$n" -r 1
    [ "$r" -gt 1 ] || note "numpy: $(sed -n 's/.*\(numpy=.*\)/\1/p' "$tmp")"
  fi
  r=$((r + 1))
done
note "load after: $(uptime)"

# The table's rows, in this order (those that never ran are left out).
rows="threads-p1-plain threads-p1-opt threads-p1-combined"
for p in $p_list; do
  [ "$p" = 1 ] || rows="$rows threads-p$p-plain threads-p$p-opt threads-p$p-combined"
  rows="$rows mpi-p$p-plain mpi-p$p-combined rdxsort_mpi-p$p"
done
rows="$rows gnu-parallel-${peer_threads}t tbb-${peer_threads}t spreadsort-1t vqsort-1t std-1t numpy-1t rdx-seq-1t"

awk -v rows="$rows" -v cores="$cores" -v n="$n" -v bits="$bits" '
  $1 ~ /^[a-z0-9_-]+$/ && NF == 2 {
    if ($2 ~ /^[0-9.]+$/) { v[$1] = v[$1] " " $2 } else { failed[$1]++ }
  }
  function median(s,   a, m, i, j, t) {
    m = split(s, a, " ")
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  function is_peer(label) { return label ~ /^(gnu-parallel|tbb|spreadsort|vqsort|std|numpy)-/ }
  function single_core_peer(label) { return is_peer(label) && label ~ /-1t$/ }
  # the STREAM rows and rdx-seq-bits are not runs of the table
  function gbps(label) { return v[label] == "" ? "" : median(v[label]) }
  END {
    nrows = split(rows, row, " ")
    best1 = ""; bestpeer = ""
    for (i = 1; i <= nrows; i++) {
      l = row[i]
      if (v[l] == "") continue
      med[l] = median(v[l]); count[l] = split(v[l], scratch, " ")
      if (l ~ /^threads-p1-/ && (best1 == "" || med[l] < med[best1])) best1 = l
      if (is_peer(l) && (bestpeer == "" || med[l] < med[bestpeer])) bestpeer = l
      if (single_core_peer(l) && (best1peer == "" || med[l] < med[best1peer])) best1peer = l
      if (l ~ /^(threads|mpi)-p[0-9]+-/ && l !~ /-p1-/ && (bestpar == "" || med[l] < med[bestpar])) bestpar = l
    }
    printf "n = %d keys; medians over the rounds; fastest peer: %s\n\n", n, bestpeer == "" ? "none" : bestpeer
    printf "%-22s %4s %10s %8s %10s %11s\n", "run", "p", "median s", "speedup", "T/T(peer)", "T/T(mpi ref)"
    over = 0
    for (i = 1; i <= nrows; i++) {
      l = row[i]
      if (v[l] == "" && !failed[l]) continue
      p = ""
      if (match(l, /-p[0-9]+/)) p = substr(l, RSTART + 2, RLENGTH - 2)
      else if (match(l, /-[0-9]+t$/)) p = substr(l, RSTART + 1, RLENGTH - 2)
      pmark = p (p + 0 > cores ? "*" : ""); if (p + 0 > cores) over = 1
      if (v[l] == "") { printf "%-22s %4s %10s   (failed in all %d rounds: see the log)\n", l, pmark, "-", failed[l]; continue }
      # speedup: against our p = 1 run of the same variant; rdxsort_mpi and the peers against
      # our fastest p = 1 variant
      variant = l; sub(/^.*-p[0-9]+-/, "", variant)
      base = (l ~ /^(threads|mpi)-p[0-9]+-/ && v["threads-p1-" variant] != "") ? "threads-p1-" variant : best1
      speedup = base == "" ? "" : sprintf("%.2f", med[base] / med[l])
      ratio = bestpeer == "" ? "" : sprintf("%.3f", med[l] / med[bestpeer])
      ref = "rdxsort_mpi-p" p
      vsref = (l ~ /^(threads|mpi)-p/ && v[ref] != "") ? sprintf("%.3f", med[l] / med[ref]) : ""
      note = failed[l] ? sprintf("  (%d of %d rounds failed)", failed[l], failed[l] + count[l]) : ""
      printf "%-22s %4s %10.4f %8s %10s %11s%s\n", l, pmark, med[l], speedup, ratio, vsref, note
    }
    printf "\np: processes, or threads for the peers. speedup: T(ours, p = 1, threads, same variant) / T;\n"
    printf "for rdxsort_mpi, the peers and rdx-seq: T(our fastest p = 1 variant, %s) / T.\n", best1
    printf "T/T(peer): against the fastest peer (%s); T/T(mpi ref): against rdxsort_mpi at the same p.\n", bestpeer
    printf "numpy sorts its own uniform keys (numpy.random), the others the same keys (rdx_make_keys);\n"
    printf "numpy'"'"'s sort of uint32 is x86-simd-sort'"'"'s code (AVX-512 or AVX2) where the CPU has it.\n"
    if (over) printf "*: OVERSUBSCRIBED, more processes than the %d cores.\n", cores

    # Against the fastest single-core peer and against the memory.
    seqbits = v["rdx-seq-bits"] + 0
    printf "\nAgainst the fastest single-core peer (%s", best1peer == "" ? "none ran" : best1peer
    if (best1peer != "") printf ", %.4f s", med[best1peer]
    printf "): T(peer) / T, at least 1 (local pass) and 1.6 (p > 1) the targets\n"
    if (best1peer != "" && med["rdx-seq-1t"] != "")
      printf "  local pass (rdx-seq, %d-bit digits, one core)  %.2f\n", seqbits, med[best1peer] / med["rdx-seq-1t"]
    if (best1peer != "" && bestpar != "")
      printf "  fastest p > 1 run (%s)  %.2f\n", bestpar, med[best1peer] / med[bestpar]
    copy1 = gbps("stream-copy-1t"); triad1 = gbps("stream-triad-1t")
    copyall = gbps("stream-copy-" cores "t"); triadall = gbps("stream-triad-" cores "t")
    if (copy1 == "" && copyall == "") exit
    printf "\nSTREAM (GB/s, medians over the rounds of each run'"'"'s median of 3; copy 16, triad 24 bytes an element):\n"
    if (copy1 != "") printf "  1 core      copy %7.2f  triad %7.2f\n", copy1, triad1
    if (copyall != "") printf "  %d cores     copy %7.2f  triad %7.2f\n", cores, copyall, triadall
    printf "Sort rates: 2 x 4 bytes x n per round (each round reads and writes every key once), over STREAM on as many cores:\n"
    if (med["rdx-seq-1t"] != "" && copy1 != "" && seqbits > 0) {
      rate = 8.0 * n * int((32 + seqbits - 1) / seqbits) / med["rdx-seq-1t"] * 1e-9
      printf "  %-20s %7.2f GB/s = %.2f of copy, %.2f of triad (1 core)\n", "rdx-seq-1t", rate, rate / copy1, rate / triad1
    }
    if (bestpar != "" && copyall != "") {
      rate = 8.0 * n * int((32 + bits - 1) / bits) / med[bestpar] * 1e-9
      printf "  %-20s %7.2f GB/s = %.2f of copy, %.2f of triad (%d cores)\n", bestpar, rate, rate / copyall, rate / triadall, cores
    }
  }' "$log" | tee "$txt"
