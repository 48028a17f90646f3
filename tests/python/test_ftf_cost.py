"""bspalg-ftf (Kang et al.'s FT.F, sec. 7) against its closed form (bspkit.model.costs.ftf):
every superstep a run counts, W, H and S, at p from 1 to 7 with grids no p divides, both
ownerships; the eq. (7) prediction against the paper's Table 7; problems outside the model."""

from __future__ import annotations

import pytest
from test_closed_forms_dense import assert_matches_run, run_driver

from bspkit.algorithms import closed_form, find_algorithm
from bspkit.model.costs import CostError, ftf

from conftest import needs_programs

needs_driver = needs_programs("bsprun", "bspalg-ftf")
SMALL = {"width": 13, "depth": 3, "height": 5, "iters": 2}


def driver_args(problem: dict[str, int]) -> list[str]:
    return ["--size", str(problem["width"]), "--depth", str(problem["depth"]), "--height", str(problem["height"]),
            "--iters", str(problem["iters"])]  # fmt: skip


@needs_driver
@pytest.mark.parametrize("p", [1, 2, 3, 4, 7])
def test_balanced_against_driver(p: int) -> None:
    assert_matches_run(closed_form("ftf", SMALL, p), run_driver("bspalg-ftf", p, *driver_args(SMALL)))


@needs_driver
@pytest.mark.parametrize("p", [2, 6, 7])
def test_original_against_driver(p: int) -> None:
    run = run_driver("bspalg-ftf", p, "--variant", "original", *driver_args(SMALL))
    assert_matches_run(closed_form("ftf-original", SMALL, p), run)


@needs_driver
def test_the_papers_grid_at_its_defaults() -> None:
    """121 x 4 x 81 (the driver's defaults, --iters 1): at p = 6 the balanced blocks are FT.F's."""
    run = run_driver("bspalg-ftf", 6, "--iters", "1", "--no-check")
    assert_matches_run(closed_form("ftf", {"iters": 1}, 6), run)
    # up to six processes the ownerships are the same; from seven on FT.F's leaves processes idle
    for p in (2, 3, 6):
        assert closed_form("ftf", {}, p).steps == closed_form("ftf-original", {}, p).steps
    assert closed_form("ftf-original", {}, 12).W == closed_form("ftf-original", {}, 7).W > closed_form("ftf", {}, 12).W


def test_eq7_gives_table7s_t3e_estimate() -> None:
    """Table 7: Steps of 468, 456 and 6 elements x 2 of 8 bytes, T_s = 29 usec, 100 MB/s (Table 1)."""
    m = tuple(k * 2 * 8.0 for k in (468, 456, 6))
    assert ftf.eq7_exchange_s(29e-6, 1 / 100e6, m) == pytest.approx(235.80e-6)


def test_eq7_of_a_run_prices_its_largest_messages() -> None:
    """The paper's grid at p = 4 (2 x 2 blocks of 61 x 41 nodes): steps of 4 x 41, 4 x 61 and 4
    words; two exchanges per update."""
    assert ftf.exchange_bytes({}, 4) == (4 * 41 * 8.0, 4 * 61 * 8.0, 4 * 8.0)
    one = ftf.eq7_exchange_s(10e-6, 1e-9, ftf.exchange_bytes({}, 4))
    assert one == pytest.approx(3 * 10e-6 + (164 + 244 + 4) * 8 * 1e-9)
    assert ftf.eq7_run_s({"iters": 3}, 4, 10e-6, 1e-9) == pytest.approx(6 * one)
    assert ftf.exchange_bytes({}, 1) == (0.0, 0.0, 0.0)  # one block: nothing to exchange


def test_the_records_and_the_work() -> None:
    assert find_algorithm("ftf-original").fixed_args == ("--variant", "original")
    w = find_algorithm("ftf").total_work({"width": 121, "depth": 4, "height": 81, "iters": 10})
    assert w == 10 * (16 * 120 * 3 * 80 + 2 * 121 * 4 * 81)
    assert w_of(SMALL) == closed_form("ftf", SMALL, 1).W


def w_of(problem: dict[str, int]) -> float:
    """The sequential work: one process does all of it."""
    W, D, H, T = problem["width"], problem["depth"], problem["height"], problem["iters"]
    return float(T * (16 * (W - 1) * (D - 1) * (H - 1) + 2 * W * D * H))


@pytest.mark.parametrize(
    "algorithm,problem,p,message",
    [
        ("ftf", {"depth": 1}, 2, "at least 2 nodes along each axis"),
        ("ftf", {"n": 5}, 2, "no parameter n"),
        ("ftf", {"variant": "original"}, 6, "is the balanced variant"),
    ],
)
def test_problems_outside_the_model(algorithm: str, problem: dict[str, object], p: int, message: str) -> None:
    with pytest.raises(CostError, match=message):
        closed_form(algorithm, problem, p)
