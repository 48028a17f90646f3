#!/usr/bin/env bash
# run-main.sh - the main job: installs what is missing, builds bspkit, measures this machine
# on the default threads back end and writes results/main/REPORT.md.
#
# Until bspprobe exists (issue: "bspprobe and the bspkit command"), the measurement is
#   - the BSPlib microbenchmarks (empty sync, 1 MiB hpput/put/get, one-word put and send,
#     each against its raw counterpart in the same run) at p = 2 and, oversubscribed, at
#     p = 2 x cores;
#   - the BSP inner product example at p = cores, checked against the exact result.
# Options: --quick  fewer rounds (a few seconds);  -h, --help  this text.
set -euo pipefail
cd "$(dirname "$0")"
quick=()
for arg in "$@"; do
  case "$arg" in
    --quick) quick=(--quick) ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-main.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

scripts/setup.sh
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
echo "run-main: building (build/)" >&2
scripts/build.sh build -DCMAKE_BUILD_TYPE=Release

out=results/main
mkdir -p "$out"
cores=$(nproc)
bsprun=build/bin/bsprun
report=$out/REPORT.md
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

microbench() { # P
  echo "run-main: microbenchmarks at p=$1 (progress below)" >&2
  "$bsprun" -n "$1" build/bench/bsp_microbench "${quick[@]}" --json "$out/microbench_p$1.jsonl" \
    | tee "$out/microbench_p$1.txt"
}
microbench 2
microbench $((2 * cores))
echo "run-main: inner product at p=$cores" >&2
"$bsprun" -n "$cores" build/examples/inner_product 10000000 | tee "$out/inner_product.txt"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

{
  echo "# bspkit main job: $(hostname), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo
  echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $cores cores available"
  echo "- kernel: $(uname -sr); compiler: $(cc --version | head -1)"
  echo "- back end: threads; BLAS core type (OPENBLAS_CORETYPE): $OPENBLAS_CORETYPE"
  echo "- load average before: $load_before; after: $load_after (a load above the core count means a noisy run)"
  echo
  echo "Medians over alternating rounds; ratio = ours / raw counterpart, taken in the same run."
  for p in 2 $((2 * cores)); do
    echo
    echo "## Microbenchmarks, p = $p"
    echo
    echo '```'
    cat "$out/microbench_p$p.txt"
    echo '```'
  done
  echo
  echo "## Inner product, p = $cores"
  echo
  echo '```'
  cat "$out/inner_product.txt"
  echo '```'
} > "$report"
echo "run-main: report written to $report" >&2
