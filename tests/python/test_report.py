"""The HTML reports end to end (`bspkit report`, `bspkit compare` on synthetic runs): every
section, the plots (valid PNGs, embedded), failed fits shown with their reason, several runs
in one page, the comparison's ranking (thesis Table 6.1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bspkit.report import RUN_SECTIONS

from conftest import assert_self_contained, check_report, report_pngs, run_bspkit
from synth import GTruth, SynthSpec, write_synthetic


def test_fit_and_report_on_synthetic_run(synth_run: Path) -> None:
    r = run_bspkit("fit", str(synth_run / "raw.jsonl"))
    assert r.returncode == 0, r.stderr
    assert "parameters written to" in r.stdout and "put/alltoall" in r.stdout
    assert "bspkit: fitting" in r.stderr  # progress on stderr
    params = json.loads((synth_run / "params.json").read_text())
    assert params["format"] == 1 and params["p"] == 2
    assert set(params) >= {
        "format",
        "source",
        "machine",
        "p",
        "f",
        "l",
        "memcpy_s_per_word",
        "g",
        "validation",
    }
    assert params["machine"]["blas_coretype"] == "Haswell" and params["machine"]["backend"] == "threads"
    assert set(params["l"]) == {"empty", "shift", "alltoall"}
    assert set(params["g"]) == {"put/alltoall", "get/permutation"}
    e = params["g"]["put/alltoall"]
    for k in (
        "g_inf",
        "g_small",
        "h_half",
        "g_mm",
        "o",
        "lsq",
        "error_bsp",
        "error_bspstar",
        "flags",
    ):
        assert k in e
    assert set(e["lsq"]) >= {"g_inf", "h_half", "o", "l0", "model", "residual_rel_rms"}
    assert e["lsq"]["model"] == "2.6"
    assert e["lsq"]["g_inf"][0] == pytest.approx(1e-9, rel=0.03)
    assert e["lsq"]["h_half"][0] == pytest.approx(2000, rel=0.05)
    assert e["lsq"]["o"][0] == pytest.approx(16, rel=0.1)
    assert params["validation"]["pass"] is True

    r = run_bspkit("report", str(synth_run))
    assert r.returncode == 0, r.stderr
    html = check_report(synth_run / "report.html", params)
    assert len(report_pngs(html)) == 7
    for text in (
        "Machine and build",
        "Haswell",
        "Table C.1",
        "Table C.2",
        "Table C.3",
        "As suite",
        "Total exchange: t/h",
        "Validation",
        "memcpy",
        "ε_BSP*",
        "Random Permutation",
        "All-to-all",
    ):
        assert text in html, text


def test_report_of_failed_fit_shows_reason(tmp_path: Path) -> None:
    spec = SynthSpec(g={"put/alltoall": GTruth(1e-9, 2000.0, 0.0)}, noise=0.05, seed=3, validation=4)
    d = tmp_path / "run"
    write_synthetic(d / "raw.jsonl", spec)
    assert run_bspkit("fit", str(d)).returncode == 0
    params = json.loads((d / "params.json").read_text())
    assert params["g"]["put/alltoall"]["lsq"]["o"] is None
    r = run_bspkit("report", str(d), "-o", str(tmp_path / "r.html"))
    assert r.returncode == 0, r.stderr
    html = check_report(tmp_path / "r.html", params)
    assert "failed fit: lsq (2.6) o" in html


def test_report_of_several_runs_in_one_file(tmp_path: Path) -> None:
    a = write_synthetic(tmp_path / "a" / "raw.jsonl", SynthSpec(seed=1))
    b = write_synthetic(tmp_path / "b" / "raw.jsonl", SynthSpec(seed=2, validation=0, as_suite=False))
    out = tmp_path / "both.html"
    r = run_bspkit("report", str(a.parent), str(b), "-o", str(out))
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    assert_self_contained(html)
    assert len(report_pngs(html)) == 7 + 5  # b: no As total exchange, no validation
    assert "Run 1:" in html and "Run 2:" in html


# ---------------------------------------------------------------------- compare


def test_compare_two_runs(tmp_path: Path) -> None:
    fast = write_synthetic(tmp_path / "fast" / "raw.jsonl", SynthSpec(seed=1, library="bspkit"))
    slow_spec = SynthSpec(
        seed=2,
        library="otherbsp",
        backend="unknown",
        g={
            "put/alltoall": GTruth(3e-9, 5000.0, 40.0),
            "get/permutation": GTruth(2.1e-9, 820.0, 118.0),
        },
        l={"empty": 5e-6, "shift": 8e-6, "alltoall": 9e-6},
    )
    slow = write_synthetic(tmp_path / "slow" / "raw.jsonl", slow_spec)
    assert run_bspkit("fit", str(slow)).returncode == 0
    out = tmp_path / "cmp.html"
    # one run given as a directory (refit), one as its params.json
    r = run_bspkit("compare", str(fast.parent), str(slow.parent / "params.json"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "R1: bspkit/threads" in r.stdout and "R2: otherbsp/unknown" in r.stdout
    lines = {ln.split("  ")[0].strip(): ln for ln in r.stdout.splitlines()}
    assert re.search(r"Latency\s+●●●\s+●\s*$", lines["Latency"])
    assert re.search(
        r"Communication gap \(put/get\)\s+●●●\s+●\s*$",
        lines["Communication gap (put/get)"],
    )
    assert re.search(r"Computation speed \(f\)\s+●●●\s+●●●", lines["Computation speed (f)"])  # same f: both best
    html = out.read_text()
    assert_self_contained(html)
    assert len(report_pngs(html)) == 3
    for text in (
        "Ranking",
        "Table 6.1",
        "g_inf [ns/word]",
        "h_half [words]",
        "o [words]",
        "latency l",
        "As total exchange",
    ):
        assert text in html, text


def test_report_is_self_contained_with_png_plots(tmp_path: Path) -> None:
    raw = write_synthetic(tmp_path / "run" / "raw.jsonl", SynthSpec())
    r = run_bspkit("report", str(raw), "-o", str(tmp_path / "report.html"))
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "report.html").read_text()
    assert not re.search(r'src="(?!data:)', html), "external reference in the report"
    assert_self_contained(html)
    assert len(report_pngs(html)) >= 3  # report_pngs checks each is a PNG


def test_compare_two_back_ends_from_raw_files(tmp_path: Path) -> None:
    a = write_synthetic(tmp_path / "a" / "raw.jsonl", SynthSpec(seed=1))
    b = write_synthetic(
        tmp_path / "b" / "raw.jsonl",
        SynthSpec(seed=2, backend="mpi", g={"put/alltoall": GTruth(3.0e-9, 5000.0, 40.0)}),
    )
    r = run_bspkit("compare", str(a), str(b), "-o", str(tmp_path / "compare.html"))
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "compare.html").read_text()
    assert "threads" in html and "mpi" in html


def test_one_function_per_section_in_page_order(synth_run: Path) -> None:
    from bspkit.inputs import load_fit
    from bspkit.report import run_sections

    run, params = load_fit(synth_run / "raw.jsonl")
    html, images = run_sections(run, params)
    ids = re.findall(r'<h2 id="([a-z]+)"', html)
    assert ids == [
        "machine",
        "noise",
        "f",
        "l",
        "g",
        "surfaces",
        "as",
        "validation",
        "memcpy",
    ]
    assert len(RUN_SECTIONS) == 8
    parts = [section(run, params, "") for section in RUN_SECTIONS]
    assert html == "\n".join(p for s in parts for p in s.parts)
    assert images == sum(s.images for s in parts) == 7
