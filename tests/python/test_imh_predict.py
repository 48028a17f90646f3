"""`bspkit imh` (bspkit.model.imh_predict): the IMH terms of a Cannon run and of an out-of-core run
against hand computations, and the command end to end on synthetic parameters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bspkit.measure.rawdata import load_raw
from bspkit.model import imh
from bspkit.model import imh_predict as ip
from bspkit.model.fit import fit_run
from bspkit.model.params import Params

from conftest import needs_programs, run_bspkit
from synth import ImhTruth, SynthSpec, write_synthetic


@pytest.fixture(scope="module")
def params(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Params]:
    d = tmp_path_factory.mktemp("imh-params")
    f = {"matmul_double_ijk": (200, 2.0 * 200**3, 1.0e-9), "dot_double_naive": (10**6, 2.0e6, 4.0e-10)}
    raw = write_synthetic(d / "raw.jsonl", SynthSpec(p=2, imh=ImhTruth(), noise=0.0, f=f))
    prm = fit_run(load_raw(raw))
    (d / "params.json").write_text(prm.dumps())
    return d / "params.json", prm


def test_a_pass_takes_the_fit_of_the_level_that_holds_its_data(params: tuple[Path, Params]) -> None:
    mem = params[1].imh["mem"]
    t = ip.pass_s(mem, "read", 1000, 1, 8000, 2)  # 8 KB walked: L1
    f = mem["fits"]["read/double/warm/p2"]["L1"]
    assert t == pytest.approx(imh.predict_pass(f, 1000, 1, 8, 64, 4096))
    far = ip.pass_s(mem, "read", 1000, 1, 64 << 20, 2)  # 64 MiB: memory
    assert far > t


def test_the_naive_kernel_counts_rows_of_a_and_columns_of_b(params: tuple[Path, Params]) -> None:
    mem = params[1].imh["mem"]
    m, w, c = 40, 50, 60
    want = (
        m
        * c
        * (
            ip.pass_s(mem, "read", w, 1, 8 * w, 2)
            + (1 / 8) * ip.pass_s(mem, "read", w, c, 8.0 * w * c, 2)
            + (7 / 8) * ip.pass_s(mem, "read", w, c, 64.0 * w, 2)
        )
    )
    assert ip.cannon_kernel_s(mem, "naive", m, w, c, 2) == pytest.approx(want)
    assert ip.cannon_kernel_s(mem, "transposed", m, w, c, 2) > 0
    with pytest.raises(ip.ImhError, match="not dgemm's blocking"):
        ip.cannon_kernel_s(mem, "blas", m, w, c, 2)


def test_cannon_rounds_of_the_busiest_process(params: tuple[Path, Params]) -> None:
    run = {"params": {"n": 101, "grid_rows": 1, "grid_cols": 2, "rounds": 2, "kernel": "naive"}}
    t, detail = ip.cannon_memory_s(params[1], run, 2)
    assert detail["block"] == [101, 51, 51] and detail["rounds"] == 2
    assert t == pytest.approx(2 * ip.cannon_kernel_s(params[1].imh["mem"], "naive", 101, 51, 51, 2))


def test_the_disk_terms_sum_every_call_class(params: tuple[Path, Params]) -> None:
    truth = ImhTruth().disk
    run = {"params": {"io": "direct", "io_max": {"reads": [[1 << 20, 3], [4096, 2]], "writes": [[8192, 5]]}}}
    t, detail = ip.oocmm_disk_s(params[1], run)
    t0r, bwr = truth["read/direct"]
    t0w, bww = truth["write/direct"]
    want = 3 * (t0r + (1 << 20) / bwr) + 2 * (t0r + 4096 / bwr) + 5 * (t0w + 8192 / bww)
    assert t == pytest.approx(want, rel=0.05)
    assert detail["cache"] == "direct"
    # two processes on one disk: each gets half its bandwidth, the start-ups overlap
    t2, _ = ip.oocmm_disk_s(params[1], run, sharers=2)
    want2 = 3 * (t0r + 2 * (1 << 20) / bwr) + 2 * (t0r + 2 * 4096 / bwr) + 5 * (t0w + 2 * 8192 / bww)
    assert t2 == pytest.approx(want2, rel=0.05)
    # without the call sizes: one class of the mean size
    run = {"params": {"io": "page", "io_max": {"read_calls": 4, "read_bytes": 4 << 20, "write_calls": 0}}}
    assert ip.io_calls(run["params"]["io_max"], "reads") == [(float(1 << 20), 4)]
    assert ip.oocmm_disk_s(params[1], run)[1]["cache"] == "page"


@pytest.mark.slow
def test_parameters_without_the_suites_are_refused(tmp_path: Path) -> None:
    raw = write_synthetic(tmp_path / "raw.jsonl", SynthSpec())
    (tmp_path / "params.json").write_text(fit_run(load_raw(raw)).dumps())
    r = run_bspkit("imh", "cannon", "--params", str(tmp_path / "params.json"), "--sizes", "16")
    assert r.returncode == 1, r.stderr
    assert "has no IMH fits" in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["imh", "lu"], "bspkit imh predicts cannon and oocmm (or shows the fits: mem), not 'lu'"),
        (["imh", "cannon", "--sizes", "10,x"], "--sizes '10,x': a comma-separated list of integers"),
        (["imh", "cannon", "--sizes", "0"], "--sizes: every size must be positive"),
    ],
)
@pytest.mark.slow
def test_usage_errors(args: list[str], message: str) -> None:
    r = run_bspkit(*args)
    assert r.returncode == 2 and message in r.stderr, r.stderr


@needs_programs("bsprun", "bspalg-cannon", hint=" (no CBLAS?)")
@pytest.mark.slow
def test_imh_cannon_end_to_end(params: tuple[Path, Params], tmp_path: Path) -> None:
    out = tmp_path / "imh"
    r = run_bspkit(
        "imh", "cannon", "-n", "2", "--params", str(params[0]), "--sizes", "48,64", "-r", "1",
        "--output-dir", str(out), "--", "--kernel", "naive", timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "imh.json").read_text())
    assert [row["size"] for row in res["rows"]] == [48, 64]
    for row in res["rows"]:
        assert row["params"]["kernel"] == "naive"
        assert row["memory_s"] > 0 and row["imh_s"] == pytest.approx(row["comm_s"] + row["memory_s"])
        assert row["bsp_error"] == pytest.approx((row["bsp_s"] - row["measured_s"]) / row["measured_s"])
    assert "mean |error|: BSP" in r.stdout
    r = run_bspkit("imh", "cannon", "-n", "2", "--params", str(params[0]), "--sizes", "32", "--output-dir",
                   str(tmp_path / "blas"))  # fmt: skip
    assert r.returncode == 1 and "not dgemm's blocking" in r.stderr
