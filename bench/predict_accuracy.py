#!/usr/bin/env python3
"""predict_accuracy.py - `bspkit predict` (the closed-form cost, nothing run) against measured
runs of the drivers at each p, with a probe at that p: the relative error per model and whether
the run fell inside the 10-90% band.

Per p of --procs: a probe of the back end at p (`bspkit probe --quick`, kept in OUT/probe-pP and
reused). Per algorithm: one run at p = 1 with --measure-f gives f (the kernel on the run's own
block shape, as a user's laptop run would); then at each p a measured run (`bspkit run`, the
driver's median of --reps) and its prediction (`bspkit predict --params OUT/probe-pP/params.json
--f-from the p = 1 run`). Runs are taken one after the other, never beside another job.
Writes OUT/accuracy.json and prints a table (mean |error| per algorithm and model, coverage of
the band). Usage, from the repository root:
  .venv/bin/python bench/predict_accuracy.py --out results/predict-accuracy [--procs 1,2,4,8]
      [--algs cannon-put,matmul-blockcyclic,llcs-dp,rdxsort,lu] [-b threads] [--hostfile FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

BSPKIT = [sys.executable, "-m", "bspkit"]

# (algorithm, size, driver options): a run of 0.2-1.5 s at p = 2 on 2 cores
CASES: dict[str, tuple[int, list[str], list[str]]] = {
    "cannon-put": (2400, [], []),
    "matmul-blockcyclic": (2000, ["--values", "8"], ["--q", "8"]),
    "llcs-dp": (40000, ["--values", "4"], ["--alpha", "4"]),
    "rdxsort": (1 << 24, ["--values", "8"], ["--bits", "8"]),
    "lu": (3000, ["--values", "64"], ["--nb", "64"]),
}


def run_json(cmd: list[str]) -> dict[str, Any]:
    out = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(
            f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}"
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def launch(args: argparse.Namespace, p: int) -> list[str]:
    return [
        "-b",
        args.backend,
        "-n",
        str(p),
        *(["--hostfile", args.hostfile] if args.hostfile else []),
    ]


def probe(args: argparse.Namespace, p: int) -> Path:
    d = Path(args.out) / f"probe-p{p}"
    if not (d / "params.json").is_file():
        print(f"probe at p = {p} ...", file=sys.stderr, flush=True)
        cmd = [
            *BSPKIT,
            "probe",
            "--quick",
            *launch(args, p),
            "--output-dir",
            str(d),
            "--force",
        ]
        if subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL).returncode != 0:
            raise SystemExit(f"the probe at p = {p} failed: {' '.join(cmd)}")
    return d / "params.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--procs", default="1,2,4,8")
    ap.add_argument("--algs", default=",".join(CASES))
    ap.add_argument("-b", "--backend", default="threads")
    ap.add_argument("--hostfile")
    ap.add_argument("-r", "--reps", type=int, default=3)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    procs = [int(p) for p in args.procs.split(",")]
    params = {p: probe(args, p) for p in procs}
    rows: list[dict[str, Any]] = []
    for alg in args.algs.split(","):
        size, predict_opts, driver_opts = CASES[alg]
        f_run = out / f"{alg}-f.json"
        if not f_run.is_file():
            run_json(
                [
                    *BSPKIT,
                    "run",
                    alg,
                    "-b",
                    "threads",
                    "-n",
                    "1",
                    "--size",
                    str(size),
                    "--json",
                    str(f_run),
                    "--",
                    "--measure-f",
                    "-r",
                    "1",
                    "--no-check",
                    *driver_opts,
                ]
            )
        for p in procs:
            measured = run_json(
                [
                    *BSPKIT,
                    "run",
                    alg,
                    *launch(args, p),
                    "--size",
                    str(size),
                    "--json",
                    "-",
                    "--",
                    "-r",
                    str(args.reps),
                    "--no-check",
                    *driver_opts,
                ]
            )
            predicted = run_json(
                [
                    *BSPKIT,
                    "predict",
                    alg,
                    "--size",
                    str(size),
                    "-n",
                    str(p),
                    *predict_opts,
                    "--params",
                    str(params[p]),
                    "--f-from",
                    str(f_run),
                    "--json",
                    "-",
                    *(["--cores", "100000"] if args.hostfile else []),
                ]
            )
            t = measured["time_s"]
            row = {
                "algorithm": alg,
                "p": p,
                "n": size,
                "measured_s": t,
                "times_s": measured["times_s"],
                "predicted_s": predicted["predicted_s"],
                "best_model": predicted["best_model"],
                "models": predicted["models"],
                "interval_s": predicted["interval_s"],
                "error": predicted["predicted_s"] / t - 1,
                "errors": {
                    m: (v / t - 1 if v else None)
                    for m, v in predicted["models"].items()
                },
                "in_band": predicted["interval_s"][0]
                <= t
                <= predicted["interval_s"][1],
                "counts": {
                    "W": (measured["W"], predicted["W"]),
                    "H": (measured["H"], predicted["H"]),
                    "S": (measured["S"], predicted["S"]),
                },
            }
            rows.append(row)
            print(
                f"{alg:<20} p = {p:<3} measured {t:.4g} s  predicted {row['predicted_s']:.4g} s "
                f"({row['error']:+.1%}, {row['best_model']})  band {row['interval_s'][0]:.4g}-"
                f"{row['interval_s'][1]:.4g} {'in' if row['in_band'] else 'OUT'}",
                flush=True,
            )
    summary = {}
    for alg in args.algs.split(","):
        mine = [r for r in rows if r["algorithm"] == alg]
        summary[alg] = {
            "mean_abs_error": statistics.mean(abs(r["error"]) for r in mine),
            "per_model": {
                m: statistics.mean(
                    abs(r["errors"][m]) for r in mine if r["errors"][m] is not None
                )
                for m in mine[0]["errors"]
                if any(r["errors"][m] is not None for r in mine)
            },
            "coverage": sum(r["in_band"] for r in mine) / len(mine),
        }
        print(
            f"{alg:<20} mean |error| {summary[alg]['mean_abs_error']:.1%}, band coverage "
            f"{summary[alg]['coverage']:.0%}"
        )
    machine = {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "loadavg": os.getloadavg(),
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
    }
    try:
        machine["cpu"] = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    (out / "accuracy.json").write_text(
        json.dumps({"machine": machine, "rows": rows, "summary": summary}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
