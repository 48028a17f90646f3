#!/usr/bin/env python3
"""predict_accuracy.py - `bspkit predict` (the closed-form cost, nothing run) against measured
runs of the drivers at each p, with a probe at that p: the relative error per model and whether
the run fell inside the 10-90% band.

Per p of --procs: a probe of the back end at p (`bspkit probe --quick`, kept in OUT/probe-pP and
reused). Per algorithm and p, in turn: a run at p = 1 gives f (its median time over its W, or
with --f-source kernel its --measure-f kernel timing), then the measured run at p (`bspkit run`,
the driver's median of --reps) and its prediction (`bspkit predict --params
OUT/probe-pP/params.json --f-from the p = 1 run`); the whole sweep --rounds times. The f run
is taken just before the measured one because this machine's speed drifts over minutes (runs
of LLCS at p = 1 from 1.26 to 2.59 s within one minute): the prediction at p is then the
ratio T(p)/T(1) of the model against that of the machine, taken in one moment. Runs are taken
one after the other, never beside another job.
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


def run_json(cmd: list[str], parse: bool = True) -> dict[str, Any]:
    out = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(
            f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr[-2000:]}"
        )
    return json.loads(out.stdout.strip().splitlines()[-1]) if parse else {}


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


def driver_run(
    args: argparse.Namespace, alg: str, p: int, reps: int, extra: list[str]
) -> dict[str, Any]:
    """One run of the driver through `bspkit run` (its JSON: the median of its repetitions)."""
    size, _, driver_opts = CASES[alg]
    cmd = [*BSPKIT, "run", alg, *launch(args, p), "--size", str(size), "--json", "-"]
    return run_json([*cmd, "--", "-r", str(reps), "--no-check", *extra, *driver_opts])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--procs", default="1,2,4,8")
    ap.add_argument("--algs", default=",".join(CASES))
    ap.add_argument("-b", "--backend", default="threads")
    ap.add_argument("--hostfile")
    ap.add_argument("-r", "--reps", type=int, default=3)
    ap.add_argument(
        "--rounds", type=int, default=3, help="the whole sweep this many times, in turn"
    )
    ap.add_argument(
        "--f-source",
        choices=("time", "kernel", "busy"),
        default="time",
        help="f from the p = 1 run's median time over its W (default), or from its --measure-f kernel timing, or "
        "(busy) the kernel timed on every process at once in a run at p = min(p, cores) (--measure-f's f_all: "
        "the rate of a core while the others compute too)",
    )
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    procs = [int(p) for p in args.procs.split(",")]
    params = {p: probe(args, p) for p in procs}
    rows: list[dict[str, Any]] = []
    for rnd in range(args.rounds):
        for alg in args.algs.split(","):
            _, predict_opts, _ = CASES[alg]
            for p in procs:
                # f from a run on one process taken just before the measured one: the machine's
                # speed drifts between minutes, and a ratio taken in one moment does not
                kernel = ["--measure-f"] if args.f_source == "kernel" else []
                f_args = argparse.Namespace(
                    **{**vars(args), "backend": "threads", "hostfile": None}
                )
                f_run = driver_run(f_args, alg, 1, args.reps, kernel)
                f_path = out / f"{alg}-f-round{rnd}-p{p}.json"
                f_path.write_text(json.dumps(f_run))
                measured = driver_run(args, alg, p, args.reps, [])
                predicted = run_json(
                    [
                        *BSPKIT,
                        "predict",
                        alg,
                        "--size",
                        str(CASES[alg][0]),
                        "-n",
                        str(p),
                        *predict_opts,
                    ]
                    + [
                        "--params",
                        str(params[p]),
                        "--f-from",
                        str(f_path),
                        "--json",
                        "-",
                    ]
                    # every process of this bench runs on this machine's cores, emulated hosts too
                    + ["--cores", str(os.cpu_count() or 1)]
                )
                t = measured["time_s"]
                low, high = predicted["interval_s"]
                row = {
                    "round": rnd,
                    "algorithm": alg,
                    "p": p,
                    "n": CASES[alg][0],
                    "measured_s": t,
                    "times_s": measured["times_s"],
                    "f_run_s": f_run["time_s"],
                    "predicted_s": predicted["predicted_s"],
                    "best_model": predicted["best_model"],
                    "models": predicted["models"],
                    "interval_s": predicted["interval_s"],
                    "error": predicted["predicted_s"] / t - 1,
                    "errors": {
                        m: (v / t - 1 if v else None)
                        for m, v in predicted["models"].items()
                    },
                    "in_band": low <= t <= high,
                    "counts": {k: (measured[k], predicted[k]) for k in ("W", "H", "S")},
                }
                rows.append(row)
                print(
                    f"round {rnd} {alg:<20} p = {p:<3} measured {t:.4g} s  predicted {row['predicted_s']:.4g} s "
                    f"({row['error']:+.1%}, {row['best_model']})  band {low:.4g}-{high:.4g} "
                    f"{'in' if row['in_band'] else 'OUT'}",
                    flush=True,
                )
    summary = {}
    for alg in args.algs.split(","):
        mine = [r for r in rows if r["algorithm"] == alg]
        per_p = {
            p: statistics.median(r["error"] for r in mine if r["p"] == p) for p in procs
        }
        summary[alg] = {
            "median_error_per_p": per_p,
            "mean_abs_error": statistics.mean(abs(e) for e in per_p.values()),
            "mean_abs_error_all_runs": statistics.mean(abs(r["error"]) for r in mine),
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
            f"{alg:<20} mean |median error| over p {summary[alg]['mean_abs_error']:.1%} "
            f"({', '.join(f'p={p}: {e:+.1%}' for p, e in per_p.items())}), band coverage {summary[alg]['coverage']:.0%}"
        )
    machine: dict[str, Any] = {
        "cores": os.cpu_count(),
        "loadavg_end": os.getloadavg(),
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "f_source": args.f_source,
    }
    try:
        machine["cpu"] = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except StopIteration:
        machine["cpu"] = platform.machine()
    (out / "accuracy.json").write_text(
        json.dumps({"machine": machine, "rows": rows, "summary": summary}, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
