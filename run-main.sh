#!/usr/bin/env bash
# run-main.sh - the main job: installs what is missing, builds bspkit, measures this machine
# with `bspkit probe` on the default threads back end with one BSP process per core, fits
# the BSP parameters and writes the report:
#   results/probe/<host>-threads-p<P>-<time>/{raw.jsonl,params.json,report.html}
# Options: --quick  a short run (about half a minute);  --microbench  also run the library
# microbenchmarks (bench/run_microbench.sh);  -h, --help  this text.
# Anything after `--` goes to `bspkit probe` (see `.venv/bin/bspkit probe --help`).
set -euo pipefail
cd "$(dirname "$0")"
probe_args=()
microbench=0
while (($#)); do
  case "$1" in
    --quick) probe_args+=(--quick) ;;
    --microbench) microbench=1 ;;
    --) shift; probe_args+=("$@"); break ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-main.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

scripts/setup.sh
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
echo "run-main: building (build/)" >&2
scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
.venv/bin/bspkit probe --build-dir build "${probe_args[@]}"
if [ "$microbench" -eq 1 ]; then
  bench/run_microbench.sh build
fi
