"""bspalg-llcs --schedule thesis (Fig. 5.4 of the thesis, seed 000 lines 1038-1064): the cost the
driver counts equals bspkit.model.costs.llcs superstep by superstep (w, h, h_inout, count,
msg_words, primitive, pattern, sync) at p = 1..4 for uneven sizes and alpha 1..5, and where the
sizes divide it has the thesis' W (eq. 5.2) and S (eq. 5.3, 5.5) and moves a boundary for every
block off the right border and b's part for every block whose row lies on another process."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from typing import Any

import pytest

from bspkit.algorithms import closed_form
from bspkit.model.costs import Cost

from conftest import built_program, needs_programs

DRIVER, BSPRUN = built_program("bspalg-llcs"), built_program("bsprun")
FIELDS = ("w", "h", "h_inout", "count", "msg_words", "primitive", "pattern", "sync")


def run_thesis(kernel: str, p: int, m: int, n: int, alpha: int, alphabet: int = 4) -> dict[str, Any]:
    cmd = [str(BSPRUN), "-b", "threads", "-n", str(p), str(DRIVER), "--schedule", "thesis", "--kernel", kernel]
    cmd += ["--sizes", f"{m},{n}", "--alpha", str(alpha), "--alphabet", str(alphabet), "-r", "1", "--json", "-"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{cmd}: status {done.returncode}\n{done.stdout}\n{done.stderr}"
    run: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert run["verified"] is True, run["check_note"]  # the LLCS is right
    return run


def printed(x: Any) -> Any:
    """A number as the driver's JSON prints it (%.10g); other values as they are."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return x
    return float(f"{float(x):.10g}")


def assert_same(run: Mapping[str, Any], cost: Cost) -> None:
    counted = [tuple(printed(s[f]) for f in FIELDS) for s in run["supersteps"]]
    model = [tuple(printed(s[f]) for f in FIELDS) for s in cost.supersteps()]
    assert len(counted) == len(model)
    for i, (c, m) in enumerate(zip(counted, model, strict=True)):
        assert c == m, f"superstep {i}: driver {c}, model {m}"
    assert (run["S"], printed(run["W"]), printed(run["H"])) == (cost.S, printed(cost.W), printed(cost.H))
    assert dict(cost.problem) == {k: v for k, v in run["params"].items() if k != "llcs"}


@needs_programs("bsprun", "bspalg-llcs")
@pytest.mark.parametrize(
    ("kernel", "p", "m", "n", "alpha", "alphabet"),
    [
        ("dp", 1, 1200, 1200, 3, 4),
        ("dp", 2, 1000, 3001, 1, 4),
        ("dp", 3, 65, 63, 5, 256),  # blocks of 3 x 3 cells and 4 x 4
        ("dp", 4, 1200, 1200, 2, 4),
        ("bitpar", 1, 1280, 1280, 2, 4),
        ("bitpar", 2, 4097, 200, 5, 256),  # 4 words over 10 block rows: most are empty
        ("bitpar", 3, 2304, 2304, 2, 4),
        ("bitpar", 4, 3001, 1000, 1, 2),
    ],
)
def test_every_superstep_as_the_model(kernel: str, p: int, m: int, n: int, alpha: int, alphabet: int) -> None:
    run = run_thesis(kernel, p, m, n, alpha, alphabet)
    problem = {"m": m, "n": n, "alpha": alpha, "alphabet": alphabet, "schedule": "thesis"}
    cost = closed_form(f"llcs-{kernel}", problem, p)
    assert_same(run, cost)
    assert run["params"]["schedule"] == "thesis"
    # the dp LLCS stays on process p - 1 (Fig. 5.4 line 20): the check fetched it for the JSON
    assert run["params"]["llcs"] is not None


@needs_programs("bsprun", "bspalg-llcs")
@pytest.mark.parametrize(
    ("kernel", "m", "n", "p", "alpha"),
    [("dp", 1200, 1200, 2, 3), ("dp", 2400, 2400, 4, 2), ("bitpar", 2304, 2304, 3, 2), ("bitpar", 1280, 1280, 1, 4)],
)
def test_the_thesis_counts_when_the_sizes_divide(kernel: str, m: int, n: int, p: int, alpha: int) -> None:
    """b = n / G: W = b^2 (p alpha (alpha + 1) - alpha) (eq. 5.2), one b x b block in each of
    p alpha (alpha + 1) - alpha supersteps; S = alpha (2 alpha p - 1) (eq. 5.3), + 1 for bitpar
    (eq. 5.5); words moved: a boundary (dp b / 2, bitpar b / 64) for each of the G (G - 1)
    blocks off the right border and b's b characters (ceil(b / 8) words) for each of the
    alpha^2 p (p - 1) blocks whose row block lies on another process (+ 1: bitpar's LLCS)."""
    G = alpha * p
    b = n // G
    run = run_thesis(kernel, p, m, n, alpha)
    cost = closed_form(f"llcs-{kernel}", {"m": m, "n": n, "alpha": alpha, "schedule": "thesis"}, p)
    assert_same(run, cost)
    blocks = p * alpha * (alpha + 1) - alpha
    assert b * b * blocks == cost.W
    assert sum(k.repeat for k in cost.steps if k.w > 0) == blocks
    assert all(k.w in (0, b * b) for k in cost.steps)
    assert alpha * (2 * alpha * p - 1) + (kernel == "bitpar") == cost.S
    boundary = b // 2 if kernel == "dp" else b // 64
    expected = G * (G - 1) * boundary + alpha * alpha * p * (p - 1) * -(-b // 8) + (kernel == "bitpar")
    assert sum(s["words"] for s in run["supersteps"]) == (expected if p > 1 else 0)
    last = run["supersteps"][-1]
    if kernel == "dp":  # the last block after the last sync, the LLCS left on its owner
        assert (last["sync"], last["w"], last["h"]) == (False, b * b, 0)
    else:  # eq. 5.5's additional superstep
        assert (last["sync"], last["w"], last["h"]) == (True, b * b, int(p > 1))


def test_h_closed_form_when_the_sizes_divide() -> None:
    """README.md's H of the thesis' schedule, b = n / G, beta = b / 2 (dp) or b / 64 (bitpar),
    gamma = ceil(b / 8): H = beta (p alpha (alpha + 1) - alpha - 1) + gamma c + [bitpar], with
    c = alpha^2 at p = 2 (on even anti-diagonals every part of b is local) and
    alpha (p alpha + p - 3) for p >= 3; against the model's supersteps."""
    for kernel in ("dp", "bitpar"):
        for p in range(2, 10):
            for alpha in range(1, 6):
                b = 64 * 40 + (64 if kernel == "bitpar" else 4)  # b / 8 not whole for dp
                cost = closed_form(f"llcs-{kernel}", {"n": b * alpha * p, "alpha": alpha, "schedule": "thesis"}, p)
                beta, gamma = (b // 2 if kernel == "dp" else b // 64), -(-b // 8)
                c = alpha * alpha if p == 2 else alpha * (p * alpha + p - 3)
                expected = beta * (p * alpha * (alpha + 1) - alpha - 1) + gamma * c + (kernel == "bitpar")
                assert expected == cost.H, f"{kernel}, p = {p}, alpha = {alpha}"
