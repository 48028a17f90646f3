#!/usr/bin/env python3
"""scale_accuracy.py - `bspkit profile --scale` against measured runs: profiles of a program
at small p (and several sizes) predict it at larger p on the machine of a probe there, and a
run at that p measures it.

Programs: bspkit's drivers (--drivers) and, with --bspedupack DIR, the unmodified BSPedupack
2.0 programs lu, fft and sort, built from a copy of DIR outside the repository with bspcc
(their inputs on stdin, as scripts/run-bspedupack.sh feeds them). Each program is profiled
(BSPKIT_PROFILE) --reps times at each p of --from and each size, and once per repetition at
each p of --to; the prediction is the whole SPMD section, T = sum over sync sites of S (W + comm(h)
+ l), with the target probe's parameters (OUT/probe-pP/params.json, as bench/predict_accuracy.py
leaves them; made with `bspkit probe --quick` where missing); the measured time is the median
over the repetitions of the slowest process's bsp_begin..bsp_end. Writes OUT/scale.json and
prints the error and whether the run fell in the 10-90% band. Run from the repository root:
  .venv/bin/python bench/scale_accuracy.py --out results/acc --from 1,2,3 --to 4,8 [--drivers]
      [--bspedupack /path/to/BSPedupack2.0]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BSPKIT = [sys.executable, "-m", "bspkit"]
BSPRUN = ROOT / "build" / "bin" / "bsprun"

# program -> (sizes profiled, target size, how to run it at (p, n): argv and stdin)
DRIVER_SIZES: dict[str, tuple[list[int], int, list[str]]] = {
    "cannon-put": ([800, 1200, 1600], 2000, ["bspalg-cannon", "--variant", "put"]),
    "matmul-blockcyclic": (
        [800, 1200, 1600],
        2000,
        ["bspalg-matmul", "--dist", "blockcyclic", "--q", "8"],
    ),
    "llcs-dp": (
        [10000, 20000, 30000],
        40000,
        ["bspalg-llcs", "--kernel", "dp", "--alpha", "4"],
    ),
    "rdxsort": (
        [1 << 21, 1 << 22, 1 << 23],
        1 << 24,
        ["bspalg-rdxsort", "--variant", "plain", "--bits", "8"],
    ),
    "lu": ([800, 1200, 1600], 2000, ["bspalg-lu", "--nb", "64"]),
}
# the FFT needs p a power of 2: profiled at 1, 2, 4 instead of 1, 2, 3
EDUPACK_FROM: dict[str, list[int]] = {"fft": [1, 2, 4]}
EDUPACK_SIZES: dict[str, tuple[list[int], int]] = {
    "lu": ([200, 300, 400], 500),
    "fft": ([1 << 16, 1 << 17, 1 << 18], 1 << 19),
    "sort": ([1 << 18, 1 << 19, 1 << 20], 1 << 21),
}


def edupack_input(prog: str, p: int, n: int) -> str:
    if prog == "lu":  # a 1 x p grid: the same shape at every p
        return f"1\n{p}\n{n}\n"
    return f"{p}\n{n}\n"


def profiled(cmd: list[str], p: int, path: Path, stdin: str | None) -> None:
    env = {**os.environ, "BSPKIT_PROFILE": str(path)}
    out = subprocess.run(
        [str(BSPRUN), "-n", str(p), *cmd],
        input=stdin,
        text=True,
        env=env,
        capture_output=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(
            f"failed ({out.returncode}): {' '.join(cmd)} at p = {p}\n{out.stderr[-1500:]}"
        )


def total_s(path: Path) -> float:
    times = [
        json.loads(line)["total_s"]
        for line in path.read_text().splitlines()
        if '"type": "process"' in line
    ]
    return max(times)


def probe(out: Path, p: int) -> Path:
    d = out / f"probe-p{p}"
    if not (d / "params.json").is_file():
        cmd = [
            *BSPKIT,
            "probe",
            "--quick",
            "-n",
            str(p),
            "--output-dir",
            str(d),
            "--force",
        ]
        if subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False).returncode != 0:
            raise SystemExit(f"the probe at p = {p} failed")
    return d / "params.json"


def scale(
    name: str, runs: list[str], p: int, n: int, params: Path, work: Path
) -> dict[str, Any]:
    cmd = [
        *BSPKIT,
        "profile",
        "--scale",
        *runs,
        "--to-p",
        str(p),
        "--to-size",
        str(n),
        "--params",
        str(params),
    ]
    out = subprocess.run(
        [*cmd, "--json", "-"], capture_output=True, text=True, cwd=work, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"{name}: profile --scale failed\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def study(
    name: str,
    argv_of: Any,
    sizes: list[int],
    target_n: int,
    args: argparse.Namespace,
    work: Path,
) -> list[dict[str, Any]]:
    runs = []
    for p in args.from_p:
        for n in sizes:
            for rep in range(args.reps):
                path = work / f"{name}-p{p}-n{n}-{rep}.jsonl"
                cmd, stdin = argv_of(p, n)
                profiled(cmd, p, path, stdin)
                runs.append(f"{path.name}@n={n}")
    rows = []
    for p in args.to_p:
        measured = []
        for rep in range(args.reps):
            path = work / f"{name}-target-p{p}-{rep}.jsonl"
            cmd, stdin = argv_of(p, target_n)
            profiled(cmd, p, path, stdin)
            measured.append(total_s(path))
        t = statistics.median(measured)
        pred = scale(name, runs, p, target_n, probe(Path(args.out), p), work)
        low, high = pred["interval_s"] or (None, None)
        row = {
            "program": name,
            "p": p,
            "n": target_n,
            "measured_s": t,
            "measured_all_s": measured,
            "predicted_s": pred["predicted_s"],
            "best_model": pred["best_model"],
            "models": pred["models"],
            "interval_s": pred["interval_s"],
            "error": pred["predicted_s"] / t - 1,
            "in_band": low is not None and low <= t <= high,
            "exact": [
                s["site"] for s in pred["supersteps"] if s["S"]["source"] == "exact"
            ],
        }
        rows.append(row)
        print(
            f"{name:<22} p = {p:<3} n = {target_n:<9} measured {t:.4g} s  predicted {row['predicted_s']:.4g} s "
            f"({row['error']:+.1%})  band {low:.4g}-{high:.4g} {'in' if row['in_band'] else 'OUT'}",
            flush=True,
        )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--from", dest="from_p", default="1,2,3")
    ap.add_argument("--to", dest="to_p", default="4,8")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--drivers", default="")
    ap.add_argument("--bspedupack")
    ap.add_argument("--edupack-programs", default="lu,fft,sort")
    args = ap.parse_args()
    args.from_p = [int(v) for v in args.from_p.split(",")]
    args.to_p = [int(v) for v in args.to_p.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bspkit-scale-") as tmp:
        work = Path(tmp)
        for name in [d for d in args.drivers.split(",") if d]:
            sizes, target, argv = DRIVER_SIZES[name]
            exe = [str(ROOT / "build" / "bin" / argv[0]), *argv[1:]]
            rows += study(
                name,
                lambda p, n, exe=exe: (
                    [*exe, "--size", str(n), "-r", "1", "--no-check"],
                    None,
                ),
                sizes,
                target,
                args,
                work,
            )
        if args.bspedupack:
            src = work / "bspedupack"
            shutil.copytree(args.bspedupack, src)
            make = subprocess.run(
                [
                    "make",
                    f"CC={ROOT / 'build' / 'bin' / 'bspcc'}",
                    *args.edupack_programs.split(","),
                ],
                cwd=src,
                capture_output=True,
                text=True,
                check=False,
            )
            if make.returncode != 0:
                raise SystemExit(f"BSPedupack did not build:\n{make.stderr[-2000:]}")
            for prog in args.edupack_programs.split(","):
                sizes, target = EDUPACK_SIZES[prog]
                rows += study(
                    f"bspedupack-{prog}",
                    lambda p, n, prog=prog: (
                        [str(src / prog)],
                        edupack_input(prog, p, n),
                    ),
                    sizes,
                    target,
                    args,
                    work,
                )
    for name in dict.fromkeys(r["program"] for r in rows):
        mine = [r for r in rows if r["program"] == name]
        print(
            f"{name:<22} mean |error| {statistics.mean(abs(r['error']) for r in mine):.1%}, "
            f"in band {sum(r['in_band'] for r in mine)} of {len(mine)}"
        )
    (out / "scale.json").write_text(
        json.dumps({"rows": rows, "loadavg_end": os.getloadavg()}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
