"""What a new user hit (issue 29, item 5): errors that name the subcommand, a probe that
cannot write its directory or was interrupted, a cut raw file, numbers without e-notation."""

from __future__ import annotations

import copy
import json
import os
import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from bspkit.model import comm_models

from conftest import bspkit_in_process, needs_programs, run_bspkit

# every subcommand (and cluster action) with the arguments it needs to get past argparse
SUBCOMMANDS = [
    ("probe", []),
    ("fit", ["raw.jsonl"]),
    ("report", ["run"]),
    ("compare", ["a", "b"]),
    ("run", ["inprod"]),
    ("validate", ["inprod"]),
    ("predict", ["inprod"]),
    ("calibrate", []),
    ("imh", ["inprod"]),
    ("profile", ["prof.json"]),
    ("cluster up", ["--hosts", "2", "--rate", "100mbit"]),
    ("cluster down", []),
    ("cluster status", []),
]


@pytest.mark.parametrize("command, needed", SUBCOMMANDS, ids=[c for c, _ in SUBCOMMANDS])
def test_an_unknown_option_is_the_subcommands_usage_error(
    capsys: pytest.CaptureFixture[str], command: str, needed: list[str]
) -> None:
    rc, out, err = bspkit_in_process(capsys, *command.split(), *needed, "--nosuch")
    assert rc == 2 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith(f"usage: bspkit {command} "), err  # the subcommand's usage, not the top level's
    assert lines[-1] == f"bspkit {command}: error: unrecognized arguments: --nosuch"


def test_the_top_levels_errors_stay_bspkits(capsys: pytest.CaptureFixture[str]) -> None:
    rc, _out, err = bspkit_in_process(capsys, "--nosuch")
    assert rc == 2 and err.splitlines()[-1].startswith("bspkit: error: ")
    rc, _out, err = bspkit_in_process(capsys)
    assert rc == 2 and err.splitlines()[-1].startswith("bspkit: error: a command is needed")


@pytest.mark.parametrize(
    "args, status, message",
    [
        # argparse's usage error, bspkit's usage error (console.UsageError) and a failure: one form
        (["run", "inprod", "-n", "0"], 2, "argument -n/--nprocs: '0' is not a positive integer (at least 1)"),
        (["compare", "only-one"], 2, "compare needs at least two runs"),
        (["probe", "--suites", "nope"], 2, "--suites: unknown suite 'nope'"),
        (["fit", "/nonexistent/raw.jsonl"], 1, "/nonexistent/raw.jsonl: no such file or directory"),
        (["report", "/nonexistent-run"], 1, "/nonexistent-run: no such file or directory"),
    ],
)
def test_every_error_names_its_subcommand(
    capsys: pytest.CaptureFixture[str], args: list[str], status: int, message: str
) -> None:
    rc, _out, err = bspkit_in_process(capsys, *args)
    assert rc == status, err
    last = err.splitlines()[-1]
    assert last.startswith(f"bspkit {args[0]}: error: ") and message in last, err
    if status == 2:
        assert err.startswith(f"usage: bspkit {args[0]} "), err
    assert "bspkit: error" not in err


# ------------------------------------------------------ a probe's output directory


