#!/bin/sh
# run_disk_bench.sh [BUILD_DIR] [--rounds N] [--dir DIR] [--bytes N] [--out DIR] [--quick]
# bspprobe's memory-disk section (Kang et al. 4.2.3) beside fio and dd, sequential reads and
# writes of files of the same size, alternating in ONE run so that all see the same machine
# state; builds nothing. Each of the N rounds (default 5) runs
#   bspprobe  bsprun -n 1 bspprobe --only disk --disk-max-bytes BYTES (files of 4 KiB to BYTES;
#             its own temporary directory under DIR) [--quick with --quick];
#   fio       bs=1M, size=BYTES, psync, --iomem=mmap, one file: write_direct and read_direct (--direct=1),
#             write_buffered (no fsync: bspprobe's "page" write), read_buffered (the file just
#             written, in the page cache, --invalidate=0: bspprobe's "page" read),
#             write_buffered_fsync (--end_fsync=1);
#   dd        bs=1M, BYTES from /dev/zero: write_direct (oflag=direct), read_direct
#             (iflag=direct), write_buffered_fdatasync (conv=fdatasync), write_buffered (no
#             sync), read_buffered (the file just written).
# fio's buffers are anonymous mmap (--iomem=mmap), page-aligned like bspprobe's and dd's: with
# its default malloc'd buffer fio read the page cache at 1.3-2.5 GB/s on a Zen VM where dd and
# fio with mmap read it at 7-13 GB/s (an effect of the buffer, not of the file system).
# bspprobe writes random data, fio its default scrambled buffers, dd zeros (no /dev/urandom:
# it is slower than the disk). Files are overwritten in place (conv=notrunc; fio lays its file
# out once), as bspprobe does, so no timed write allocates blocks.
# The files live in a temporary directory under DIR (default $TMPDIR, else /tmp), removed
# afterwards. BYTES (default 268435456 = 256 MiB) must be a multiple of 1 MiB.
# Results in OUT (default results/disk under the repository root):
#   bspprobe_r<i>.jsonl  bspprobe's raw records of round i (the lead's Python fits them)
#   fio_<job>_r<i>.json  fio's JSON output
#   peers.json           {"fio": {"read_direct_MBps": [per round], ...}, "dd": {...},
#                         "medians": {...}, "bspprobe_raw": [paths], "machine": {...}, ...}
#   summary.txt          the header and the medians (also printed here)
#   run.log              every measurement as it came
# fio is left out (with a note) when it is not installed: scripts/setup.sh installs it.
set -eu
build=build
case ${1:-} in -* | '') ;; *) build=$1 && shift ;; esac
rounds=5 dir=${TMPDIR:-/tmp} bytes=268435456 out= quick=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2 && shift 2 ;;
    --dir) dir=$2 && shift 2 ;;
    --bytes) bytes=$2 && shift 2 ;;
    --out) out=$2 && shift 2 ;;
    --quick) quick=--quick && shift ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//' && exit 0 ;;
    *) echo "run_disk_bench.sh: unknown argument '$1' (see --help)" >&2 && exit 2 ;;
  esac
done
case $rounds$bytes in '' | *[!0-9]*) echo "run_disk_bench.sh: --rounds and --bytes take integers" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] || { echo "run_disk_bench.sh: --rounds must be at least 1" >&2; exit 2; }
mib=$((bytes / 1048576))
[ "$bytes" -gt 0 ] && [ $((mib * 1048576)) = "$bytes" ] \
  || { echo "run_disk_bench.sh: --bytes must be a positive multiple of 1 MiB (1048576)" >&2; exit 2; }
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
[ -n "$out" ] || out=$root/results/disk
for f in "$build/bin/bsprun" "$build/probe/bspprobe"; do
  [ -x "$f" ] || { echo "run_disk_bench.sh: $f not found; build first (cmake --build $build)" >&2; exit 2; }
done
[ -d "$dir" ] || { echo "run_disk_bench.sh: --dir '$dir' is not a directory" >&2; exit 2; }
command -v python3 > /dev/null || { echo "run_disk_bench.sh: python3 is needed for the summary" >&2; exit 2; }
have_fio=1
command -v fio > /dev/null || have_fio=0

