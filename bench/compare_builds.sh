#!/usr/bin/env bash
# compare_builds.sh BEFORE_BUILD AFTER_BUILD [ROUNDS] - the speed of two builds of libbsp
# (e.g. before and after a change), measured in one run, alternating.
#
# For each back end (threads: bsp_microbench; mpi, mpi-rma: bsp_mpi_microbench, at p = 2),
# runs the benchmarks sync, put and hpput of a large block, and one-word put and send with
# --quick, ROUNDS times (default 5) per build, the builds alternating (before first in odd
# rounds, after first in even ones). Prints, per benchmark, the median over rounds of each
# build's median ("ours_med" column) and the ratio after / before, with the machine's load
# before and after and the BLAS core type. Builds nothing: build both first.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
before=$(cd "$1" && pwd) after=$(cd "$2" && pwd) rounds=${3:-5}
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT

run() { # run BUILD BACKEND -> prints "benchmark ours_med unit" lines
  local build=$1 backend=$2
  if [ "$backend" = threads ]; then
    "$build/bin/bsprun" -b threads -n 2 "$build/bench/bsp_microbench" --quick \
      --only sync,hpput_1MiB,put_1MiB,put_word,send_word 2>/dev/null
  else
    "$build/bin/bsprun" -b "$backend" -n 2 "$build/bench/bsp_mpi_microbench" --quick \
      --only sync,hpput_8MiB,put_8MiB,put_word,send_word 2>/dev/null
  fi | awk '!/^#/ && $1 != "benchmark" && NF > 4 { print $1, $3, $12 }'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
for backend in threads mpi mpi-rma; do
  for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then order="before after"; else order="after before"; fi
    for which in $order; do
      build=$before; [ "$which" = after ] && build=$after
      run "$build" "$backend" | sed "s/^/$which /" >>"$tmp/$backend"
    done
  done
  echo
  echo "== $backend, p = 2, $rounds alternating rounds: median of per-run medians"
  python3 - "$tmp/$backend" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    which, name, med, unit = line.split()
    rows.setdefault((name, unit), {}).setdefault(which, []).append(float(med))
print(f"{'benchmark':12s} {'unit':12s} {'before':>10s} {'after':>10s} {'after/before':>13s}  (spread after: min..max)")
for (name, unit), d in rows.items():
    b, a = statistics.median(d["before"]), statistics.median(d["after"])
    print(f"{name:12s} {unit:12s} {b:10.3f} {a:10.3f} {a / b:13.2f}  ({min(d['after']):.3f}..{max(d['after']):.3f})")
EOF
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
