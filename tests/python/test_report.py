"""The HTML reports end to end (`bspkit report`, `bspkit compare` on synthetic runs): every
section, the plots (valid PNGs, embedded), failed fits shown with their reason, several runs
in one page, the comparison's ranking (thesis Table 6.1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bspkit.pages.report import RUN_SECTIONS

from conftest import assert_self_contained, check_report, report_pngs, run_bspkit
from synth import GTruth, SynthSpec, write_synthetic


@pytest.mark.slow
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
    assert len(report_pngs(html)) == 6  # no memcpy plot: the hardware references are tables
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_report_of_several_runs_in_one_file(tmp_path: Path) -> None:
    a = write_synthetic(tmp_path / "a" / "raw.jsonl", SynthSpec(seed=1))
    b = write_synthetic(tmp_path / "b" / "raw.jsonl", SynthSpec(seed=2, validation=0, as_suite=False))
    out = tmp_path / "both.html"
    r = run_bspkit("report", str(a.parent), str(b), "-o", str(out))
    assert r.returncode == 0, r.stderr
    html = out.read_text()
    assert_self_contained(html)
    assert len(report_pngs(html)) == 6 + 4  # b: no As total exchange, no validation (neither has a memcpy plot)
    assert "Run 1:" in html and "Run 2:" in html


# ---------------------------------------------------------------------- compare


@pytest.mark.slow
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
    # the ranking's scores with their units: g in ns/word, l in µs, the validation in %
    assert re.search(r"<span class='note'>[\d.]+ ns/word</span>", html)
    assert re.search(r"<span class='note'>[\d.]+ µs</span>", html)
    assert not re.findall(r"\d(?:\.\d+)?e[-+]\d+", re.sub(r'src="data:[^"]+"', "", html))
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


@pytest.mark.slow
def test_report_is_self_contained_with_png_plots(tmp_path: Path) -> None:
    raw = write_synthetic(tmp_path / "run" / "raw.jsonl", SynthSpec())
    r = run_bspkit("report", str(raw), "-o", str(tmp_path / "report.html"))
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "report.html").read_text()
    assert not re.search(r'src="(?!data:)', html), "external reference in the report"
    assert_self_contained(html)
    assert len(report_pngs(html)) >= 3  # report_pngs checks each is a PNG


@pytest.mark.slow
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


@pytest.mark.slow
def test_one_function_per_section_in_page_order(synth_run: Path) -> None:
    from bspkit.commands._inputs import load_fit
    from bspkit.pages.htmlkit import contents
    from bspkit.pages.report import run_sections

    run, params = load_fit(synth_run / "raw.jsonl")
    html, images = run_sections(run, params)
    ids = re.findall(r'<h2 id="([a-z]+)"', html)
    assert ids == [
        "summary",
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
    assert len(RUN_SECTIONS) == 9
    parts = [section(run, params, "") for section in RUN_SECTIONS]
    rest = [p for s in parts[1:] for p in s.parts]
    # the summary, then the contents, then every other section in order
    assert html == "\n".join([*parts[0].parts, contents("\n".join(rest), ""), *rest])
    assert images == sum(s.images for s in parts) == 6


# ------------------------------------------------------------ the page answers first


def _cells(row_html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", " ", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row_html)]


def _number(text: str) -> float:
    return float(text.replace(",", "").rstrip(" *"))


def _fitted_report(tmp_path: Path, spec: SynthSpec) -> tuple[dict, str]:
    d = tmp_path / "run"
    write_synthetic(d / "raw.jsonl", spec)
    assert run_bspkit("fit", str(d)).returncode == 0
    r = run_bspkit("report", str(d), "-o", str(tmp_path / "r.html"))
    assert r.returncode == 0, r.stderr
    return json.loads((d / "params.json").read_text()), (tmp_path / "r.html").read_text()


@pytest.mark.slow
def test_summary_comes_first_with_bspbench_numbers(tmp_path: Path) -> None:
    spec = SynthSpec(seed=8, extra_header={"loadavg_start": [5.0, 4.0, 3.0]})
    params, html = _fitted_report(tmp_path, spec)
    # the summary is the page's first section, the contents right after it
    assert html.index('<h2 id="summary">') < html.index('<nav class="toc"') < html.index('<h2 id="machine">')
    assert re.findall(r"<h2 id=", html[: html.index('<nav class="toc"')]) == ["<h2 id="]
    summary = html[html.index('<h2 id="summary">') : html.index('<nav class="toc"')]
    # r: bspbench's computing rate, here of the naive double dot product (2.5 Gflop/s in the spec)
    r = 1 / params["f"]["dot_double_naive"]
    assert r == pytest.approx(1 / spec.f["dot_double_naive"][2], rel=0.05)
    assert f"r = <b>{r / 1e9:.3f}".rstrip("0") in summary and "Gflop/s</b> (dot_double_naive)" in summary
    assert f"p = <b>{spec.p}</b>" in summary
    assert 'validation <span class="pass">PASS</span>' in summary
    assert "load average 5.00 &gt; 2 cores at the start: noisy run" in summary  # the warnings
    rows = {c[0]: c for c in (_cells(row) for row in re.findall(r"<tr>(.*?)</tr>", summary)) if c}
    # the first screen's table (bspkit.model.verdict): f, one g per primitive, l
    assert [k for k in rows if "/" not in k] == ["f", *(f"g {k.split('/')[0]}" for k in sorted(spec.g)), "l"]
    rows = {k: c for k, c in rows.items() if "/" in k}  # the folded table: every surface
    assert set(rows) == set(spec.g)
    for key, truth in spec.g.items():
        e = params["g"][key]
        _k, g_inf, h_half, g, l_s, g_flop, l_flop, where = rows[key]
        assert _number(g_inf) == pytest.approx(e["predict"]["g_inf"] * 1e9, rel=1e-3)
        assert _number(h_half) == pytest.approx(e["predict"]["h_half"], abs=0.5)
        # Bisseling's g and l over one-word messages: g = g_inf (1 + o), l = g_inf h_half
        ref_g, ref_l = truth.g_inf * (1 + truth.o), truth.g_inf * truth.h_half
        assert _number(g) == pytest.approx(e["linreg"]["g"][0] * 1e9, rel=1e-3)
        assert _number(g) == pytest.approx(ref_g * 1e9, rel=0.05)
        assert _number(l_s) == pytest.approx(e["linreg"]["l"][0] * 1e6, rel=1e-3)
        assert _number(l_s) == pytest.approx(ref_l * 1e6, rel=0.15)
        # in flops of r, as bspbench prints them
        assert _number(g_flop) == pytest.approx(e["linreg"]["g"][0] * r, rel=2e-3)
        assert _number(l_flop) == pytest.approx(e["linreg"]["l"][0] * r, rel=2e-3)
        assert where == f"h* = 1, h = 2–{e['linreg']['h_max']}"


@pytest.mark.slow
def test_contents_link_every_section(synth_run: Path) -> None:
    r = run_bspkit("report", str(synth_run))
    assert r.returncode == 0, r.stderr
    html = (synth_run / "report.html").read_text()
    nav = html[html.index('<nav class="toc"') : html.index("</nav>")]
    links = re.findall(r'href="#([^"]+)"', nav)
    ids = set(re.findall(r'id="([^"]+)"', html))
    assert links and set(links) <= ids
    sections = re.findall(r'<h2 id="([^"]+)"', html)
    assert set(links) == set(sections) - {"summary"}


@pytest.mark.slow
def test_numbers_carry_units_not_e_notation(tmp_path: Path) -> None:
    params, html = _fitted_report(tmp_path, SynthSpec(seed=9))
    text = re.sub(r'src="data:[^"]+"', "", html)
    assert not re.findall(r"\d(?:\.\d+)?e[-+]\d+", text)
    # f in ns per operation (0.4 ns, not 0.0004 µs); ε in ns²/word²; times scaled to ns or µs
    f_row = _cells(re.search(r"<tr><td class=\"l\">dot_double_naive</td>(.*?)</tr>", html).group(0))
    value, unit = f_row[1].split()
    assert unit == "ns" and float(value) == pytest.approx(params["f"]["dot_double_naive"] * 1e9, rel=1e-3)
    assert "ε_BSP* [ns²/word²]" in html
    empty = params["l"]["empty"]  # about 1 µs: shown in ns below 1 µs, in µs above
    value, unit = re.search(r"l \(empty sync\) = <b>([\d.,]+) (ns|µs)</b>", html).groups()
    assert float(value) * (1e-9 if unit == "ns" else 1e-6) == pytest.approx(empty, rel=1e-3)
    assert unit == ("ns" if empty < 1e-6 else "µs")


@pytest.mark.slow
def test_per_h_tables_fit_and_validation_is_sorted(tmp_path: Path) -> None:
    from bspkit.pages.report import PER_H_COLUMNS, sorted_keys

    spec = SynthSpec(seed=10, msg_words=tuple(4**k for k in range(9)), validation=30)
    params, html = _fitted_report(tmp_path, spec)
    part = html[html.index("The per-h model") :]
    first = part[part.index("<table>") : part.index("</table>")]
    heads = re.findall(r"<th[^>]*>(.*?)</th>", first)
    # one row per primitive/pattern, at most PER_H_COLUMNS values of h as columns
    assert heads[0] == "primitive/pattern" and 2 <= len(heads) - 1 <= PER_H_COLUMNS
    assert len(re.findall(r"<tr>", first)) == 1 + len(spec.g)
    val = html[html.index('<h2 id="validation">') :]
    # the points' table (the error split's comes before it since issue 39): the one headed h*, c, h
    tables = re.findall(r"<table>(.*?)</table>", val, re.S)
    vtab = next(t for t in tables if re.findall(r"<th[^>]*>(.*?)</th>", t)[:4] == ["primitive/pattern", "h*", "c", "h"])
    keys_h = [(c[0], int(c[3])) for c in (_cells(row) for row in re.findall(r"<tr>(.*?)</tr>", vtab)) if c]
    assert len(keys_h) == spec.validation
    order = {k: i for i, k in enumerate(sorted_keys(list(params["g"])))}
    assert keys_h == sorted(keys_h, key=lambda kh: (order[kh[0]], kh[1]))


def test_g_surface_z_label_reads_upright(monkeypatch: pytest.MonkeyPatch) -> None:
    from bspkit.model.fit import fit_surface
    from bspkit.pages import plots

    from synth import points_from

    figs = []
    monkeypatch.setattr(plots, "png_bytes", lambda fig: figs.append(fig) or b"")
    pts = points_from(lambda h, c: 1e-9 * (h + 500 + 4 * c), [1, 16, 256], [1, 4, 16])
    plots.g_surface(pts, fit_surface(pts), "t")
    zaxis = figs[0].axes[0].zaxis
    label = zaxis.label
    # the label keeps its fixed rotation instead of turning with the view (upside down at this azimuth)
    assert label.get_text() == "g~ [ns/word]" and label.get_rotation() == 90
    assert zaxis.get_rotate_label(label.get_text()) is False
    legend = [t.get_text() for t in figs[0].axes[1].get_legend().get_texts()]
    assert any(t.startswith("g_inf = ") and t.endswith(" ns/word") for t in legend)


# ---------------------------------------------------------------- the validate page


def validate_result(**over: object) -> dict:
    """A validate.json object of two swept values and three sizes, rows in run order."""
    from bspkit.model.comm_models import NAMES as MODELS

    def row(n: int, q: str, t: float) -> dict:
        pred = dict.fromkeys(MODELS, t * 1.05)
        return {
            "params": {"n": n, "q": int(q)},
            "sweep_value": q,
            "measured_s": t,
            "W": 2.0 * n**3,
            "H": 4096.0,
            "S": 3,
            "f_s_per_unit": 4.2e-10,
            "efficiency": 0.8,
            "predicted_s": pred,
            "rel_error": dict.fromkeys(MODELS, 0.05),
        }

    summary = dict.fromkeys(MODELS, 0.05) | {"runs": 6, "runs_used": 6, "min_time_s": 0.1, "efficiency": 0.8}
    summary |= {"best_model": "g(h)", "best_error": 0.05}
    result = {
        "algorithm": "matmul-static2d",
        "description": "d",
        "backend": "threads",
        "p": 2,
        "sweep": "q",
        "params_file": "params.json",
        "params_p": 2,
        "machine": {"host": "h", "cpu": "c", "date": "d", "backend": "threads", "blas_corename": "Haswell"},
        "rows": [row(n, q, n / 1000) for q in ("8", "2", "16") for n in (512, 128)],
        "summary": {"all": summary, "by_sweep": [("8", summary), ("2", summary), ("16", summary)]},
    }
    result.update(over)
    return result


@pytest.mark.slow
def test_validate_page_shows_core_types_and_sorted_runs() -> None:
    from bspkit.pages.validate_report import html_report

    html, _n = html_report(validate_result(blas_coretype="SkylakeX"))
    assert "BLAS core type (OPENBLAS_CORETYPE) SkylakeX, core in use at the probe Haswell" in html
    assert "None" not in html
    every = html[html.index("<h2>Every run</h2>") :]
    every = every[: every.index("</table>")]
    n_q = [(int(c[0]), int(c[1])) for c in (_cells(r) for r in re.findall(r"<tr>(.*?)</tr>", every)) if c]
    assert n_q == [(128, 2), (512, 2), (128, 8), (512, 8), (128, 16), (512, 16)]  # by q (as numbers), then n
    unset, _n = html_report(validate_result(blas_coretype=None))
    assert "(OPENBLAS_CORETYPE) not set," in unset
    older = validate_result(machine={"host": "h", "cpu": "c"})
    assert "blas_coretype" not in older
    html, _n = html_report(older)
    assert "(OPENBLAS_CORETYPE) not recorded, core in use at the probe not recorded" in html
    assert not re.findall(r"\d(?:\.\d+)?e[-+]\d+", re.sub(r'src="data:[^"]+"', "", html))


def test_validate_time_plot_legend_without_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    from bspkit.pages import validate_report

    figs = []
    monkeypatch.setattr(validate_report, "png_bytes", lambda fig: figs.append(fig) or b"")
    rows = validate_result()["rows"]
    for r in rows:
        r["best_model"] = "g(h)"
    validate_report.plot_time_vs_size(rows, None, "t")
    assert [t.get_text() for t in figs[0].axes[0].get_legend().get_texts()] == ["measured", "predicted, g(h)"]
    validate_report.plot_time_vs_size(rows, "q", "t")
    labels = [t.get_text() for t in figs[1].axes[0].get_legend().get_texts()]
    assert labels[:2] == ["q = 2 measured", "q = 2 predicted, g(h)"]


def test_quantity_scales_units_and_never_writes_e_notation() -> None:
    from bspkit.units import quantity

    assert quantity(8.56e-17, "s²/word²") == "85.6 ns²/word²"
    assert quantity(5.108e-10, "s/op") == "0.5108 ns"
    assert [quantity(v, "s") for v in (3.5e-7, 1.2e-3, 100.4, 2.5e-5)] == ["350 ns", "1.2 ms", "100.4 s", "25 µs"]
    assert quantity(4.3e-10, "s/word", 3) == "0.43 ns/word"
    assert quantity(12345.6, "words") == "12,346 words" and quantity(611.1, "words", 3, show_unit=False) == "611"
    assert quantity(1.958e9, "flop/s") == "1.958 Gflop/s" and quantity(4.5e8, "flop/s") == "450 Mflop/s"
    assert quantity(0.1234, "%", 3) == "12.3 %" and quantity(2.0, "x", 3) == "2x"
    assert quantity(1.5e-27, "ns", show_unit=False) == "< 0.001"
    assert quantity(None, "s") == quantity(float("nan"), "s") == "–"
    with pytest.raises(ValueError, match="no scale for unit 'furlong'"):
        quantity(1.0, "furlong")
