#!/usr/bin/env python3
"""drift_validation.py - issue 17's benchmark: raw against calibrated prediction error of every
algorithm family `bspkit validate` knows, under one condition of the machine.

For each algorithm it runs `bspkit validate ALG -b BACKEND -n P --params P.json` (every run
calibrates inside itself before its repetitions and after them, the default) on a small sweep (sizes where a run takes
0.1-2 s on 2 cores), and collects from validate.json: the mean |relative error| of g(h,h*)
over the scored runs raw and calibrated (on the same, unflagged runs), the runs flagged, the
drift of f, g and l (median over the sweep's calibrations, and the extreme), and what the
calibrations cost (share of the sweep's time). Conditions:
  quiet   nothing else started;
  load    a busy loop of our own, pinned to one core, started after the probe and before the
          first validation, stopping itself after --load-seconds (default: 60% of the
          estimated sweep);
  later   nothing started; run it an hour or more after the probe (say so with --label).
Appends one row per algorithm to OUT/drift.json and prints the table (markdown). Usage, from
the repository root with the venv's python:
  OPENBLAS_CORETYPE=Haswell .venv/bin/python bench/drift_validation.py --params P.json \\
      --condition quiet|load|later [--only cannon-put,lu] [--out results/drift]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from machine_info import cpu_model  # bench/, this script's directory

# name: (sizes, values of the second parameter or None): runs of about 0.1-2 s at p = 2 on
# 2 cores (the inner product is memory-bound: 0.1 s is 3 GB of vectors)
SWEEPS: dict[str, tuple[str, str | None]] = {
    "inprod": ("150000000,250000000", None),
    "matmul-blockcyclic": ("2000,3000", "1,8"),
    "cannon-put": ("2500,3500", None),
    "llcs-bitpar": ("200000,400000", "1,4"),
    "rdxsort": ("32000000,64000000", "8,11"),
    "lu": ("3000,4000", "64,128"),
}
MODEL = "g(h,h*)"


def busy_loop(seconds: float, core: int) -> subprocess.Popen[bytes]:
    """A busy loop on one core that stops by itself after `seconds` (it never outlives them)."""
    code = f"import time\nt = time.monotonic() + {seconds}\nwhile time.monotonic() < t:\n    pass\n"
    return subprocess.Popen(["taskset", "-c", str(core), sys.executable, "-c", code])


def summarize(alg: str, condition: str, res: dict[str, Any]) -> dict[str, Any]:
    s = res["summary"]["all"]
    cal = s.get("calibrated") or {}
    heads = [c["drift"]["headline"] for c in res.get("calibrations", [])]

    def drift(key: str) -> dict[str, float | None]:
        vals = [h[key] for h in heads if h.get(key)]
        if not vals:
            return {"median": None, "extreme": None}
        return {
            "median": statistics.median(vals),
            "extreme": max(vals, key=lambda v: max(v, 1 / v)),
        }

    return {
        "algorithm": alg,
        "condition": condition,
        "runs": s["runs"],
        "runs_scored": s["runs_used"],
        "raw_all": s.get(MODEL),
        "raw": (cal.get("raw") or {}).get(MODEL),
        "calibrated": cal.get(MODEL),
        "calibrated_runs": cal.get("runs_used"),
        "flagged": cal.get("flagged"),
        "drift": {k: drift(k) for k in ("f", "g", "l")},
        "calibration_share": (res.get("calibration_cost") or {}).get("share"),
        "loadavg": [res.get("loadavg_start"), res.get("loadavg_end")],
    }


def fmt(v: float | None, pct: bool = True) -> str:
    if v is None:
        return "-"
    return f"{v:.1%}" if pct else f"x{v:.2f}"


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        (
            f"| algorithm | condition | runs scored (flagged) | raw {MODEL} | calibrated | drift f | drift g | drift l "
            "| calibration cost |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        d = r["drift"]
        cells = [
            r["algorithm"],
            r["condition"],
            f"{r['calibrated_runs']} of {r['runs_scored']} ({r['flagged']})",
            fmt(r["raw"]),
            fmt(r["calibrated"]),
            *(
                f"{fmt(d[k]['median'], False)} ({fmt(d[k]['extreme'], False)})"
                if d[k]["median"]
                else "-"
                for k in ("f", "g", "l")
            ),
            fmt(r["calibration_share"]),
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", required=True, help="the probe's params.json")
    ap.add_argument("--condition", required=True, choices=("quiet", "load", "later"))
    ap.add_argument(
        "--label", help="the condition's name in the table (default: --condition)"
    )
    ap.add_argument("-b", "--backend", default="threads")
    ap.add_argument("-n", "--nprocs", type=int, default=2)
    ap.add_argument(
        "--only", help="comma-separated algorithms (default: " + ",".join(SWEEPS) + ")"
    )
    ap.add_argument(
        "--load-seconds",
        type=float,
        help="load: how long the busy loop runs (default 60%% of 6 min)",
    )
    ap.add_argument(
        "--load-core",
        type=int,
        default=1,
        help="load: the core the busy loop is pinned to (default 1)",
    )
    ap.add_argument(
        "--out", default="results/drift", help="directory of drift.json and the sweeps"
    )
    args = ap.parse_args()
    algs = args.only.split(",") if args.only else list(SWEEPS)
    unknown = [a for a in algs if a not in SWEEPS]
    if unknown:
        ap.error(
            f"unknown algorithm(s) {', '.join(unknown)}; choose from {', '.join(SWEEPS)}"
        )
    label = args.label or args.condition
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    load = None
    if args.condition == "load":
        seconds = args.load_seconds or 0.6 * 360
        load = busy_loop(seconds, args.load_core)
        print(
            f"busy loop on core {args.load_core} for {seconds:.0f} s (pid {load.pid})",
            file=sys.stderr,
        )
    rows = []
    try:
        for alg in algs:
            sizes, values = SWEEPS[alg]
            outdir = out / f"{label}-{alg}-{stamp}"
            cmd = [
                sys.executable,
                "-m",
                "bspkit",
                "validate",
                alg,
                "-b",
                args.backend,
                "-n",
                str(args.nprocs),
            ]
            cmd += [
                "--params",
                args.params,
                "--sizes",
                sizes,
                "--output-dir",
                str(outdir),
            ]
            if values:
                cmd += ["--values", values]
            print(f"== {alg} ({label}): {' '.join(cmd[2:])}", file=sys.stderr)
            rc = subprocess.run(cmd, check=False).returncode
            if rc != 0:
                print(f"{alg}: bspkit validate exited {rc}", file=sys.stderr)
                continue
            res = json.loads((outdir / "validate.json").read_text())
            rows.append(summarize(alg, label, res))
    finally:
        if load is not None and load.poll() is None:
            load.terminate()
    record = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpu": cpu_model(),
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "params": args.params,
        "condition": label,
        "rows": rows,
    }
    js = out / "drift.json"
    history = json.loads(js.read_text()) if js.exists() else []
    history.append(record)
    js.write_text(json.dumps(history, indent=1) + "\n")
    print(
        f"CPU {record['cpu']}, OPENBLAS_CORETYPE {record['blas_coretype']}, {record['date']}"
    )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