def test_a_probe_into_a_directory_it_cannot_write_is_one_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A path under a regular file cannot be made, root or not: one error line, exit status 1,
    nothing run (the binary given does not exist: it is never looked at)."""
    (tmp_path / "file").write_text("")
    out = tmp_path / "file" / "sub"
    rc, _out, err = bspkit_in_process(
        capsys, "probe", "-n", "2", "--probe-binary", str(tmp_path / "nope"), "--output-dir", str(out)
    )
    assert rc == 1, err
    assert err.splitlines() == [
        f"bspkit probe: error: cannot write the run in {out}: {tmp_path / 'file'} is not a directory"
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_probe_into_a_read_only_directory_is_one_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    rc, _out, err = bspkit_in_process(capsys, "probe", "-n", "2", "--output-dir", str(ro / "run"))
    assert rc == 1 and err.splitlines() == [
        f"bspkit probe: error: cannot write the run in {ro / 'run'}: {ro} is not writable"
    ]


# ----------------------------------------------------------- a raw file cut short


def cut_raw(path: Path, keep: int, half_line: bool = True) -> Path:
    """A synthetic run's raw file cut as a killed bspprobe leaves it: its first `keep` lines,
    then (half_line) half of the next one."""
    from synth import write_synthetic

    lines = write_synthetic(path).read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:keep]) + (lines[keep][: len(lines[keep]) // 2] if half_line else ""))
    return path


def test_fit_refuses_a_raw_file_cut_short(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    raw = cut_raw(tmp_path / "raw.jsonl", keep=6)  # header, 3 f, 2 memcpy, half a g record
    rc, out, err = bspkit_in_process(capsys, "fit", str(raw))
    assert rc == 1 and out == ""
    assert err.splitlines()[-1] == (
        f"bspkit fit: error: {raw}: the run did not finish: its last line is cut short (not JSON), no footer record "
        "(bspprobe writes it last), no g records; it holds 1 header, 3 f, 2 memcpy. Measure it again (bspkit "
        "probe), or give --partial to fit what was measured before it stopped"
    )
    assert "fitting" not in err and not (tmp_path / "params.json").exists()


def test_fit_refuses_a_run_stopped_between_records_and_fits_it_with_partial(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cut_raw(tmp_path / "raw.jsonl", keep=40, half_line=False)  # whole records, no footer
    rc, _out, err = bspkit_in_process(capsys, "fit", str(tmp_path))
    assert rc == 1
    assert (
        "the run did not finish: no footer record (bspprobe writes it last); it holds 1 header, 3 f, 2 memcpy, 34 g"
        in err
    )
    rc, out, err = bspkit_in_process(capsys, "fit", str(tmp_path), "--partial")
    assert rc == 0, err
    assert "no footer record: the run did not finish" in out  # the fit's own warning, in its summary
    assert json.loads((tmp_path / "params.json").read_text())["g"]


def test_fit_takes_a_finished_raw_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from synth import write_synthetic

    write_synthetic(tmp_path / "raw.jsonl")
    rc, _out, err = bspkit_in_process(capsys, "fit", str(tmp_path))
    assert rc == 0, err
    assert (tmp_path / "params.json").is_file()


def test_the_end_of_a_raw_file_is_found_past_a_long_last_line(tmp_path: Path) -> None:
    from bspkit.measure import probe as pr

    raw = tmp_path / "raw.jsonl"
    long = json.dumps({"type": "g", "samples_s": [1e-6] * 20000})  # longer than the first read of the end
    raw.write_text('{"type": "header"}\n' + long + "\n")
    assert pr.raw_end(raw) == pr.RawEnd(whole=True, footer=False)
    raw.write_text('{"type": "header"}\n' + long[:-1] + "\n\n")
    assert pr.raw_end(raw) == pr.RawEnd(whole=False, footer=False)
    raw.write_text('{"type": "header"}\n' + long + '\n{"type": "footer"}\n')
    assert pr.raw_end(raw).finished


# ------------------------------------------------ a probe stopped before its end


def fake_bspprobe(tmp_path: Path, samples: Path, status: int) -> Path:
    """A stand-in for bspprobe: copies `samples` to its --output file and exits with `status`."""
    exe = tmp_path / "fake-bspprobe"
    exe.write_text(
        "#!/bin/sh\n"
        'while [ "$#" -gt 0 ]; do [ "$1" = --output ] && out="$2"; shift; done\n'
        f'cp "{samples}" "$out"\n'
        f"exit {status}\n"
    )
    exe.chmod(0o755)
    return exe


def probe_args(exe: Path, out: Path) -> list[str]:
    return ["probe", "-n", "2", "--probe-binary", str(exe), "--launcher", "env", "--output-dir", str(out)]


def test_a_probe_stopped_midway_says_where_its_samples_are_and_how_to_go_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cut = cut_raw(tmp_path / "cut.jsonl", keep=20)
    out = tmp_path / "run"
    r = run_bspkit(*probe_args(fake_bspprobe(tmp_path, cut, 9), out))  # a process: bspprobe's output goes to stderr
    rc, err = r.returncode, r.stderr
    assert rc == 1
    raw = out / "raw.jsonl"
    assert (
        f"bspkit: the samples measured before bspprobe stopped are in {raw} (bspprobe cannot continue them): measure "
        f"again with `bspkit probe --output-dir {out} --force`, or fit them with `bspkit fit --partial {raw}`"
    ) in err.splitlines()
    assert err.splitlines()[-1] == "bspkit probe: error: bspprobe failed (exit status 9; its messages are above)"
    # the next probe into it is refused with what it holds and the way on
    rc, _out, err = bspkit_in_process(capsys, *probe_args(tmp_path / "nope", out))
    assert rc == 2
    assert err.splitlines()[-1] == (
        f"bspkit probe: error: --output-dir {out} holds an unfinished run: {raw}: the run did not finish: its last "
        "line is cut short (not JSON), no footer record (bspprobe writes it last); it holds 1 header, 3 f, 2 memcpy, "
        f"14 g. bspprobe cannot continue it: measure it again with --force (replaces it), or give another directory "
        f"(`bspkit fit --partial {raw}` fits what it measured)"
    )


def test_a_run_without_its_fit_is_refused_with_the_command_that_finishes_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from synth import write_synthetic

    out = tmp_path / "run"
    write_synthetic(out / "raw.jsonl")
    rc, _out, err = bspkit_in_process(capsys, *probe_args(tmp_path / "nope", out))
    assert rc == 2
    assert err.splitlines()[-1] == (
        f"bspkit probe: error: --output-dir {out} holds a run whose samples are whole but has no params.json and no "
        f"report.html: finish it with `bspkit report {out} --write-params`, measure it again with --force, or give "
        "another directory"
    )


@pytest.mark.slow
def test_force_measures_an_unfinished_run_again(tmp_path: Path) -> None:
    from synth import write_synthetic

    out = tmp_path / "run"
    cut_raw(out / "raw.jsonl", keep=20)
    (out / "params.json").write_text("{}")  # a stale fit of something else: replaced too
    whole = write_synthetic(tmp_path / "whole.jsonl")
    r = run_bspkit(*probe_args(fake_bspprobe(tmp_path, whole, 0), out), "--force")
    assert r.returncode == 0, r.stderr
    assert (out / "raw.jsonl").read_text() == whole.read_text()
    assert json.loads((out / "params.json").read_text())["g"] and (out / "report.html").is_file()


# ------------------------------------------------------- run's prediction


E_NOTATION = re.compile(r"(?<![0-9A-Za-z_#&.])\d+(?:\.\d+)?[eE][+-]?\d+\b")


def synthetic_params(tmp_path: Path) -> Path:
    from bspkit.commands._inputs import load_fit

    from synth import write_synthetic

    _run, params = load_fit(write_synthetic(tmp_path / "raw.jsonl"))
    out = tmp_path / "params.json"
    out.write_text(params.dumps())
    return out


@needs_programs("bsprun", "bspalg-inprod")
@pytest.mark.slow
def test_run_says_where_f_came_from_and_writes_the_prediction_to_json(tmp_path: Path) -> None:
    params = synthetic_params(tmp_path)
    r = run_bspkit("run", "inprod", "-n", "2", "--size", "100000", "--params", str(params), "--json", "-")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    pred = d["prediction"]
    assert pred["params"] == str(params) and pred["models"] == list(comm_models.NAMES)
    for model in ("g const", "g(h)", "g(h,h*)"):  # the seeds' models need what a synthetic probe lacks
        assert pred["predicted_s"][model] > 0
        assert pred["error"][model] == pytest.approx((pred["predicted_s"][model] - d["time_s"]) / d["time_s"])
    assert pred["f_s_per_unit"] == d["f_all_s_per_unit"] and "this run" in pred["f_source"]
    assert "f measured in this run: the error is g and l's only" in r.stderr
    # a line per model that predicted the run (the seeds' need what a synthetic probe may lack)
    shown = [m for ln in r.stderr.splitlines() if (m := re.match(r"^  (\S.*?)\s+[\d.]+ (?:ns|µs|ms|s) \(", ln))]
    predicted = [m for m in pred["models"] if pred["predicted_s"][m] is not None]
    assert [m.group(1) for m in shown] == predicted, r.stderr
    assert all(re.search(r" (ns|µs|ms|s) \([+-]?\d+\.\d%\)$", m.string) for m in shown), r.stderr
    assert not E_NOTATION.search(r.stderr), r.stderr
    assert "-0.0%" not in r.stderr


# ------------------------------------------------------- no e-notation anywhere


def visible_text(html: str) -> str:
    """A page's text and attributes as a reader meets them: without the embedded images and
    the style sheet (hex colours, base64)."""
    html = re.sub(r'src="data:[^"]*"', "", html)
    return re.sub(r"<style.*?</style>", "", html, flags=re.S)


def e_notation(text: str, where: str) -> list[str]:
    return [f"{where}: {text[max(0, m.start() - 80) : m.end() + 20]!r}" for m in E_NOTATION.finditer(text)]


def test_the_e_notation_check_sees_e_notation() -> None:
    for text in ("4.079e-05 s", "2.17e-09", "3.299e+04 MB/s", "1E6"):
        assert E_NOTATION.search(text), text
    for text in ("40.79 µs", "#1e3e5f", "0x1e10", "rate_1e", "v1.2e", "3,299 MB/s"):
        assert not E_NOTATION.search(text), text


@pytest.mark.slow
def test_the_report_and_the_terminal_print_no_e_notation(tmp_path: Path) -> None:
    """A synthetic run with every suite (the IMH tables too): its report, fit's summary and
    predict's table and page print every number in fixed notation with its unit."""
    from synth import ImhTruth, SynthSpec, write_synthetic

    raw = write_synthetic(tmp_path / "run" / "raw.jsonl", SynthSpec(imh=ImhTruth()))
    r = run_bspkit("fit", str(raw))
    assert r.returncode == 0, r.stderr
    found = e_notation(r.stdout, "fit's summary")
    assert re.search(r"  l: empty \d[\d.,]* (ns|µs)", r.stdout), r.stdout
    r = run_bspkit("report", str(raw.parent))
    assert r.returncode == 0, r.stderr
    report = visible_text((raw.parent / "report.html").read_text())
    assert "Table 3: eq. (4)" in report and "MB/s" in report
    found += e_notation(report, "the report")
    page = tmp_path / "predict.html"
    r = run_bspkit(
        "predict", "matmul-blockcyclic", "--params", str(raw.parent / "params.json"), "--size", "100000",
        "-n", "1,2,64", "-o", str(page),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    found += e_notation(r.stdout, "predict's table") + e_notation(visible_text(page.read_text()), "predict's page")
    assert not found, "\n".join(found[:10])


# ------------------------------------------- the memory hierarchy's tables


@pytest.fixture(scope="module")
def imh_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    """A synthetic run with the memory-hierarchy suites, fitted (module-wide: fitting takes seconds)."""
    from bspkit.commands._inputs import load_fit

    from synth import ImhTruth, SynthSpec, write_synthetic

    return load_fit(write_synthetic(tmp_path_factory.mktemp("imh") / "raw.jsonl", SynthSpec(imh=ImhTruth())))


def table_after(html: str, heading: str) -> list[list[str]]:
    """The cells (as HTML) of the first table after `heading`, one list per row (the header row first)."""
    start = html.index("<table", html.index(heading))
    body = html[start : html.index("</table>", start)]
    return [
        re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def text_of(cell: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", cell))


def drop(fit: dict[str, Any], name: str) -> None:
    """Makes coefficient `name` of an eq. (4) fit dropped, as bspkit.model.imh.nonneg_lsq leaves it."""
    fit["model"][name] = 0.0
    fit["coef"][name] = None
    fit["flags"] = [f"{name}: dropped (the fit would make it negative or zero)"] + [
        fl for fl in fit["flags"] if not fl.startswith(f"{name}: ")
    ]


def test_table_3_keeps_each_cell_to_one_short_line(imh_run: tuple[Any, Any]) -> None:
    from bspkit.pages import imh_report as report_imh

    run, params = copy.deepcopy(imh_run)
    fit = params.imh["mem"]["fits"]["read/double/cold/p1"]["memory"]
    drop(fit, "T_e")
    fit["flags"] = [fl for fl in fit["flags"] if not fl.startswith(("T_p: ", "T_c: "))] + [
        "T_p: 2.43 ns but its 95% interval reaches zero",
        "T_c: 1.26 ns but its 95% interval reaches zero",
    ]
    fit["flags"].append("a remark of the whole fit that would take a whole line of its own to say what it means")
    html = "".join(report_imh.processor_memory_section(run, params, "").parts)
    rows = table_after(html, "Table 3:")
    assert rows[0][-1] == "flags"
    for row in rows[1:]:
        for cell in row:
            assert "<br" not in cell and len(text_of(cell)) <= 40, cell
    cold = next(r for r in rows if text_of(r[0]) == "read/double/cold/p1")
    assert text_of(cold[-1]) == "dropped: T_e; n.s.: T_p, T_c; note 1"
    notes = html[html.index("Table 3:") :]
    assert "<li>a remark of the whole fit that would take a whole line of its own to say what it means</li>" in notes
    assert "<i>dropped</i> = the fit would make the coefficient negative or zero" in notes


def test_a_failed_imh_fit_is_not_shown_as_zero(imh_run: tuple[Any, Any]) -> None:
    from bspkit.pages import imh_report as report_imh

    run, params = copy.deepcopy(imh_run)
    p = params.p
    drop(params.imh["mem"]["fits"][f"read/double/cold/p{p}"]["memory"], "T_e")
    params.imh["model"]["T_e"] = 0.0  # what bspkit.model.imh.fit_imh takes from the fit above
    params.imh["model"]["tau_d"] = None  # a rate the processor-processor fit could not make
    params.imh["pp"]["fits"]["permutation"]["flags"] = ["no size above the start-up"]
    params.imh["pp"]["fits"]["permutation"]["model"]["tau"] = None
    rows = {text_of(r[0]): text_of(r[2]) for r in table_after(
        "".join(report_imh.imh_model_section(run, params, "").parts), "The IMH model")[1:]}  # fmt: skip
    assert rows["T_e"] == "dropped: the fit would make it negative or zero"
    assert rows["tau_d"] == "failed: no size above the start-up"
    assert re.fullmatch(r"\d[\d.,]* ns", rows["T_n"]), rows["T_n"]
    assert not any(re.match(r"0 (ns|µs|ms)$", v) for v in rows.values()), rows
    mem_rows = table_after("".join(report_imh.processor_memory_section(run, params, "").parts), "Table 3:")
    cold = next(r for r in mem_rows if text_of(r[0]) == f"read/double/cold/p{p}")
    assert text_of(cold[5]) == "dropped" and "T_e: dropped" in cold[5]  # the reason in its title