mkdir -p "$out"
tmp=$(mktemp -d "$dir/disk-bench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
log=$out/run.log
summary=$out/summary.txt
rm -f "$out"/bspprobe_r*.jsonl "$out"/fio_*_r*.json
export LC_ALL=C
{
  echo "disk bench: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores"
  echo "kernel: $(uname -sr)"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "dir: $dir ($(stat -f -c %T "$dir") file system, $(df -Pk "$dir" | awk 'NR == 2 {print $4}') KiB free)"
  echo "bytes: $bytes ($mib MiB), $rounds rounds; bspprobe ${quick:-full mode}; commit $(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo unknown)"
  [ $have_fio = 1 ] && echo "fio: $(fio --version)" || echo "fio: not installed (left out; scripts/setup.sh installs it)"
  echo "dd: $(dd --version | head -n 1)"
} > "$summary"
cat "$summary"
cp "$summary" "$log"
record() { echo "$*" >> "$log"; } # TOOL METRIC MB/s, or a note

# fio_job NAME ROUND FIO-OPTIONS...: one fio run on the shared file; its bandwidth in MB/s.
fio_job() {
  name=$1 round=$2
  shift 2
  json=$out/fio_${name}_r$round.json
  if fio --name="$name" --filename="$tmp/fio.dat" --bs=1M --size="$bytes" --ioengine=psync \
    --iomem=mmap --output-format=json --output="$json" "$@" > "$tmp/fio.err" 2>&1; then
    mbps=$(python3 -c 'import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index("{"):])["jobs"][0]  # fio may put a warning line first
print("%.1f" % (max(j["read"]["bw_bytes"], j["write"]["bw_bytes"]) / 1e6))' "$json")
    record "fio $name $mbps"
  else
    record "fio $name failed: $(tail -n 3 "$tmp/fio.err" | tr '\n' ' ')"
    echo "run_disk_bench.sh: fio $name failed; see $log" >&2
  fi
}

# dd_job NAME DD-OPERANDS...: one dd; its bandwidth in MB/s from the bytes and seconds it reports.
dd_job() {
  name=$1
  shift
  if dd bs=1M "$@" 2> "$tmp/dd.err"; then
    mbps=$(awk '/ copied, / { for (i = 1; i <= NF; i++) if ($i == "s,") s = $(i - 1); printf "%.1f", $1 / s / 1e6 }' "$tmp/dd.err")
    record "dd $name $mbps"
  else
    record "dd $name failed: $(tail -n 2 "$tmp/dd.err" | tr '\n' ' ')"
    echo "run_disk_bench.sh: dd $name failed; see $log" >&2
  fi
}

# the peers' files laid out once, untimed
dd if=/dev/zero of="$tmp/dd.dat" bs=1M count="$mib" conv=fdatasync 2> /dev/null
[ $have_fio = 0 ] || fio --name=layout --filename="$tmp/fio.dat" --bs=1M --size="$bytes" \
  --rw=write --end_fsync=1 --output-format=json > /dev/null 2>&1

round=1
while [ "$round" -le "$rounds" ]; do
  echo "round $round of $rounds: bspprobe" >&2
  raw=$out/bspprobe_r$round.jsonl
  # shellcheck disable=SC2086 # $quick is empty or one word
  if "$build/bin/bsprun" -n 1 "$build/probe/bspprobe" --only disk $quick --disk-max-bytes "$bytes" \
    --disk-dir "$tmp" --output "$raw" 2> "$tmp/probe.err"; then
    record "bspprobe raw $raw"
  else
    record "bspprobe failed: $(tail -n 3 "$tmp/probe.err" | tr '\n' ' ')"
    echo "run_disk_bench.sh: bspprobe failed in round $round; see $log" >&2
  fi
  if [ $have_fio = 1 ]; then
    echo "round $round of $rounds: fio" >&2
    fio_job write_direct "$round" --rw=write --direct=1
    fio_job read_direct "$round" --rw=read --direct=1
    fio_job write_buffered "$round" --rw=write --direct=0
    fio_job read_buffered "$round" --rw=read --direct=0 --invalidate=0
    fio_job write_buffered_fsync "$round" --rw=write --direct=0 --end_fsync=1
  fi
  echo "round $round of $rounds: dd" >&2
  dd_job write_direct if=/dev/zero of="$tmp/dd.dat" count="$mib" oflag=direct conv=notrunc
  dd_job read_direct if="$tmp/dd.dat" of=/dev/null iflag=direct
  dd_job write_buffered_fdatasync if=/dev/zero of="$tmp/dd.dat" count="$mib" conv=notrunc,fdatasync
  dd_job write_buffered if=/dev/zero of="$tmp/dd.dat" count="$mib" conv=notrunc
  dd_job read_buffered if="$tmp/dd.dat" of=/dev/null
  sync "$tmp/dd.dat" # no dirty page of the last write is left for the next round
  round=$((round + 1))
done
record "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$summary"

# peers.json and the table of medians (bspprobe: the median sample of the largest file, not a
# fit: the fit is the lead's Python)
python3 - "$log" "$out" "$summary" "$bytes" "$rounds" "$dir" << 'EOF'
import json, statistics, sys
log, out, summary, nbytes, rounds, tdir = sys.argv[1:7]
nbytes = int(nbytes)
peers, raws, header = {}, [], {}
for line in open(log):
    w = line.split()
    if len(w) == 3 and w[0] in ("fio", "dd"):
        try:
            peers.setdefault(w[0], {}).setdefault(w[1] + "_MBps", []).append(float(w[2]))
        except ValueError:
            pass
    elif w[:2] == ["bspprobe", "raw"]:
        raws.append(w[2])
    elif line.startswith(("CPU: ", "kernel: ", "load average")):
        k, v = line.rstrip("\n").split(": ", 1)
        header[k] = v
probe = {}
for path in raws:
    for text in open(path):
        r = json.loads(text)
        if r.get("type") == "disk" and r["access"] == "sequential" and r["bytes"] == nbytes:
            key = "%s_%s_MBps" % (r["op"], r["cache"])
            probe.setdefault(key, []).append(nbytes / statistics.median(r["samples_s"]) / 1e6)
med = {tool: {k: statistics.median(v) for k, v in d.items()} for tool, d in peers.items()}
doc = {"bytes": nbytes, "block_bytes": 1048576, "rounds": int(rounds), "dir": tdir,
       "machine": header, "fio": peers.get("fio", {}), "dd": peers.get("dd", {}),
       "medians": med, "bspprobe_raw": raws,
       "bspprobe_largest_file_MBps": probe,
       "note": "fio/dd: MB/s = 1e6 bytes/s per round; bspprobe_largest_file_MBps: bytes / median "
               "sample of the largest file per round (page = buffered, direct = O_DIRECT or "
               "fadvise+fsync), not a fit"}
json.dump(doc, open(out + "/peers.json", "w"), indent=1)
lines = ["", "medians over %s rounds, MB/s (1e6 bytes/s), files of %d MiB, 1 MiB blocks"
         % (rounds, nbytes >> 20), "%-10s %-26s %10s" % ("tool", "measurement", "MB/s")]
for tool in ("fio", "dd"):
    for k, v in sorted(med.get(tool, {}).items()):
        lines.append("%-10s %-26s %10.0f" % (tool, k[:-5], v))
for k, v in sorted(probe.items()):
    lines.append("%-10s %-26s %10.0f" % ("bspprobe", k[:-5] + " (m = max)", statistics.median(v)))
lines.append("bspprobe raw records (to fit): " + (" ".join(raws) if raws else "none"))
lines.append("peer numbers: " + out + "/peers.json")
print("\n".join(lines))
open(summary, "a").write("\n".join(lines) + "\n")
EOF

# Table 6's fitted bandwidths (bspkit.model.imh, T + m tau: tau from the largest files) of every
# round against the peers' medians: the target is within 15 %.
venv=$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python
if [ -x "$venv" ]; then
  "$venv" - "$out/peers.json" << 'PY' | tee -a "$summary"
import json, statistics, sys
from bspkit.model.imh import DISK_TARGET, fit_disk
from bspkit.measure.rawdata import load_raw
doc = json.load(open(sys.argv[1]))
fitted = {}
for path in doc["bspprobe_raw"]:
    for key, f in fit_disk(load_raw(path))["fits"].items():
        if "/sequential/" in key and f.get("bandwidth_Bps"):
            fitted.setdefault(key, []).append(f["bandwidth_Bps"] / 1e6)
med = doc["medians"]
pairs = [("read/sequential/direct", "fio", "read_direct"), ("read/sequential/direct", "dd", "read_direct"),
         ("write/sequential/direct", "fio", "write_direct"), ("write/sequential/direct", "dd", "write_direct"),
         ("read/sequential/page", "fio", "read_buffered"), ("read/sequential/page", "dd", "read_buffered"),
         ("write/sequential/page", "dd", "write_buffered")]
print("\nfitted (median over rounds) against the peers, MB/s; target within %.0f %%" % (100 * DISK_TARGET))
print("%-26s %9s  %-5s %-16s %9s %7s" % ("bspprobe fit", "MB/s", "peer", "measurement", "MB/s", "ratio"))
for key, tool, name in pairs:
    if key in fitted and name + "_MBps" in med.get(tool, {}):
        mine, peer = statistics.median(fitted[key]), med[tool][name + "_MBps"]
        ok = "yes" if abs(mine / peer - 1) <= DISK_TARGET else "no"
        print("%-26s %9.0f  %-5s %-16s %9.0f %7.2f  %s" % (key, mine, tool, name, peer, mine / peer, ok))
PY
fi
