"""bspalg-lu: the BSP cost the driver counts against the closed form of bspkit.model.costs.lu_reference, on the
grids 1 x 1 .. 4 x 1 (threads back end, small n, --json), sizes divisible by nb and the grid
and not, and nb > n:

  * S, and every superstep's w, exactly (the JSON prints 10 digits);
  * every superstep's h exactly, except the swap supersteps (where the pivots are decides
    their h), which lie within the model's bounds;
  * W at p = 1 is the flops of LU, 2/3 n^3 - n^2/2 - n/6 (also the registry's work model);
  * the compact totals of the module docstring against the superstep sums, and the counted
    ones where n divides;
  * stage_table prints every stage's counted and model W, H, S, and `bspkit run lu` prints it.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from bspkit.algorithms import ALGORITHMS
from bspkit.model.costs import lu_reference as lu_cost

from conftest import BUILD, built_program, needs_programs, run_bspkit

BSPRUN, LU = built_program("bsprun"), built_program("bspalg-lu")
pytestmark = needs_programs("bsprun", "bspalg-lu", hint=" (no CBLAS?)")

GRIDS = ((1, 1), (1, 2), (2, 1), (1, 3), (3, 1), (2, 2), (1, 4), (4, 1))
# (n, nb): n = 48 divides by nb M and nb N for every grid here (nb 4); the others divide by nothing
SIZES = ((48, 4), (37, 4), (53, 5), (101, 7), (130, 16), (10, 16))


def run_lu(n: int, nb: int, rows: int, cols: int) -> dict[str, Any]:
    out = subprocess.run(
        [
            str(BSPRUN), "-b", "threads", "-n", str(rows * cols), str(LU),
            "--size", str(n), "--nb", str(nb), "--grid", f"{rows}x{cols}", "-r", "1", "--json", "-",
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, f"bspalg-lu n {n} nb {nb} grid {rows}x{cols}: status {out.returncode}\n{out.stderr}"
    run = json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])
    assert run["verified"] is True, run["check_note"]
    assert run["params"]["grid_rows"] == rows and run["params"]["grid_cols"] == cols
    return run


def stages_of(n: int, nb: int) -> int:
    return -(-n // nb)


def cases() -> list[Any]:
    out = []
    for rows, cols in GRIDS:
        for n, nb in SIZES:
            out.append(pytest.param(n, nb, rows, cols, id=f"{rows}x{cols}-n{n}-nb{nb}"))
    return out


# ------------------------------------------------------------------ every superstep


@pytest.mark.parametrize(("n", "nb", "rows", "cols"), cases())
def test_every_superstep_as_the_model(n: int, nb: int, rows: int, cols: int) -> None:
    run = run_lu(n, nb, rows, cols)
    model = lu_cost.superstep_model(n, nb, rows, cols)
    counted = run["supersteps"]
    assert run["S"] == sum(x.sync for x in model)
    assert [c["sync"] for c in counted] == [x.sync for x in model]
    # S_k: C(N) with one process row, else w pivot supersteps + the swaps + [N > 2] + C(M)
    collective = {1: 0, 2: 1}.get
    per_stage = [
        collective(cols, 2) if rows == 1 else min(nb, n - j0) + 1 + (cols > 2) + collective(rows, 2)
        for j0 in range(0, n, nb)
    ]
    assert lu_cost.stage_supersteps(n, nb, rows, cols) == per_stage
    assert [sum(x.sync for x in model if x.stage == k) for k in range(len(per_stage))] == per_stage
    swaps = 0
    for i, (c, x) in enumerate(zip(counted, model, strict=True)):
        where = f"superstep {i} ({x.kind}, stage {x.stage})"
        assert c["w"] == pytest.approx(x.w, rel=1e-9, abs=1e-9), where
        if x.kind == "swap":
            swaps += 1
            assert x.h_min <= c["h"] <= x.h_max, where
            assert x.h_min <= x.h <= x.h_max, where
        else:
            assert c["h"] == x.h == x.h_min == x.h_max, where
    assert swaps == (stages_of(n, nb) if rows > 1 else 0)
    assert run["W"] == pytest.approx(sum(x.w for x in model), rel=1e-9)
    if rows * cols == 1:
        assert run["W"] == pytest.approx(lu_cost.lu_flops(n), rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 10, 37, 100, 200, 333])
@pytest.mark.parametrize("nb", [1, 8, 64])
def test_one_process_counts_the_flops_of_lu(n: int, nb: int) -> None:
    run = run_lu(n, nb, 1, 1)
    flops = 2 / 3 * n**3 - n**2 / 2 - n / 6
    assert run["W"] == pytest.approx(flops, rel=1e-9, abs=1e-9)
    assert ALGORITHMS["lu"].total_work(run["params"]) == pytest.approx(run["W"], rel=1e-9, abs=1e-9)
    assert run["H"] == 0


def test_the_swap_superstep_near_its_expected_h() -> None:
    """With a random matrix the pivots are spread over the rows: the counted H is near the
    model's expectation, well inside the bounds."""
    for rows, cols in ((2, 1), (2, 2), (3, 1)):
        run = run_lu(600, 16, rows, cols)
        t = lu_cost.totals(600, 16, rows, cols)
        assert t["H_min"] < run["H"] < t["H_max"]
        assert run["H"] == pytest.approx(t["H"], rel=0.05), (rows, cols)


