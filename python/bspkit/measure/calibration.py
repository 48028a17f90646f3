"""Running the short calibration and its files (issue 17); the model (what a calibration
measures, the drift, the scaled parameters) is bspkit.model.drift.

A `Calibrator` runs `bspprobe --calibrate` (one `calibration` round, docs/probe-format.md) on
the run's back end and p; `calibration_file` / `read_calibration` write and read the result
with its drift against a parameter file; `verdict` says whether the probe still describes the
machine.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bspkit.console import Failure, describe_exit
from bspkit.fileformat import JsonObject, format_problem
from bspkit.measure import programs
from bspkit.model.drift import HEADLINE, Calibration, CalibrationError, Drift
from bspkit.model.params import Params
from bspkit.units import plain
from bspkit.version import __version__

CALIBRATION_FORMAT = 1
# Drift beyond this factor in any headline parameter: the probe no longer describes the machine.
REPROBE_FACTOR = 1.25


# ------------------------------------------------------------------ running one


def read_probe_output(path: Path) -> tuple[JsonObject, list[Calibration]]:
    """(header, calibration rounds) of a bspprobe JSON-lines file."""
    header: JsonObject = {}
    rounds: list[Calibration] = []
    with path.open(encoding="utf-8") as fh:
        for ln, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise CalibrationError(f"{path}:{ln}: not JSON: {e.msg}") from None
            if rec.get("type") == "header":
                header = rec
            elif rec.get("type") == "calibration":
                rounds.append(Calibration.from_record(rec, header.get("date")))
    return header, rounds


@dataclass
class Calibrator:
    """Runs `bspprobe --calibrate` on a back end and p, a process of its own: one round per call
    (`bspkit calibrate`; validate and run calibrate inside the driver instead)."""

    bspprobe: Path
    bsprun: Path
    backend: str
    nprocs: int
    hostfile: Path | None = None
    quick: bool = False
    wall_s: float | None = None  # the last call's wall time, launch included

    def run(self) -> Calibration:
        with tempfile.TemporaryDirectory(prefix="bspkit-calibrate-") as tmp:
            out = Path(tmp) / "calibration.jsonl"
            hosts = ["--hostfile", str(self.hostfile)] if self.hostfile else []
            cmd = [str(self.bsprun), "-n", str(self.nprocs), "-b", self.backend, *hosts, str(self.bspprobe)]
            # --no-mlock: locking the probe's memory costs a third of a round, and every page
            # a calibration times is touched before its clock starts anyway
            cmd += ["--calibrate", "--no-mlock", "--output", str(out), *(["--quick"] if self.quick else [])]
            t0 = time.monotonic()
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise Failure(f"the calibration could not run: {e}") from None
            self.wall_s = time.monotonic() - t0
            if proc.returncode != 0:
                tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
                raise Failure(f"the calibration failed ({describe_exit(proc.returncode)}): {tail}")
            try:
                header, rounds = read_probe_output(out)
            except (OSError, CalibrationError) as e:
                raise Failure(f"the calibration's output: {e}") from None
        if not rounds:
            raise Failure(f"the calibration wrote no calibration record ({' '.join(cmd)})")
        cal = rounds[0]
        cal.extra = {
            "backend": header.get("backend", self.backend),
            "p": header.get("p", self.nprocs),
            "mode": "quick" if self.quick else "full",
            "host": header.get("host"),
            "cpu": header.get("cpu"),
            "blas_coretype": header.get("blas_coretype"),
            "wall_s": round(self.wall_s, 4),
        }
        return cal


def calibrator_for(
    params: Params | None, build_dir: str | None, backend: str, nprocs: int, hostfile: Path | None, quick: bool | None
) -> Calibrator:
    """A Calibrator whose f kernel sizes match the parameter file's probe (quick or full)."""
    if quick is None:
        quick = bool(params is not None and params.machine.get("mode") == "quick")
    return Calibrator(
        bspprobe=programs.find("bspprobe", build_dir),
        bsprun=programs.find("bsprun", build_dir),
        backend=backend,
        nprocs=nprocs,
        hostfile=hostfile,
        quick=quick,
    )


# ------------------------------------------------------------------ the file


def calibration_file(cal: Calibration, params_path: Path | None, drift: Drift | None) -> JsonObject:
    return {
        "format": CALIBRATION_FORMAT,
        "kind": "bspkit calibration",
        "bspkit_version": __version__,
        **cal.to_json(),
        "params_file": str(params_path) if params_path else None,
        "drift": drift.to_json() if drift else None,
    }


def read_calibration(path: Path) -> Calibration:
    """A file that `bspkit calibrate` wrote; Failure when it is not one."""
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise Failure(f"cannot read {path}: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise Failure(f"{path}: not JSON: {e.msg} (line {e.lineno})") from None
    if not isinstance(d, dict) or d.get("kind") != "bspkit calibration":
        raise Failure(f"{path}: not a calibration file (bspkit calibrate writes them)")
    problem = format_problem(d, "calibration file", CALIBRATION_FORMAT)
    if problem:
        raise Failure(f"{path}: {problem}")
    try:
        return Calibration.from_json(d)
    except CalibrationError as e:
        raise Failure(f"{path}: {e}") from None


def verdict(drift: Drift, bound: float = REPROBE_FACTOR) -> str:
    """One sentence: whether the probe still describes the machine."""
    head = drift.headline
    off = [k for k in (*HEADLINE, "g_small", "l_shift") if head.get(k) and not 1 / bound <= head[k] <= bound]  # type: ignore[operator]
    if not off:
        return f"every parameter within x{plain(bound)} of the probe: its parameters still describe this machine"
    parts = ", ".join(f"{k} x{head[k]:.2f}" for k in off)
    return (
        f"the machine has moved ({parts}, beyond x{plain(bound)}): predict with the calibrated parameters "
        "(--calibrate), and re-probe if it stays so"
    )
