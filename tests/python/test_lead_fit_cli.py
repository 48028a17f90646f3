"""Fitting on synthetic data with known parameters, and the bspkit CLI end to end."""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bspkit import synth

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BSPKIT_BUILD_DIR", REPO / "build"))


def bspkit(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "bspkit", *args], capture_output=True, text=True,
                          timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"bspkit {args} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def fit_file(tmp_path: Path, spec: synth.SynthSpec) -> dict:
    raw = synth.write_synthetic(tmp_path / "raw.jsonl", spec)
    bspkit("fit", str(raw), "-o", str(tmp_path / "params.json"))
    return json.loads((tmp_path / "params.json").read_text())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lsq_recovers_known_parameters_within_its_intervals(tmp_path: Path, seed: int) -> None:
    truth = {"put/alltoall": synth.GTruth(1.0e-9, 2000.0, 16.0),
             "get/permutation": synth.GTruth(2.0e-9, 800.0, 120.0)}
    params = fit_file(tmp_path, synth.SynthSpec(g=truth, seed=seed))
    for key, t in truth.items():
        lsq = params["g"][key]["lsq"]
        for name, value in (("g_inf", t.g_inf), ("h_half", t.h_half), ("o", t.o)):
            est, lo, hi = lsq[name]
            assert lo <= value <= hi, f"{key} {name}: truth {value} outside [{lo}, {hi}]"
            assert abs(est - value) <= 0.05 * value, f"{key} {name}: {est} vs {value}"


def test_weighted_estimators_are_sane(tmp_path: Path) -> None:
    params = fit_file(tmp_path, synth.SynthSpec())
    g = params["g"]["put/alltoall"]
    # eq. (3.2) weights large h: close to g_inf; eq. (3.3) small h: far above it.
    assert 0.9e-9 < g["g_inf"] < 1.2e-9
    assert g["g_small"] > 100 * g["g_inf"]
    assert g["h_half"] > 0 and g["o"] > 0


def test_validation_passes_on_model_data(tmp_path: Path) -> None:
    params = fit_file(tmp_path, synth.SynthSpec())
    text = json.dumps(params["validation"])
    assert '"pass": true' in text.lower() or "PASS" in text


def test_negative_parameter_is_flagged_not_reported(tmp_path: Path) -> None:
    # g~ falling with h faster than the model allows: h_half would come out negative.
    bad = {"put/alltoall": synth.GTruth(1.0e-9, -900.0, 0.0)}
    params = fit_file(tmp_path, synth.SynthSpec(g=bad, validation=0))
    entry = params["g"]["put/alltoall"]
    h_half = entry["lsq"]["h_half"]
    assert h_half is None or h_half[0] is None, f"negative h_half reported: {h_half}"
    assert "h_half" in json.dumps(entry.get("flags", []))


def test_report_is_self_contained_with_png_plots(tmp_path: Path) -> None:
    raw = synth.write_synthetic(tmp_path / "run" / "raw.jsonl", synth.SynthSpec())
    bspkit("report", str(raw), "-o", str(tmp_path / "report.html"))
    html = (tmp_path / "report.html").read_text()
    assert not re.search(r'src="(?!data:)', html), "external reference in the report"
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) >= 3
    for img in images:
        assert base64.b64decode(img)[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_two_runs(tmp_path: Path) -> None:
    a = synth.write_synthetic(tmp_path / "a" / "raw.jsonl", synth.SynthSpec(seed=1))
    b = synth.write_synthetic(tmp_path / "b" / "raw.jsonl",
                              synth.SynthSpec(seed=2, backend="mpi", g={
                                  "put/alltoall": synth.GTruth(3.0e-9, 5000.0, 40.0)}))
    bspkit("compare", str(a), str(b), "-o", str(tmp_path / "compare.html"))
    html = (tmp_path / "compare.html").read_text()
    assert "threads" in html and "mpi" in html


def test_usage_errors_exit_2() -> None:
    proc = bspkit("fit", check=False)
    assert proc.returncode == 2 and "usage" in proc.stderr.lower()
    proc = bspkit("no-such-command", check=False)
    assert proc.returncode == 2
    proc = bspkit("fit", "/nonexistent/raw.jsonl", check=False)
    assert proc.returncode == 1 and "nonexistent" in proc.stderr


@pytest.mark.skipif(not (BUILD / "probe" / "bspprobe").exists(),
                    reason="bspprobe not built (set BSPKIT_BUILD_DIR)")
def test_probe_end_to_end_on_a_tiny_grid(tmp_path: Path) -> None:
    out = tmp_path / "run"
    bspkit("probe", "--quick", "-n", "2", "--build-dir", str(BUILD),
           "--probe-binary", str(BUILD / "probe" / "bspprobe"), "--output-dir", str(out),
           "--", "--only", "g,l,memcpy", "--primitives", "put,send", "--patterns", "shift",
           "--max-words", "256", "--reps", "2")
    params = json.loads((out / "params.json").read_text())
    assert params["p"] == 2
    assert {"put/shift", "send/shift"} <= set(params["g"])
    assert params["l"]["empty"] is None or params["l"]["empty"] > 0
    assert (out / "report.html").stat().st_size > 10_000
    header = json.loads((out / "raw.jsonl").read_text().splitlines()[0])
    assert header["type"] == "header" and header["backend"] == "threads"