# ------------------------------------------------------------------ the compact totals


@pytest.mark.parametrize(
    ("n", "nb", "rows", "cols"),
    [(64, 8, 1, 1), (256, 16, 1, 2), (256, 16, 2, 1), (256, 16, 2, 2), (240, 8, 1, 3), (240, 8, 3, 1),
     (240, 8, 3, 2), (256, 8, 4, 1), (256, 8, 1, 4), (2048, 64, 2, 2), (3840, 64, 3, 2)],
)  # fmt: skip
def test_the_compact_totals(n: int, nb: int, rows: int, cols: int) -> None:
    exact = lu_cost.totals(n, nb, rows, cols)
    compact = lu_cost.closed_form_totals(n, nb, rows, cols)
    assert compact["S"] == exact["S"]
    assert compact["W"] == pytest.approx(exact["W"], rel=1e-12)
    # the leading terms: 2 n^3 / (3p) + n^2 nb (M + N - 2) / p - n^2 / (2N), then O(n nb^2)
    assert abs(compact["W_leading"] - exact["W"]) < n * nb * nb
    non_swap = compact["H"] - compact["H_swaps"]
    if rows == 1 and cols <= 2:
        assert compact["H"] == exact["H"] == exact["H_min"] == exact["H_max"]
    elif rows == 1:  # the broadcasts' pieces rounded to words: < q words a superstep
        assert abs(compact["H"] - exact["H"]) < cols * exact["S"]
    else:
        assert abs(non_swap - exact["H_min"]) < max(rows, cols) * exact["S"]
        assert exact["H_min"] < compact["H"] < exact["H_max"]
        assert compact["H"] == pytest.approx(exact["H"], rel=0.03)
        assert exact["H_max"] - exact["H_min"] <= compact["H_swaps_max"] + max(rows, cols) * exact["S"]


def test_the_compact_totals_need_divisible_sizes() -> None:
    with pytest.raises(ValueError, match="divisible"):
        lu_cost.closed_form_totals(100, 16, 1, 2)
    with pytest.raises(ValueError, match="divisible"):
        lu_cost.closed_form_totals(96, 16, 4, 1)


@pytest.mark.parametrize(("rows", "cols"), [(1, 2), (2, 1), (2, 2), (1, 3), (3, 1)])
def test_the_counted_totals_equal_the_compact_ones(rows: int, cols: int) -> None:
    n, nb = 96, 8  # 12 blocks
    run = run_lu(n, nb, rows, cols)
    compact = lu_cost.closed_form_totals(n, nb, rows, cols)
    assert run["S"] == compact["S"]
    assert run["W"] == pytest.approx(compact["W"], rel=1e-9)


def test_the_broadcasts_as_bsp2d_cuts_them() -> None:
    # 5 words = 40 bytes over 3: pieces of 14, 13, 13 bytes, 2 words each
    assert lu_cost.broadcast_pieces(5, 3) == [2, 2, 2]
    first, second = lu_cost.broadcast_phases(5, 3, root=1)
    assert first == ([0, 4, 0], [2, 0, 2])
    # phase 2: the root sends its own piece to both others, each other member to the third
    assert second == ([2, 4, 2], [4, 0, 4])
    assert lu_cost.broadcast_phases(7, 2, root=1) == [([0, 7], [7, 0])]
    assert lu_cost.broadcast_phases(7, 1, root=0) == []


# ------------------------------------------------------------------ the stage table


def counted_per_stage(run: Mapping[str, Any], per_stage: Sequence[int]) -> list[tuple[int, float, float]]:
    """(S_k, W_k, H_k) of the driver's supersteps cut by S_k; the open record to the last."""
    steps, out, at = run["supersteps"], [], 0
    for k, count in enumerate(per_stage):
        mine = steps[at : at + count] + (steps[at + count :] if k == len(per_stage) - 1 else [])
        at += count
        out.append((sum(x["sync"] for x in mine), sum(x["w"] for x in mine), sum(x["h"] for x in mine)))
    return out


def numbers(line: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"-?\d[\d,]*(?:\.\d+)?", line)]


def mentions(values: Sequence[float], value: float) -> bool:
    return any(v == pytest.approx(value, rel=1e-6, abs=0.5) for v in values)


