"""The report's memory-hierarchy sections (bspkit.pages.imh_report): their tables and plots from a
synthetic run with known parameters, and the page as headless Chromium renders it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import CHROMIUM, check_report, missing_dependency, render_in_chromium, run_bspkit
from synth import ImhTruth, SynthSpec, write_synthetic

IMH_IDS = ("imh-mem", "imh-pp", "imh-disk", "imh-model")


@pytest.fixture(scope="module")
def imh_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("imh-report")
    write_synthetic(d / "raw.jsonl", SynthSpec(p=4, imh=ImhTruth(), noise=0.01))
    r = run_bspkit("report", str(d))
    assert r.returncode == 0, r.stderr
    r = run_bspkit("fit", str(d / "raw.jsonl"))
    assert r.returncode == 0, r.stderr
    return d


def _section(html: str, sid: str) -> str:
    start = html.index(f'id="{sid}"')
    nxt = html.find("<h2", start)
    return html[start : nxt if nxt > 0 else len(html)]


@pytest.mark.slow
def test_the_sections_carry_the_papers_tables(imh_report: Path) -> None:
    params = json.loads((imh_report / "params.json").read_text())
    html = check_report(imh_report / "report.html", params)
    for sid in IMH_IDS:
        assert f'id="{sid}"' in html, sid
    mem = _section(html, "imh-mem")
    assert "Table 3" in mem and "held-out" in mem and "STREAM copy" in mem
    # the fitted T_c of the out-of-cache double reads (12 ns in the truth) is in the table
    row = re.search(r"<tr><td[^>]*>read/double/cold/p1</td><td[^>]*>memory</td>(.*?)</tr>", mem, re.S)
    assert row and re.search(r">1[12](\.\d+)? <span", row.group(1)), row
    pp = _section(html, "imh-pp")
    assert "Table 5 at p = 4" in pp
    for pattern in ("permutation", "pingpong", "scatter", "broadcast"):
        assert f"<td>{pattern}</td>" in pp or f'<td class="l">{pattern}</td>' in pp, pattern
    disk = _section(html, "imh-disk")
    assert "O_DIRECT" in disk and "startup [ms]" in disk
    # read/direct at 800 MB/s in the truth
    assert re.search(r">read</td><td[^>]*>sequential</td><td[^>]*>direct</td>.*?>(79\d|80\d)(\.\d+)?</td>", disk, re.S)
    model = _section(html, "imh-model")
    for name in ("T_n", "T_c", "T_s", "tau_d", "T_r", "tau_w"):
        assert f">{name}<" in model, name


@pytest.mark.slow
def test_a_run_without_the_suites_has_no_such_sections(synth_run: Path) -> None:
    r = run_bspkit("report", str(synth_run))
    assert r.returncode == 0, r.stderr
    html = (synth_run / "report.html").read_text()
    assert not any(f'id="{sid}"' in html for sid in IMH_IDS)


@pytest.mark.skipif(CHROMIUM is None, reason=missing_dependency("Chromium", "no chromium"))
@pytest.mark.slow
def test_headless_chromium_shows_every_section_with_its_tables_and_plots(imh_report: Path, tmp_path: Path) -> None:
    seen = render_in_chromium(imh_report / "report.html", tmp_path)
    assert seen["broken_images"] == 0
    sections = seen["sections"]
    want = {"imh-mem": (3, 2), "imh-pp": (2, 1), "imh-disk": (1, 1), "imh-model": (1, 0)}  # tables, images
    for sid, (tables, images) in want.items():
        assert sid in sections, sorted(sections)
        assert sections[sid]["tables"] >= tables, (sid, sections[sid])
        assert sections[sid]["images"] == images, (sid, sections[sid])
        assert sections[sid]["rows"] > tables, (sid, sections[sid])  # headers and data rows
