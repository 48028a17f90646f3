#!/usr/bin/env bash
# sweep_errors.sh [--build DIR] [--backends "threads mpi mpi-rma"] [--procs "2 3 4 8"]
#                 [--reps N] [--limit S]
#
# Runs every case of tests/errors/bsp_errors (bsp_errors --list) on every back end at every
# process count, N times each (default 5), and counts the outcomes: "clear" is exit status
# 1, exactly one line starting with "bspkit: " on stderr, and an end within S seconds
# (default 5); anything else is "other" and is printed with what happened. crash1 (a process
# killed by a signal) counts as clear when the run ends with status 1 on MPI (bsprun maps
# it) or 139 on threads (the whole program is the crashed process), within the limit.
# Prints the table case x back end x p (clear/runs) and exits 1 if any run was "other".
# It is the repeated form of the ctest cases errors.* (which run each once); it takes
# about 10 minutes per repetition on a 2-core machine, so it is not part of ctest.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build backends="threads mpi mpi-rma" procs="2 3 4 8" reps=5 limit=5
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --backends) backends=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sweep_errors.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
done
exe=$build/tests/errors/bsp_errors bsprun=$build/bin/bsprun
[ -x "$exe" ] && [ -x "$bsprun" ] || { echo "sweep_errors.sh: build first ($exe, $bsprun)" >&2; exit 2; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

declare -A clear runs
others=0
cases=$("$exe" --list)
total=$(( $(wc -w <<<"$cases") * $(wc -w <<<"$backends") * $(wc -w <<<"$procs") * reps ))
done_runs=0
for ((r = 1; r <= reps; r++)); do
  for b in $backends; do
    for p in $procs; do
      for c in $cases; do
        key="$c $b $p"
        start=$(date +%s%N)
        timeout -k 2 $((limit * 2)) "$bsprun" -b "$b" -n "$p" "$exe" "$c" >"$tmp/out" 2>"$tmp/err" </dev/null
        st=$?
        ms=$(( ($(date +%s%N) - start) / 1000000 ))
        n=$(grep -c -e '^bspkit: ' "$tmp/err")
        ok=0
        if [ "$c" = crash1 ]; then
          { [ $st = 1 ] || { [ "$b" = threads ] && [ $st = 139 ]; }; } && ok=1
        else
          [ $st = 1 ] && [ "$n" = 1 ] && ok=1
        fi
        [ $ms -le $((limit * 1000)) ] || ok=0
        runs[$key]=$(( ${runs[$key]:-0} + 1 ))
        if [ $ok = 1 ]; then
          clear[$key]=$(( ${clear[$key]:-0} + 1 ))
        else
          others=$((others + 1))
          echo "OTHER: $c on $b p=$p (rep $r): status $st, $n bspkit line(s), ${ms} ms:" \
               "$(grep -v '^\s*$' "$tmp/err" | head -n 3 | tr '\n' '|' | cut -c1-300)"
        fi
        done_runs=$((done_runs + 1))
      done
      echo "progress: $done_runs of $total runs (rep $r, $b, p=$p), $others other" >&2
    done
  done
done

printf '\n%-22s' case
for b in $backends; do for p in $procs; do printf ' %9s' "$b/$p"; done; done
echo
for c in $cases; do
  printf '%-22s' "$c"
  for b in $backends; do for p in $procs; do
    printf ' %9s' "${clear[$c $b $p]:-0}/${runs[$c $b $p]:-0}"
  done; done
  echo
done
echo "runs: $done_runs, other: $others"
[ $others = 0 ]
