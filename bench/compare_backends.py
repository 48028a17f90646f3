#!/usr/bin/env python3
"""compare_backends.py - the empty sync (l) and h-relations (put, all-to-all) of bspkit's
back ends side by side, from one interleaved run of bspprobe (issue 42: procs beside threads
and mpi).

Repetition r runs `bspprobe --quick --only l,g --primitives put --patterns alltoall` once on
every back end, in an order that rotates with r, so that a change of the machine's state falls
on all of them alike. Each figure is the median over repetitions of that run's median sample:
l (bsp_sync alone, the time of one superstep) and, per point of the g grid, the time of the
h-relation and its time per word. Ratios are taken against the first back end, repetition by
repetition, then their median.

Usage, from the repository root, with nothing else running:
  .venv/bin/python bench/compare_backends.py [--backends threads,procs,mpi] [-n 2] [--reps 7]
      [--build-dir build] [--out results/backends.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from machine_info import cpu_model  # bench/, this script's directory

ROOT = Path(__file__).resolve().parents[1]

Point = tuple[int, int]  # (msg_words, count): h = msg_words * count words per process


def probe_once(build: Path, backend: str, nprocs: int, out: Path) -> dict[str, object]:
    """One bspprobe run: l (empty) and the put/all-to-all points, as median samples."""
    cmd = [
        str(build / "bin" / "bsprun"), "-b", backend, "-n", str(nprocs), str(build / "probe" / "bspprobe"),
        "--quick", "--only", "l,g", "--primitives", "put", "--patterns", "alltoall", "--no-sentinels",
        "--output", str(out),
    ]  # fmt: skip
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(
            f"compare_backends: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}"
        )
    l_empty: float | None = None
    points: dict[Point, tuple[int, float]] = {}
    for line in out.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("type") == "l" and rec.get("variant") == "empty":
            l_empty = statistics.median(rec["samples_s"])
        elif rec.get("type") == "g":
            points[(rec["msg_words"], rec["count"])] = (
                rec["h"],
                statistics.median(rec["samples_s"]),
            )
    if l_empty is None or not points:
        sys.exit(f"compare_backends: {out} has no l or g records")
    return {"l": l_empty, "g": points}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--backends",
        default="threads,procs,mpi",
        help="comma-separated; ratios against the first",
    )
    ap.add_argument("-n", "--nprocs", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument(
        "--build-dir", default=os.environ.get("BSPKIT_BUILD_DIR", str(ROOT / "build"))
    )
    ap.add_argument("--out", help="write every repetition's figures here (JSON)")
    args = ap.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    build = Path(args.build_dir)
    runs: dict[str, list[dict[str, object]]] = {b: [] for b in backends}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            order = backends[rep % len(backends) :] + backends[: rep % len(backends)]
            for b in order:
                runs[b].append(
                    probe_once(build, b, args.nprocs, Path(tmp) / f"{b}-{rep}.jsonl")
                )
            print(
                f"compare_backends: repetition {rep + 1} of {args.reps} done",
                file=sys.stderr,
            )
    load_after = os.getloadavg()
    base = backends[0]
    print(f"CPU: {cpu_model()}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; p = {args.nprocs}; "
          f"{args.reps} interleaved repetitions; load {load_before[0]:.2f} before, {load_after[0]:.2f} after")  # fmt: skip

    def ratio(b: str, value: Callable[[dict[str, object]], float]) -> str:
        if b == base:
            return ""
        rs = [value(x) / value(y) for x, y in zip(runs[b], runs[base], strict=True)]
        return f" ({statistics.median(rs):.2f}x {base})"

    print(f"\nempty sync (l), us, median of {args.reps}:")
    for b in backends:
        print(f"  {b:10s} {statistics.median(float(x['l']) for x in runs[b]) * 1e6:9.3f}"
              f"{ratio(b, lambda x: float(x['l']))}")  # fmt: skip
    points = sorted(
        set.intersection(*(set(x["g"]) for b in backends for x in runs[b])),
        key=lambda k: (k[0] * k[1], k),
    )
    print(
        "\nput all-to-all: time of the h-relation, us (ns per word), median of the repetitions:"
    )
    header = "  h words  msg x count   " + "".join(f"{b:>26s}" for b in backends)
    print(header)
    for pt in points:
        h = runs[base][0]["g"][pt][0]  # type: ignore[index]
        cells = []
        for b in backends:
            t = statistics.median(x["g"][pt][1] for x in runs[b])  # type: ignore[index]
            r = (
                ""
                if b == base
                else f" {statistics.median(x['g'][pt][1] / y['g'][pt][1] for x, y in zip(runs[b], runs[base], strict=True)):.2f}x"
            )  # type: ignore[index]
            cells.append(f"{t * 1e6:10.2f} ({t / h * 1e9:6.2f}){r:>7s}")
        print(
            f"  {h:7d}  {pt[0]:5d} x {pt[1]:<5d} " + "".join(f"{c:>26s}" for c in cells)
        )
    if args.out:
        Path(args.out).write_text(
            json.dumps(
                {
                    "cpu": cpu_model(),
                    "nprocs": args.nprocs,
                    "backends": {
                        b: [
                            {
                                "l": x["l"],
                                "g": [[k[0], k[1], *v] for k, v in x["g"].items()],
                            }
                            for x in runs[b]
                        ]  # type: ignore[union-attr]
                        for b in backends
                    },
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
