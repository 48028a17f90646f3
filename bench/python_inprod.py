#!/usr/bin/env python3
"""python_inprod.py - Bisseling's inner product in Python (examples/python/inner_product.py)
against its C version (examples/inner_product.c) on the same back end and p, alternating
(issue 42: "a Python inner product of 10^8 doubles within 1.2x of the C version's time at
p = 2").

Each repetition runs both, in an order that alternates, and takes two times of each: the
time the program itself prints (the local products, the puts and the sync: what BSP's cost
W + H g + S l counts) and the whole run's wall time (bsprun to exit: Python's start and
NumPy's import, the vector's creation, the fork). Ratios (Python / C) are taken pair by pair,
then their median.

Usage, from the repository root, with nothing else running:
  .venv/bin/python bench/python_inprod.py [--n 100000000] [-p 2] [--backend procs] [--reps 7]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIME = re.compile(r"^time ([0-9.]+) s", re.MULTILINE)


def run(cmd: list[str]) -> tuple[float, float]:
    """(the program's own time, the wall time of the whole run)."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    found = TIME.search(r.stdout)
    if r.returncode != 0 or not found:
        sys.exit(
            f"python_inprod: {' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
        )
    return float(found.group(1)), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000_000)
    ap.add_argument("-p", "--nprocs", type=int, default=2)
    ap.add_argument("--backend", default="procs")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument(
        "--build-dir", default=os.environ.get("BSPKIT_BUILD_DIR", str(ROOT / "build"))
    )
    args = ap.parse_args()
    build = Path(args.build_dir)
    bsprun = [str(build / "bin" / "bsprun"), "-b", args.backend, "-n", str(args.nprocs)]
    commands = {
        "C": [*bsprun, str(build / "examples" / "inner_product"), str(args.n)],
        "Python": [
            *bsprun,
            sys.executable,
            str(ROOT / "examples" / "python" / "inner_product.py"),
            str(args.n),
        ],
    }
    times: dict[str, list[tuple[float, float]]] = {"C": [], "Python": []}
    for rep in range(args.reps):
        for name in ("C", "Python") if rep % 2 == 0 else ("Python", "C"):
            times[name].append(run(commands[name]))
    print(f"inner product of n = {args.n} on {args.backend}, p = {args.nprocs}, {args.reps} alternating repetitions; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, load {os.getloadavg()[0]:.2f} after")  # fmt: skip
    for k, label in ((0, "the program's own time"), (1, "wall time of the whole run")):
        c = [t[k] for t in times["C"]]
        py = [t[k] for t in times["Python"]]
        ratios = [b / a for a, b in zip(c, py, strict=True)]
        print(f"  {label:28s} C {statistics.median(c):.4f} s, Python {statistics.median(py):.4f} s, "
              f"Python/C median {statistics.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