@pytest.mark.parametrize(("n", "nb", "rows", "cols"), [(101, 7, 2, 2), (130, 16, 1, 3), (53, 5, 3, 1)])
def test_stage_table_has_every_stage_counted_and_modelled(n: int, nb: int, rows: int, cols: int) -> None:
    run = run_lu(n, nb, rows, cols)
    lines = lu_cost.stage_table(run)
    model = lu_cost.stage_costs(n, nb, rows, cols)
    counted = counted_per_stage(run, lu_cost.stage_supersteps(n, nb, rows, cols))
    assert len(model) <= lu_cost.TABLE_ALL_STAGES
    for k, (m, (s_k, w_k, h_k)) in enumerate(zip(model, counted, strict=True)):
        row = [line for line in lines if line.split()[:2] == [str(k), f"{m.j0}-{m.j1 - 1}"]]
        assert len(row) == 1, f"stage {k}: {lines}"
        values = numbers(row[0])
        for v in (s_k, w_k, h_k, m.S, m.W, m.H):
            assert mentions(values, v), f"stage {k}: {v} not in {row[0]}"
        if m.H_min != m.H_max:
            assert mentions(values, m.H_min) and mentions(values, m.H_max)
        assert s_k == m.S
        assert w_k == pytest.approx(m.W, rel=1e-9)
    total = [line for line in lines if line.split()[:1] == ["all"]]
    assert len(total) == 1
    for v in (run["S"], run["W"], run["H"], sum(m.W for m in model), sum(m.H for m in model)):
        assert mentions(numbers(total[0]), v)


def test_stage_table_of_a_long_run_shows_some_stages_and_the_totals() -> None:
    run = run_lu(400, 4, 1, 2)  # 100 stages
    lines = lu_cost.stage_table(run)
    shown = [int(line.split()[0]) for line in lines[3:] if line.split()[0].isdigit()]
    assert shown[: lu_cost.TABLE_FIRST_STAGES] == list(range(lu_cost.TABLE_FIRST_STAGES))
    assert shown[-1] == 99 and len(shown) <= lu_cost.TABLE_ROWS + lu_cost.TABLE_FIRST_STAGES + 1
    assert f"{len(shown)} of 100 stages shown" in lines[0]
    assert any(line.split()[:1] == ["all"] for line in lines)


def test_stage_table_of_one_process_and_of_other_runs() -> None:
    run = run_lu(40, 16, 1, 1)
    (line,) = lu_cost.stage_table(run)
    assert "one process" in line and mentions(numbers(line), lu_cost.lu_flops(40))
    assert lu_cost.stage_table({"params": {"n": 100}, "supersteps": []}) == []
    assert lu_cost.stage_table({"params": {}}) == []
    # a run whose syncs differ from the model's says so
    other = dict(run_lu(37, 4, 2, 1))
    other["supersteps"] = other["supersteps"][:-3]
    other["S"] -= 3
    assert "the driver synchronised" in lu_cost.stage_table(other)[-1]


@pytest.mark.slow
def test_bspkit_run_lu_prints_the_stage_table() -> None:
    r = run_bspkit(
        "run", "lu", "-n", "2", "--size", "120", "--", "--nb", "16", "--grid", "2x1", "-r", "1",
        env={"BSPKIT_BUILD_DIR": str(BUILD)}, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "lu on 2 processes" in r.stdout and "check: passed" in r.stdout
    assert "cost per stage (nb = 16 columns, grid 2x1)" in r.stdout
    assert re.search(r"^\s+all\s+0-119\s", r.stdout, re.MULTILINE)


# ------------------------------------------------------------------ nb' > nb


@pytest.mark.parametrize(
    ("n", "nb", "nb_alg", "rows", "cols"),
    [(37, 4, 8, 1, 1), (37, 4, 8, 1, 3), (53, 5, 10, 2, 2), (53, 5, 20, 3, 1), (41, 3, 12, 2, 3)],
)
def test_algorithmic_block_supersteps(n: int, nb: int, nb_alg: int, rows: int, cols: int) -> None:
    """--nb-alg: S as bspkit.model.costs.lu.algorithmic_supersteps counts it, and the panel's
    pivot supersteps' h exactly; cost() says that it models nb_alg = nb only."""
    from bspkit.model.costs import CostError
    from bspkit.model.costs import lu as lu_closed

    out = subprocess.run(
        [
            str(BSPRUN), "-b", "threads", "-n", str(rows * cols), str(LU), "--size", str(n), "--nb", str(nb),
            "--nb-alg", str(nb_alg), "--grid", f"{rows}x{cols}", "-r", "1", "--json", "-",
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    run = json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])
    assert run["verified"] is True and run["params"]["nb_alg"] == nb_alg
    model = lu_closed.algorithmic_supersteps(n, nb, nb_alg, rows, cols)
    counted = [step for step in run["supersteps"] if step["sync"]]
    assert run["S"] == len(model) == len(counted)
    pivots = [(c["h"], h) for c, (kind, h) in zip(counted, model, strict=True) if kind == "pivot"]
    assert pivots == [(h, h) for _, h in pivots] and (rows == 1 or pivots)
    with pytest.raises(CostError, match="covers nb_alg = nb only"):
        lu_closed.cost("lu", run["params"], rows * cols)
