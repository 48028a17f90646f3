"""No line bspkit prints for a reader holds a number in e-notation (issue 38, item 6): counts
and times are written in the unit people read (bspkit/units.py: 3.708 ns, 1.024 T, 12,345),
never as 3.708e-09 or 1.024e+12. Representative commands on synthetic data whose numbers
are those that %g writes in e-notation: `bspkit profile --scale` (the fitted laws'
coefficients, W in seconds, h in millions of words), `bspkit predict` on a hand-written
parameter file (tera-flops of LU), LU's stage table (`bspkit run lu`: billions of flops) and
`bspkit imh`'s table (microseconds). The JSON they write may hold e-notation (JSON numbers);
the C drivers' human line: tests/algorithms (alg.common.count, alg.toy.human-line)."""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

import pytest
from synth_profile import SiteLaw, law_steps, log2p, records, write_profile

from bspkit.model import imh_predict
from bspkit.model.costs import lu_reference
from bspkit.model.params import Params

from conftest import bspkit_in_process
from synth import PARAMS_JSON

# 1.024e+12, 3E-05, 2e9 (not inside a word or a hex address: 0x1e00, p1e)
E_NOTATION = re.compile(r"(?<![\w.])\d+(?:\.\d*)?[eE][+-]?\d+(?![\w.])")


def assert_plain(text: str) -> None:
    bad = [line for line in text.splitlines() if E_NOTATION.search(line)]
    assert not bad, "e-notation in:\n" + "\n".join(bad)


def test_the_pattern_finds_e_notation() -> None:
    for text in ("W = 1e+06 flop", "3.708e-09*n*p^-1", "x 2E5", "T = 1.024e+12"):
        assert E_NOTATION.search(text), text
    for text in ("W = 1 M flop", "3.708 ns*n*p^-1", "site 0x1e00", "12,345 words", "p1e"):
        assert not E_NOTATION.search(text), text


# tiny work per element (ns) and millions of words: what %g writes as 3e-09 and 2e+06
SITES = [
    SiteLaw(0x1000, lambda p, n: 1, lambda p, n: 3e-9 * n**2 / p),
    SiteLaw(0x2000, log2p, lambda p, n: 2e-8 * n / p + 1e-6, lambda p, n: round(n / math.sqrt(p))),
    SiteLaw(0x3000, lambda p, n: 1, lambda p, n: 1e-4, end="bsp_end"),
]


def test_profile_scale_prints_laws_and_totals_without_e_notation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(3)
    runs = []
    for p in (1, 2, 4, 8):
        for n in (100_000, 400_000):
            steps = law_steps(p, n, SITES, 0.02, rng)
            runs.append(f"{write_profile(tmp_path / f'p{p}_n{n}.jsonl', records(p, steps))}@n={n}")
    params = tmp_path / "P.json"
    params.write_text(Params.from_json(PARAMS_JSON).dumps())
    rc, out, err = bspkit_in_process(
        capsys, "profile", "--scale", *runs, "--to-p", "64", "--to-size", "4000000",
        "--params", str(params), "--compute-scale", "0.0004",
    )  # fmt: skip
    assert rc == 0, err
    assert " ns*n" in out, out  # a law of W with its coefficient in ns, as 3e-9 n^2/p is
    assert_plain(out)
    assert_plain(err)


HAND = {
    "format": 1,
    "p": 4,
    "source": "hand-written: test_no_e_notation.py",
    "machine": {"host": "testbox", "backend": "mpi", "cores": 4},
    "f": {"dot_double_naive": 1.0e-9, "matmul_double_blas": 1.0e-11},
    "l": {"empty": 2.0e-6},
    "g": {"put/alltoall": {"linreg": {"g": 1.0e-9, "l": 5.0e-6}}},
}


@pytest.mark.parametrize(
    "args",
    [
        ["lu", "--size", "20000", "-n", "1,4,16,64"],  # W = 5.3e+12 flops
        ["inprod", "--size", "1000000000", "-n", "1,4"],  # W = 2e+09 flops, ms
        ["inprod", "--size", "10", "-n", "1,4"],  # nanoseconds of work
    ],
)
def test_predict_prints_no_e_notation(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = tmp_path / "hand.json"
    params.write_text(json.dumps(HAND))
    rc, out, err = bspkit_in_process(capsys, "predict", *args, "--params", str(params))
    assert rc == 0, err
    assert_plain(out)
    assert_plain(err)


def lu_run(n: int, nb: int, rows: int, cols: int) -> dict[str, object]:
    """The driver's JSON as the model counts it: every superstep's w and h."""
    steps = lu_reference.superstep_model(n, nb, rows, cols)
    return {
        "params": {"n": n, "nb": nb, "grid_rows": rows, "grid_cols": cols},
        "supersteps": [{"w": s.w, "h": s.h, "sync": s.sync} for s in steps],
        "W": sum(s.w for s in steps),
        "H": sum(s.h for s in steps),
        "S": sum(s.sync for s in steps),
    }


@pytest.mark.parametrize(("n", "nb", "rows", "cols"), [(2000, 250, 2, 2), (2000, 500, 1, 1)])
def test_lu_stage_table_prints_counts_in_full(n: int, nb: int, rows: int, cols: int) -> None:
    run = lu_run(n, nb, rows, cols)
    lines = lu_reference.stage_table(run)
    assert lines
    text = "\n".join(lines)
    assert_plain(text)
    assert f"{round(float(run['W'])):,}" in text  # billions of flops, every digit (1,915,541,500)


def test_imh_table_prints_times_in_their_unit() -> None:
    rows = [
        {"size": 64, "measured_s": 3.2e-5, "bsp_s": 2.9e-5, "bsp_error": -0.09, "imh_s": 3.1e-5,
         "imh_error": -0.03, "memory_s": 2.0e-6},
        {"size": 4096, "measured_s": 12.5, "bsp_s": None, "bsp_error": None, "imh_s": None,
         "imh_error": None, "memory_s": 1.5e-7},
    ]  # fmt: skip
    text = imh_predict.table_text("cannon", rows)
    assert "32 µs" in text and "12.5 s" in text
    assert_plain(text)
