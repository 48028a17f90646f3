#!/usr/bin/env python3
"""checkpoint_faults.py - kill a process of a checkpointing run at a random time, restart it,
compare: the fault-injection campaign of docs/checkpoint.md (issue: 100 runs per back end).

For each back end, one uninterrupted run of tests/checkpoint/ckpt_state gives the reference
digest and its duration T. Then each of --runs trials:
  1. starts `bsprun -b B -n P --checkpoint-dir D ckpt_state --iterations I --work W`;
  2. at a uniformly random time in [0.1 T, 0.9 T] sends SIGKILL to one of its BSP processes,
     chosen at random (threads: the one OS process; mpi: one rank);
  3. waits for the job to end, notes the complete generations (those with a MANIFEST);
  4. runs `bsprun ... --restart D` and compares its digest with the reference (a kill before
     the first checkpoint was complete leaves nothing to restart from: then the run starts
     over in an emptied D, as a user would, and the trial is counted as such).
A generation is lost when the restart reports a complete one (with a manifest) as damaged.
Prints per back end: identical results, lost generations, and the medians of the time from
the kill to the job's end and from the kill to the restarted run's end; writes every trial
to --out as JSON. Measures a noisy thing on a shared machine: run it alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine_info import cpu_model  # bench/, this script's directory


def program_pids(session: int, name: str) -> list[int]:
    """The processes named `name` in the session (the job's ranks)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() == name and os.getsid(int(entry.name)) == session:
                pids.append(int(entry.name))
        except (OSError, ProcessLookupError):
            continue
    return pids


def complete_generations(directory: Path) -> list[int]:
    return sorted(int(g.name.split("-")[1]) for g in directory.glob("superstep-*") if (g / "MANIFEST").exists())


DIGEST = re.compile(r"^digest (\S+)", re.M)


def trial(cmd: list[str], restart: list[str], duration: float, rng: random.Random, prog: str) -> dict[str, Any]:
    """One kill and restart; returns what happened."""
    delay = rng.uniform(0.1, 0.9) * duration
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(delay)
    victims = program_pids(job.pid, prog)
    if job.poll() is not None or not victims:
        job.communicate()
        return {"delay_s": delay, "late": True}
    victim = rng.choice(victims)
    rank = sorted(victims).index(victim)
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    _, err = job.communicate()
    ended = time.monotonic()
    directory = Path(cmd[cmd.index("--checkpoint-dir") + 1])
    generations = complete_generations(directory)
    if not generations:  # nothing to restart from: start over
        shutil.rmtree(directory, ignore_errors=True)
        restart = cmd
    again = subprocess.run(restart, capture_output=True, text=True)
    done = time.monotonic()
    digest = DIGEST.search(again.stdout)
    lost = again.stderr.count("trying the one before it")
    return {
        "delay_s": delay,
        "late": False,
        "victim": rank,
        "killed_status": job.returncode,
        "complete_generations": generations,
        "started_over": not generations,
        "restart_status": again.returncode,
        "digest": digest.group(1) if digest else None,
        "restart_stdout": again.stdout.strip().splitlines()[:1],
        "restart_warnings": [line for line in again.stderr.splitlines() if "warning" in line],
        "lost_generations": lost,
        "kill_to_end_s": ended - killed,
        "kill_to_restarted_end_s": done - killed,
        "restart_s": done - ended,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="bspkit build directory (default: build)")
    ap.add_argument("--backends", default="threads,mpi,mpi-rma", help="comma-separated (default: all three)")
    ap.add_argument("--runs", type=int, default=100, help="trials per back end (default 100)")
    ap.add_argument("-n", "--nprocs", type=int, default=3, help="BSP processes (default 3)")
    ap.add_argument("--iterations", type=int, default=100, help="ckpt_state --iterations (default 100)")
    ap.add_argument("--work", type=int, default=30, help="ckpt_state --work (default 30)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="results/checkpoint/faults.json", help="every trial, as JSON")
    args = ap.parse_args()
    build = Path(args.build).absolute()
    bsprun, exe = build / "bin" / "bsprun", build / "tests" / "checkpoint" / "ckpt_state"
    if not exe.is_file():
        sys.exit(f"checkpoint_faults.py: {exe} is not built")
    rng = random.Random(args.seed)
    prog_args = [str(exe), "--iterations", str(args.iterations), "--work", str(args.work)]
    report: dict[str, Any] = {
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "load_before": os.getloadavg()},
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "unset"),
        "command": prog_args[1:],
        "nprocs": args.nprocs,
        "seed": args.seed,
        "backends": {},
    }
    print(f"cpu: {report['machine']['cpu']}; load {os.getloadavg()[0]:.2f}; p = {args.nprocs}; {args.runs} runs")
    for backend in args.backends.split(","):
        base = [str(bsprun), "-b", backend, "-n", str(args.nprocs)]
        t0 = time.monotonic()
        ref = subprocess.run([*base, *prog_args], capture_output=True, text=True, check=True)
        duration = time.monotonic() - t0
        want = DIGEST.search(ref.stdout)
        assert want, ref.stdout
        trials: list[dict[str, Any]] = []
        late = 0
        with tempfile.TemporaryDirectory(prefix="ckpt-faults-") as tmp:
            while len(trials) < args.runs:
                directory = Path(tmp) / f"run{len(trials)}"
                cmd = [*base, "--checkpoint-dir", str(directory), *prog_args]
                restart = [*base, "--restart", str(directory), *prog_args]
                t = trial(cmd, restart, duration, rng, exe.name[:15])
                shutil.rmtree(directory, ignore_errors=True)
                if t["late"]:
                    late += 1
                    continue
                t["identical"] = t["digest"] == want.group(1)
                trials.append(t)
                if not t["identical"]:
                    print(f"  {backend} trial {len(trials)}: DIFFERENT result: {t}", file=sys.stderr)
        same = sum(t["identical"] for t in trials)
        lost = sum(t["lost_generations"] for t in trials)
        k_end = statistics.median(t["kill_to_end_s"] for t in trials)
        k_done = statistics.median(t["kill_to_restarted_end_s"] for t in trials)
        over = sum(t["started_over"] for t in trials)
        print(
            f"{backend:<8} {same}/{len(trials)} identical, {lost} lost generations, uninterrupted run {duration:.2f} s; "
            f"median kill -> job ended {k_end:.2f} s, kill -> restarted run finished {k_done:.2f} s "
            f"({over} kills came before the first complete checkpoint: started over; {late} came after the run had "
            "ended and were redrawn)"
        )
        report["backends"][backend] = {
            "reference_digest": want.group(1),
            "uninterrupted_s": duration,
            "identical": same,
            "runs": len(trials),
            "lost_generations": lost,
            "redrawn_late_kills": late,
            "started_over": over,
            "median_kill_to_end_s": k_end,
            "median_kill_to_restarted_end_s": k_done,
            "trials": trials,
        }
    report["machine"]["load_after"] = os.getloadavg()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"trials written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
