#!/usr/bin/env python3
"""compare_libraries.py - thesis Table 6.1 with algorithm rows from one interleaved run (issue 30):
bspkit's back ends and other BSPlibs side by side, each algorithm's time, efficiency and
prediction error, the probe's g per primitive and l, ranked.

For each column (a bspkit back end, or a library built by scripts/build-peer.sh and given by
its prefix) it first probes (`bspkit probe --quick`), then runs every algorithm --reps times,
interleaved: repetition r runs every algorithm on every column in turn (the columns' order
rotates with r), so that a change of the machine's state falls on all of them alike. Each
column's run of an algorithm is its median repetition, predicted from that column's probe
(validate's rows and summary), written as OUT/<column>/<alg>/validate.json; then `bspkit
compare` makes OUT/compare.html and prints the table (OUT/table.txt), with the CPU, the BLAS
core type and the load before and after.

Usage, from the repository root, with nothing else running:
  .venv/bin/python bench/compare_libraries.py --out results/libraries [--p 2] [--reps 5]
      [--backends threads,procs,mpi,mpi-rma,mpi-naive] [--peer PREFIX ...] [--algs inprod,llcs-bitpar,...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from machine_info import cpu_model  # bench/, this script's directory

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from bspkit import algorithms as al  # noqa: E402
from bspkit.measure import validation as va  # noqa: E402
from bspkit.commands._inputs import driver_launch, load_params  # noqa: E402
from bspkit.measure.libraries import Library, bspkit_library, library_from  # noqa: E402

BSPKIT = [str(ROOT / ".venv" / "bin" / "bspkit")]
# problems big enough to time (tenths of a second at p = 2 on this VM), small enough for 5 reps
DEFAULT_ALGS = {
    "inprod": ["--size", "4000000"],
    "llcs-bitpar": ["--size", "200000", "--alpha", "4"],
    "rdxsort": ["--size", "4000000"],
    "lu": ["--size", "1000"],
    "matmul-blockcyclic": ["--size", "1000"],
    "cannon-put": ["--size", "1000"],
}


class Column:
    def __init__(self, key: str, backend: str, library: Library | None) -> None:
        self.key, self.backend, self.library = key, backend, library
        self.params_path: Path | None = None
        self.launch: al.DriverLaunch | None = None
        self.results: dict[str, list[al.RunResult]] = {}


# H_MAX of every column's probe: 256 Ki words (2 MiB per process and superstep), the same for
# every library, so that eight quick probes take minutes
PROBE_ARGS = ["--max-words", "262144"]


def probe(col: Column, out: Path, p: int) -> None:
    """A quick probe of the column, filed as OUT/<column>/probe."""
    pdir = out / col.key / "probe"
    if (pdir / "params.json").is_file():
        col.params_path = pdir / "params.json"
        return
    cmd = [*BSPKIT, "probe", "--quick", "-n", str(p), "--suites", "bsp", "--output-dir", str(pdir), "--force"]
    if col.library is None:
        cmd += ["-b", col.backend]
    else:
        cmd += col.library.probe_args()
    cmd += ["--", *PROBE_ARGS]
    print(f"probing {col.key}: {' '.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=900)
    col.params_path = pdir / "params.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--p", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument(
        "--backends",
        default="threads,procs,mpi,mpi-rma,mpi-naive",
        help="bspkit's back ends ('' for none); mpi-naive is the thesis' MPI baseline without combining",
    )
    ap.add_argument("--peer", action="append", default=[], help="a prefix of scripts/build-peer.sh (repeatable)")
    ap.add_argument("--algs", default=",".join(DEFAULT_ALGS), help="algorithms (bspkit run names)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    cols = [Column(f"bspkit-{b}", b, None) for b in args.backends.split(",") if b]
    for prefix in args.peer:
        lib = library_from(peer=prefix)
        assert lib is not None
        cols.append(Column(lib.label.replace("@", "-"), lib.label, lib))
    algs = [a for a in args.algs.split(",") if a]
    load_before = os.getloadavg()
    for col in cols:
        probe(col, args.out, args.p)
        col.launch = driver_launch(None, al.ALGORITHMS[algs[0]].driver, col.backend, args.p, None, col.library)
        for a in algs[1:]:  # every driver built (another library: into its cache) before the timing starts
            driver_launch(None, al.ALGORITHMS[a].driver, col.backend, args.p, None, col.library)

    failures: list[str] = []
    for rep in range(args.reps):
        order = cols[rep % len(cols) :] + cols[: rep % len(cols)]
        for a in algs:
            alg = al.ALGORITHMS[a]
            for col in order:
                assert col.launch is not None
                dargs = [*DEFAULT_ALGS.get(a, []), "--reps", "1", "--measure-f"]
                try:
                    res = al.run_driver(alg, col.launch, args.p, dargs, timeout_s=600)
                except al.AlgorithmError as e:
                    failures.append(f"{col.key} {a}: {e}")
                    print(f"FAILED {col.key} {a}: {e}", flush=True)
                    continue
                col.results.setdefault(a, []).append(res)
                print(f"rep {rep + 1} {a:<20} {col.key:<22} {res.time_s:.4f} s", flush=True)
    load_after = os.getloadavg()

    inputs: list[str] = []
    for col in cols:
        assert col.params_path is not None
        params = load_params(col.params_path)
        inputs.append(str(col.params_path.parent))
        for a, runs in col.results.items():
            alg = al.ALGORITHMS[a]
            med = sorted(runs, key=lambda r: r.time_s)[len(runs) // 2]
            n = int((med.data.get("params") or {}).get("n", 0))
            v = (med.data.get("params") or {}).get(alg.sweep_param) if alg.sweep_param else None
            row = va.measured_row(alg, med, params, n, None if v is None else str(v))
            row["times_s_all_reps"] = [r.time_s for r in runs]
            summary = va.group_summary([row])
            result: dict[str, Any] = {
                "format": va.RESULT_FORMAT,
                "algorithm": a,
                "backend": col.backend,
                "library": col.library.describe() if col.library else bspkit_library(),
                "p": args.p,
                "sweep": alg.sweep_param,
                "params_file": str(col.params_path),
                "rows": [row],
                "summary": {"all": summary, "by_sweep": []},
                "spread": (max(row["times_s_all_reps"]) - min(row["times_s_all_reps"])) / statistics.median(
                    row["times_s_all_reps"]
                ),
            }
            d = args.out / col.key / a
            d.mkdir(parents=True, exist_ok=True)
            (d / "validate.json").write_text(json.dumps(result, indent=1) + "\n")
            inputs.append(str(d))
    table = subprocess.run(
        [*BSPKIT, "compare", *inputs, "-o", str(args.out / "compare.html")], capture_output=True, text=True
    )
    head = (
        f"p = {args.p}, {args.reps} interleaved repetitions (median), CPU {cpu_model()}, "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}, load {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after"
    )
    text = head + "\n" + table.stdout + ("\nFAILED:\n" + "\n".join(failures) if failures else "")
    (args.out / "table.txt").write_text(text)
    print(text)
    if table.returncode != 0:
        print(table.stderr, file=sys.stderr)
    return 1 if failures or table.returncode else 0


if __name__ == "__main__":
    sys.exit(main())
