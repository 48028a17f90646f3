#!/usr/bin/env python3
"""profile_vs_driver.py - the profile-based prediction of each algorithm driver against the
driver's own cost-counting prediction, for the machine of a parameter file.

Each driver runs once on this machine (bsprun -b BACKEND -n P, --measure-f, -r R) with the
superstep profile on. Then, for the machine of --params (e.g. an emulated cluster's probe):
  driver:  bspkit.model.supersteps.predict(params, the driver's JSON): sum of w f + comm(h, c, h*) + l
           over the supersteps the driver counted itself (f: its kernel timed under load);
  profile: bspkit.model.profile.predict_run(params, the profile's phase "rep R"): the compute the
           profile measured per superstep (max over processes) + comm(h, c, h*) + l from
           the words and requests the library counted.
Prints per driver and model both predictions and their ratio, the ratio of their
communication parts alone (the same h, c, h* counted twice: by the driver and by the
library), the time measured here, and the mean |profile/driver - 1| per model. The two
differ in the compute: w f (f timed once by --measure-f) against the compute measured in
the run itself. Usage (from the repository root, with the venv's python):
  .venv/bin/python bench/profile_vs_driver.py --params CLUSTER/params.json [--build build]
      [-b threads] [-n 2] [-r 3] [--out results/profile-vs-driver.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bspkit.model import supersteps as pd
from bspkit.model import profile as pf
from bspkit.model.params import Params

# Sizes where a repetition takes 0.05-0.5 s on 2 cores of this machine.
DRIVERS = {
    "inprod": ["bspalg-inprod", "--size", "30000000"],
    "matmul": ["bspalg-matmul", "--size", "1500"],
    "cannon": ["bspalg-cannon", "--size", "2000"],
    "llcs": ["bspalg-llcs", "--size", "100000"],
    "rdxsort": ["bspalg-rdxsort", "--size", "8000000"],
    "lu": ["bspalg-lu", "--size", "2000"],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--params", required=True, help="the parameter file of the machine to predict"
    )
    ap.add_argument("--build", default="build")
    ap.add_argument("-b", "--backend", default="threads")
    ap.add_argument("-n", "--nprocs", type=int, default=2)
    ap.add_argument("-r", "--reps", type=int, default=3)
    ap.add_argument("--only", help="comma-separated drivers (default: all)")
    ap.add_argument("--out", help="write the table as JSON here")
    args = ap.parse_args()
    params = Params.read(args.params)
    build = Path(args.build).resolve()
    names = args.only.split(",") if args.only else list(DRIVERS)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            exe, *dargs = DRIVERS[name]
            prof, js = Path(tmp) / f"{name}.jsonl", Path(tmp) / f"{name}.json"
            cmd = [
                str(build / "bin/bsprun"),
                "-b",
                args.backend,
                "-n",
                str(args.nprocs),
                str(build / "bin" / exe),
            ]
            cmd += [
                *dargs,
                "-r",
                str(args.reps),
                "--measure-f",
                "--no-check",
                "--json",
                str(js),
            ]
            print(f"{name}: {' '.join(cmd)}", file=sys.stderr)
            env = {**os.environ, "BSPKIT_PROFILE": str(prof)}
            subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
            run = json.loads(js.read_text())
            by_driver = pd.predict(params, run)
            analysis = pf.analyze(
                pf.read_profile(prof), addr2line="", phase=f"rep {args.reps}"
            )
            by_profile = pf.predict_run(analysis, params, args.params)
            row = {
                "driver": name,
                "measured_here_s": run["time_s"],
                "S": run["S"],
                "H": run["H"],
            }
            for m in pd.MODELS:
                d, p = by_driver[m], by_profile.total[m]
                row[m] = {
                    "driver_s": d,
                    "profile_s": p,
                    "ratio": p / d if p and d else None,
                }
                dc, pc = by_driver[m + " comm_s"], by_profile.comm[m]
                row[m]["comm_ratio"] = pc / dc if pc and dc else None
            row["driver_work_s"] = by_driver["work_s"]
            row["profile_compute_s"] = by_profile.compute_s
            rows.append(row)
    print(
        f"# predictions for {args.params} ({params.machine.get('backend')}, p = {params.p}); profiles and "
        f"drivers run here on {args.backend}, p = {args.nprocs}, rep {args.reps} of {args.reps}"
    )
    print(
        f"{'driver':8s} {'S':>4s} {'work (drv)':>10s} {'compute (prof)':>14s} "
        + " ".join(f"{m + ' drv/prof (s)':>24s} {'ratio':>6s}" for m in pd.MODELS)
    )
    for r in rows:
        cells = " ".join(
            f"{r[m]['driver_s'] or float('nan'):11.4f} {r[m]['profile_s'] or float('nan'):12.4f} "
            f"{r[m]['ratio'] or float('nan'):6.3f}"
            for m in pd.MODELS
        )
        print(
            f"{r['driver']:8s} {r['S']:4d} {r['driver_work_s']:10.4f} {r['profile_compute_s']:14.4f} {cells}"
        )
    comm = [
        f"{r['driver']} "
        + "/".join(
            f"{r[m]['comm_ratio']:.3f}" if r[m]["comm_ratio"] else "-"
            for m in pd.MODELS
        )
        for r in rows
    ]
    print("comm + sync alone, profile / driver (per model): " + "; ".join(comm))
    print(
        "measured here: "
        + ", ".join(f"{r['driver']} {r['measured_here_s']:.4f} s" for r in rows)
    )
    for m in pd.MODELS:
        devs = [abs(r[m]["ratio"] - 1) for r in rows if r[m]["ratio"] is not None]
        if devs:
            print(
                f"mean |profile/driver - 1|, {m}: {statistics.fmean(devs):.1%} (max {max(devs):.1%})"
            )
    if args.out:
        Path(args.out).write_text(
            json.dumps({"params": args.params, "rows": rows}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
