#!/usr/bin/env bash
# run_checkpoint_bench.sh [BUILD_DIR] [--dir DIR] [--mib M] [--rounds N] [--procs "1 2"]
# The checkpoint's write bandwidth against dd and fio writing the same bytes to the same
# directory, alternating in ONE run so that all see the same machine state; builds nothing.
# Each of the N rounds (default 5), for each p in --procs (default "1 2"):
#   bspkit  BSPKIT_CHECKPOINT_BACKGROUND=0 bsprun -n p --checkpoint-dir DIR/ckpt checkpoint_bench --mib M --count 3
#           (each process saves M MiB; the median time of one bspk_checkpoint on process 0,
#           which finishes last: write, fsync, rename, then the manifest and its fsyncs);
#   dd      p writers at once, each bs=1M count=M conv=fsync (write, then fsync) to its own file;
#   fio     --rw=write --bs=1M --size=M MiB --numjobs=p --end_fsync=1 (psync), one file per job.
# Reported: MB/s of p * M MiB per round (dd and fio: over their wall-clock time, start-up
# included), and the medians; with the CPU, the load before and
# after, the file system of DIR and OPENBLAS_CORETYPE. DIR (default $TMPDIR, else /tmp) gets
# a temporary directory, removed afterwards. M defaults to 256.
set -euo pipefail
build=build dir=${TMPDIR:-/tmp} mib=256 rounds=5 procs="1 2"
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run_checkpoint_bench.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
bench=$build/bench/checkpoint_bench
[ -x "$bench" ] || { echo "run_checkpoint_bench.sh: $bench not built" >&2; exit 2; }
work=$(mktemp -d "$dir/ckpt-bench.XXXXXX") && trap 'rm -rf "$work"' EXIT
log=$work/log

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); cores $(nproc); OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
echo "file system of $dir: $(df -T "$dir" | awk 'NR == 2 { print $1, $2 }'); $mib MiB per process; $rounds rounds"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; r++)); do
  for p in $procs; do
    bytes=$((p * mib * 1048576))
    rm -rf "$work/ckpt"
    # In the foreground: the time of the call is the write's (in the background it is the copy's).
    line=$(BSPKIT_CHECKPOINT_BACKGROUND=0 "$build/bin/bsprun" -n "$p" --checkpoint-dir "$work/ckpt" "$bench" --mib "$mib" --count 3)
    echo "bspkit $p $(awk '{ for (i = 1; i < NF; i++) if ($i == "write_MBps") print $(i + 1) }' <<<"$line")" >>"$log"
    rm -rf "$work/ckpt"
    start=$(date +%s.%N)
    for ((j = 0; j < p; j++)); do
      dd if=/dev/zero of="$work/dd$j" bs=1M count="$mib" conv=fsync status=none &
    done
    wait
    end=$(date +%s.%N)
    echo "dd $p $(awk -v b="$bytes" -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", b / (e - s) / 1e6 }')" >>"$log"
    rm -f "$work"/dd*
    if command -v fio >/dev/null; then
      start=$(date +%s.%N)
      fio --name=w --directory="$work" --rw=write --bs=1M --size="${mib}M" --numjobs="$p" \
        --end_fsync=1 --ioengine=psync --group_reporting --output-format=terse >/dev/null
      end=$(date +%s.%N)
      echo "fio $p $(awk -v b="$bytes" -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", b / (e - s) / 1e6 }')" >>"$log"
      rm -f "$work"/w.*
    fi
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "MB/s (10^6 bytes) of p * $mib MiB, per round, and the median:"
python3 - "$log" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    tool, p, v = line.split()
    rows.setdefault((tool, int(p)), []).append(float(v))
for (tool, p), v in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    print(f"  {tool:<7} p={p}  median {statistics.median(v):8.1f}   rounds {' '.join(f'{x:.0f}' for x in v)}")
PY
