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
Writes OUT/accuracy.json and prints a table (median |error| per algorithm and p, mean |error| per
model, the band's coverage with its Wilson 95 % interval). --rescore DIR... measures nothing: it
predicts the rows of earlier sweeps again with this bspkit (after a change to the model or the
band). Usage, from the repository root:
  .venv/bin/python bench/predict_accuracy.py --out results/predict-accuracy [--procs 1,2,4,8]
      [--algs cannon-put,matmul-blockcyclic,llcs-dp,rdxsort,lu] [-b threads] [--hostfile FILE]
  .venv/bin/python bench/predict_accuracy.py --out results/rescored --rescore results/predict-accuracy
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


def predict(alg: str, p: int, params: Path, f_path: Path) -> dict[str, Any]:
    """`bspkit predict` of the case at p with the probe's parameters and f from the run in
    f_path (its JSON); the model and the band's validation residual come from the newest
    `bspkit validate` of the algorithm under results/validate/, as for any user."""
    size, predict_opts, _ = CASES[alg]
    return run_json(
        [*BSPKIT, "predict", alg, "--size", str(size), "-n", str(p), *predict_opts]
        + ["--params", str(params), "--f-from", str(f_path), "--json", "-"]
        # every process of this bench runs on this machine's cores, emulated hosts too
        + ["--cores", str(os.cpu_count() or 1)]
    )


def rescore(dirs: list[Path]) -> list[dict[str, Any]]:
    """The rows of earlier sweeps (DIR/accuracy.json) predicted again by this bspkit from the
    same probe and f runs (DIR/probe-pP, DIR/ALG-f-roundR-pP.json): the measurements stay, the
    predictions and their bands are this version's."""
    rows = []
    for d in dirs:
        for row in json.loads((d / "accuracy.json").read_text())["rows"]:
            alg, p, rnd = row["algorithm"], row["p"], row["round"]
            predicted = predict(
                alg,
                p,
                d / f"probe-p{p}" / "params.json",
                d / f"{alg}-f-round{rnd}-p{p}.json",
            )
            t = row["measured_s"]
            low, high = predicted["interval_s"]
            row.update(
                sweep=str(d),
                predicted_s=predicted["predicted_s"],
                best_model=predicted["best_model"],
                models=predicted["models"],
                interval_s=predicted["interval_s"],
                error=predicted["predicted_s"] / t - 1,
                errors={
                    m: (v / t - 1 if v else None)
                    for m, v in predicted["models"].items()
                },
                in_band=low <= t <= high,
                spread=predicted["machine"]["spread"],
            )
            rows.append(row)
    return rows


def write_summary(
    out: Path, rows: list[dict[str, Any]], args: argparse.Namespace
) -> None:
    """Per algorithm: the median error at each p, the mean |error| per model, and the band's
    coverage with its Wilson 95 % interval (bspkit.model.trust.coverage); the same over all
    rows. Prints the table and writes OUT/accuracy.json."""
    from bspkit.model import trust

    summary: dict[str, Any] = {}
    for alg in dict.fromkeys(r["algorithm"] for r in rows):
        mine = [r for r in rows if r["algorithm"] == alg]
        procs = sorted({r["p"] for r in mine})
        per_p = {
            p: statistics.median(r["error"] for r in mine if r["p"] == p) for p in procs
        }
        summary[alg] = {
            "median_error_per_p": per_p,
            "median_abs_error_per_p": {
                p: statistics.median(abs(r["error"]) for r in mine if r["p"] == p)
                for p in procs
            },
            "mean_abs_error": statistics.mean(abs(e) for e in per_p.values()),
            "mean_abs_error_all_runs": statistics.mean(abs(r["error"]) for r in mine),
            "per_model": {
                m: statistics.mean(
                    abs(r["errors"][m]) for r in mine if r["errors"][m] is not None
                )
                for m in mine[0]["errors"]
                if any(r["errors"][m] is not None for r in mine)
            },
            "coverage": trust.coverage([r["in_band"] for r in mine]),
        }
        cov = summary[alg]["coverage"]
        print(
            f"{alg:<20} median |error| per p: "
            + ", ".join(
                f"p={p}: {e:.1%}"
                for p, e in summary[alg]["median_abs_error_per_p"].items()
            )
            + f"; band coverage {cov['inside']}/{cov['runs']} ({100 * cov['ci'][0]:.0f}-{100 * cov['ci'][1]:.0f}%)"
        )
    total = trust.coverage([r["in_band"] for r in rows])
    summary["all"] = {"coverage": total}
    if total:
        print(f"all: {trust.coverage_text(total)}")
    machine: dict[str, Any] = {
        "cores": os.cpu_count(),
        "loadavg_end": os.getloadavg(),
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "f_source": getattr(args, "f_source", None),
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
    ap.add_argument(
        "--rescore",
        nargs="+",
        metavar="DIR",
        help="measure nothing: predict the rows of these earlier sweeps again with this bspkit (their probes "
        "and f runs) and write OUT/accuracy.json from them",
    )
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.rescore:
        rows = rescore([Path(d) for d in args.rescore])
        write_summary(out, rows, args)
        return 0
    procs = [int(p) for p in args.procs.split(",")]
    params = {p: probe(args, p) for p in procs}
    rows: list[dict[str, Any]] = []
    for rnd in range(args.rounds):
        for alg in args.algs.split(","):
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
                predicted = predict(alg, p, params[p], f_path)
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
    write_summary(out, rows, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
