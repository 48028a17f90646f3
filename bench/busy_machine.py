#!/usr/bin/env python3
"""busy_machine.py - trust on a busy machine (issue 29): the probe and `bspkit validate` in three
conditions of the machine, with the machine's state beside every measurement.

Conditions (threads, p = 2 on this machine's cores):
  quiet   nothing of ours beside the measurement;
  loop    a bounded busy loop of our own on one core (the last), during half the run: on for
          --period seconds, stopped (SIGSTOP) for as long, and so on;
  bspjob  a second BSP job of our own on both cores (bspalg-cannon at p = 2), during half the
          run in the same way.
In each: `bspkit probe --suites bsp` (its check of eq. 2.6 on the unmarked points, the marked ones
apart with their as-it-was error), then `bspkit validate` of Cannon, matmul, LLCS, radix sort
and LU against that probe (unmarked error of the best model, marked runs, their as-it-was
error), and headless Chromium screenshots of both first screens at 1400x900 and 1280x800.
Every load is ours and ends with the condition (killed, and bounded by `timeout`).

Writes OUT/<condition>/..., OUT/busy.json and prints the table condition x (probe check, each
algorithm). Usage, from the repository root, with nothing else running:
  .venv/bin/python bench/busy_machine.py --out results/busy [--conditions quiet,loop,bspjob]
      [--algs cannon-put,...] [--quick] [--period 4]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BSPKIT = [sys.executable, "-m", "bspkit"]

# algorithm: (sizes, values of its second parameter) giving runs of 0.1-1.5 s at p = 2 on 2
# cores (runs under 0.1 s are not scored)
CASES: dict[str, tuple[str, str | None]] = {
    "cannon-put": ("2000,2400", None),
    "matmul-blockcyclic": ("2000,2400", "8"),
    "llcs-dp": ("20000,40000", "4"),
    "rdxsort": ("16777216,33554432", "8"),
    "lu": ("2500,3000", "64"),
}


def build_dir() -> Path:
    return Path(os.environ.get("BSPKIT_BUILD_DIR", ROOT / "build"))


def load_command(kind: str, seconds: float) -> list[str] | None:
    """The load of a condition, bounded by `timeout`; None for quiet."""
    cores = os.cpu_count() or 1
    if kind == "quiet":
        return None
    if kind == "loop":
        spin = "while True: pass"
        return ["timeout", str(int(seconds)), "taskset", "-c", str(cores - 1), sys.executable, "-c", spin]
    if kind == "bspjob":
        b = build_dir() / "bin"
        job = [str(b / "bsprun"), "-n", "2", str(b / "bspalg-cannon"), "--size", "1200", "--reps", "100000"]
        return ["timeout", str(int(seconds)), *job, "--no-check"]
    raise SystemExit(f"unknown condition {kind!r}: quiet, loop or bspjob")


@contextmanager
def load(kind: str, period: float, limit_s: float) -> Iterator[None]:
    """Runs the condition's load, on for `period` seconds and stopped for as long, until the
    block ends; then kills it."""
    cmd = load_command(kind, limit_s)
    if cmd is None:
        yield
        return
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    done = threading.Event()

    def toggle() -> None:
        running = True
        while not done.wait(period):
            running = not running
            try:
                os.killpg(proc.pid, signal.SIGCONT if running else signal.SIGSTOP)
            except ProcessLookupError:
                return

    t = threading.Thread(target=toggle, daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join()
        for sig in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                pass
        proc.wait()


def run(cmd: list[str], log: Path) -> int:
    with log.open("w") as f:
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=False).returncode


def screenshot(page: Path, png: Path, size: str) -> bool:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        return False
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    cmd += [f"--window-size={size}", f"--screenshot={png}", page.as_uri()]
    return subprocess.run(cmd, capture_output=True, timeout=120, check=False).returncode == 0 and png.exists()


def probe_row(params: dict[str, Any]) -> dict[str, Any]:
    val = params.get("validation") or {}
    marked = val.get("marked") or {}
    state = (params.get("machine_state") or {}).get("summary") or {}
    return {
        "check_unmarked": val.get("mean_abs_rel_error"),
        "points_unmarked": val.get("used"),
        "marked_points": marked.get("points", 0),
        "marked_raw": (marked.get("raw") or {}).get("mean_abs_rel_error"),
        "marked_as_it_was": (marked.get("as_it_was") or {}).get("mean_abs_rel_error"),
        "batches": state.get("batches"),
        "marked_batches": state.get("marked"),
        "left_out_points": sum(((params.get("machine_state") or {}).get("left_out_points") or {}).values()),
        "kept_marked": (params.get("machine_state") or {}).get("kept_marked"),
    }


def validate_row(result: dict[str, Any]) -> dict[str, Any]:
    s = result["summary"]["all"]
    best = s.get("best_model") or "g(h,h*)"
    marked = s.get("marked") or {}
    unexplained = [
        abs(e) for r in result["rows"] if not (r.get("machine_state") or {}).get("all_marked")
        if (e := r["rel_error"].get(best)) is not None and abs(e) > 0.2
    ]
    return {
        "model": best,
        "unmarked_error": s.get(best),
        "runs_unmarked": s.get("runs_used"),
        "reps_left_out": s.get("reps_left_out", 0),
        "marked_runs": marked.get("runs", 0),
        "marked_raw": (marked.get("raw") or {}).get(best),
        "marked_as_it_was": (marked.get("as_it_was") or {}).get(best),
        "unexplained_above_20pct": len(unexplained),
    }


def pct(v: Any) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--conditions", default="quiet,loop,bspjob")
    ap.add_argument("--algs", default=",".join(CASES))
    ap.add_argument("--period", type=float, default=4.0, help="seconds on, then as many stopped (default 4)")
    ap.add_argument("--quick", action="store_true", help="bspkit probe --quick")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    env_note = {
        "cpu": next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?"),
        "cores": os.cpu_count(),
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "host": platform.node(),
        "loadavg_start": os.getloadavg(),
    }
    results: dict[str, Any] = {"machine": env_note, "conditions": {}}
    for cond in args.conditions.split(","):
        d = args.out / cond
        d.mkdir(exist_ok=True)
        row: dict[str, Any] = {"loadavg_start": os.getloadavg()}
        print(f"== {cond}", flush=True)
        with load(cond, args.period, 3600):
            probe_dir = d / "probe"
            cmd = [*BSPKIT, "probe", "-n", "2", "--suites", "bsp", "--output-dir", str(probe_dir), "--force"]
            rc = run([*cmd, *(["--quick"] if args.quick else [])], d / "probe.log")
            if rc != 0:
                raise SystemExit(f"{cond}: the probe failed ({rc}): see {d / 'probe.log'}")
            params_path = probe_dir / "params.json"
            row["probe"] = probe_row(json.loads(params_path.read_text()))
            print(f"   probe: check {pct(row['probe']['check_unmarked'])} unmarked, {row['probe']['marked_points']} marked", flush=True)
            for alg in args.algs.split(","):
                sizes, values = CASES[alg]
                out = d / alg
                shutil.rmtree(out, ignore_errors=True)
                vcmd = [*BSPKIT, "validate", alg, "-n", "2", "--params", str(params_path), "--sizes", sizes]
                vcmd += [*(["--values", values] if values else []), "--output-dir", str(out)]
                if run(vcmd, d / f"{alg}.log") != 0:
                    raise SystemExit(f"{cond}: validate {alg} failed: see {d / f'{alg}.log'}")
                row[alg] = validate_row(json.loads((out / "validate.json").read_text()))
                print(f"   {alg}: {pct(row[alg]['unmarked_error'])} unmarked, {row[alg]['marked_runs']} marked", flush=True)
        row["loadavg_end"] = os.getloadavg()
        for size in ("1400,900", "1280,800"):
            tag = size.replace(",", "x")
            screenshot(probe_dir / "report.html", d / f"probe-{tag}.png", size)
            screenshot(d / "cannon-put" / "validate.html", d / f"validate-cannon-{tag}.png", size)
        results["conditions"][cond] = row
        (args.out / "busy.json").write_text(json.dumps(results, indent=1))
    algs = args.algs.split(",")
    print("\ncondition  probe check (unmarked; marked: raw -> as it was)  " + "  ".join(algs))
    for cond, row in results["conditions"].items():
        pr = row["probe"]
        cells = [
            f"{pct(row[a]['unmarked_error'])}"
            + (f" [{row[a]['marked_runs']} marked: {pct(row[a]['marked_raw'])} -> {pct(row[a]['marked_as_it_was'])}]" if row[a]["marked_runs"] else "")
            for a in algs
        ]
        print(
            f"{cond:<9}  {pct(pr['check_unmarked'])} on {pr['points_unmarked']}; {pr['marked_points']} marked: "
            f"{pct(pr['marked_raw'])} -> {pct(pr['marked_as_it_was'])}  " + "  ".join(cells)
        )
    print(f"results: {args.out / 'busy.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
