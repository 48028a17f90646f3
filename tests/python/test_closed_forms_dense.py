"""The closed-form costs of the dense algorithms (bspkit.model.costs: inprod, matmul, cannon) against
what the drivers count and against the independent schedule model of test_matmul_cost.py:

  * closed_form (bspkit.algorithms): an unknown algorithm or p < 1 is a CostError that says why; a Cost's
    S, W, H and supersteps() from its StepKinds; problems outside a model are refused;
  * every superstep of a driver run (threads back end, p = 1 .. 8, small n that divide nothing
    and n that do, -r 1 --json) equals the expanded closed form: w, h, count, msg_words (as the
    JSON prints it, 10 digits), primitive, pattern, sync; and W, H, S, params (the filled
    problem), work_unit;
  * the drivers' defaults (no size given) are the ones the models fill in;
  * at p the machine cannot run (9 .. 64, primes, grids whose sides do not divide), every
    superstep's w, h, count and msg_words (rel 1e-12) against test_matmul_cost's per-process
    simulation, and Cannon's closed form (L | n) against its per-process evaluation;
  * p = 1024 and 4096: the calls return (no pairwise loop over processes) and their W, H, S
    are the ones worked out by hand in the comments.
"""

from __future__ import annotations

import json
import math
import subprocess
from typing import Any

import pytest
from test_matmul_cost import Step, cannon_model, matmul_model

from bspkit.algorithms import closed_form, closed_form_names
from bspkit.model.costs import Cost, CostError, StepKind, cannon, matmul

from conftest import built_program, needs_programs

BSPRUN = built_program("bsprun")
PROGRAMS = {"inprod": "bspalg-inprod", "matmul": "bspalg-matmul", "cannon": "bspalg-cannon"}
needs_drivers = needs_programs("bsprun", *PROGRAMS.values(), hint=" (no CBLAS?)")
JSON_DIGITS = 10  # the drivers print numbers with %.10g
DISTS = ("blockcyclic", "static2d")


def run_driver(program: str, p: int, *args: str) -> dict[str, Any]:
    driver = built_program(program)
    assert BSPRUN and driver
    out = subprocess.run(
        [str(BSPRUN), "-b", "threads", "-n", str(p), str(driver), "--json", "-", "-r", "1", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, f"{program} {args} at p = {p}: status {out.returncode}\n{out.stderr}"
    run: dict[str, Any] = json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])
    assert run["verified"] is not False, run["check_note"]
    return run


def as_printed(x: float) -> float:
    return float(f"{x:.{JSON_DIGITS}g}")


def assert_matches_run(cost: Cost, run: dict[str, Any]) -> None:
    """Every superstep of the run equals the closed form's; so do the totals and params."""
    assert cost.algorithm == run["algorithm"] and cost.p == run["p"]
    assert dict(cost.problem) == run["params"]
    assert cost.work_unit == run["work_unit"]
    counted = [{k: v for k, v in step.items() if k != "words"} for step in run["supersteps"]]
    model = []
    for step in cost.supersteps():
        del step["kind"]
        step["msg_words"] = as_printed(step["msg_words"])
        model.append(step)
    assert len(model) == len(counted), f"{len(model)} supersteps in the model, {len(counted)} counted"
    for k, (m, c) in enumerate(zip(model, counted, strict=True)):
        assert m == c, f"superstep {k}: model {m}, counted {c}"
    assert run["S"] == cost.S
    assert as_printed(cost.W) == run["W"] and as_printed(cost.H) == run["H"]
    assert cost.exact


# ------------------------------------------------------------------------ bspkit.model.costs


def test_unknown_algorithm_names_the_known_ones() -> None:
    with pytest.raises(CostError) as err:
        closed_form("matmul-cyclic", {}, 4)
    assert "matmul-cyclic" in str(err.value)
    for name in closed_form_names():
        assert name in str(err.value)


@pytest.mark.parametrize(
    "algorithm", ["inprod", "matmul-blockcyclic", "matmul-static2d", "cannon-put", "cannon-get", "cannon-send"]
)
@pytest.mark.parametrize("p", [0, -3])
def test_p_below_one_is_refused(algorithm: str, p: int) -> None:
    with pytest.raises(CostError, match=f"p must be at least 1, not {p}"):
        closed_form(algorithm, {}, p)


def test_cost_totals_and_expansion() -> None:
    steps = (
        StepKind("fetch", 2, w=1.0, h=10.0, count=2.0, msg_words=5.0, primitive="hpget", pattern="alltoall"),
        StepKind("multiply", 3, w=7.0, h=0.0, count=0.0, msg_words=0.0),
        StepKind("tail", 1, w=4.0, h=0.0, count=0.0, msg_words=0.0, sync=False),
    )
    cost = Cost("x", 2, {"n": 1}, "flop", None, steps)
    assert (cost.S, cost.W, cost.H) == (5, 2 * 1.0 + 3 * 7.0 + 4.0, 20.0)
    expanded = cost.supersteps()
    assert [s["kind"] for s in expanded] == ["fetch"] * 2 + ["multiply"] * 3 + ["tail"]
    assert expanded[0] == {
        "kind": "fetch",
        "w": 1.0,
        "h": 10.0,
        "h_inout": None,  # not given: not known
        "count": 2.0,
        "msg_words": 5.0,
        "primitive": "hpget",
        "pattern": "alltoall",
        "sync": True,
    }
    assert cost.H_inout is None
    assert expanded[-1]["sync"] is False and cost.exact
    assert not Cost("x", 2, {}, "flop", None, (StepKind("swap", 1, 1.0, 2.0, 1.0, 2.0, source="expected"),)).exact


@pytest.mark.parametrize(
    "algorithm,problem,why",
    [
        ("matmul-blockcyclic", {"q": 10}, "perfect cube"),
        ("matmul-static2d", {"n": 0}, "n must be at least 1"),
        ("matmul-blockcyclic", {"dist": "static2d"}, "dist is 'blockcyclic'"),
        ("matmul-blockcyclic", {"size": 100}, "no parameter size"),
        ("matmul-blockcyclic", {"grid_rows": 2}, "no parameter grid_rows"),
        ("matmul-static2d", {"n": 100, "s": 30}, "s = 30"),
        ("matmul-static2d", {"grid_rows": 1, "grid_cols": 4}, "grid_rows = 1"),
        ("cannon-put", {"variant": "get"}, "variant is 'put'"),
        ("cannon-send", {"variant": "put"}, "variant is 'send'"),
        ("cannon-get", {"kernel": "fast"}, "kernel must be"),
        ("cannon-get", {"n": 2.5}, "n must be an integer"),
        ("cannon-get", {"rounds": 3}, "rounds = 3"),
        ("inprod", {"n": True}, "n must be an integer"),
        ("inprod", {"q": 8}, "no parameter q"),
    ],
)
def test_problems_outside_the_models_are_refused(algorithm: str, problem: dict[str, Any], why: str) -> None:
    with pytest.raises(CostError, match=why):
        closed_form(algorithm, problem, 4)


def test_a_runs_params_are_a_problem() -> None:
    """A driver's params (derived keys included) give the same cost as the bare problem."""
    for algorithm, problem in (("matmul-static2d", {"n": 37, "q": 27}), ("cannon-get", {"n": 37})):
        cost = closed_form(algorithm, problem, 6)
        assert closed_form(algorithm, cost.problem, 6) == cost


def test_f_kernels() -> None:
    assert closed_form("inprod", {}, 2).f_kernel == "dot_double_naive"  # the driver's plain loop
    assert closed_form("matmul-static2d", {}, 2).f_kernel == "matmul_double_blas"
    kernels = {k: closed_form("cannon-put", {"kernel": k}, 2).f_kernel for k in ("blas", "naive", "transposed")}
    assert kernels == {"blas": "matmul_double_blas", "naive": "matmul_double_ijk", "transposed": "matmul_double_ijk"}


# ------------------------------------------------------------------- against the drivers

# (n, q): n = 24 divides by Q = 2, 3, 4 and the grids' sides; the others divide nothing
# (n = 5, q = 64 and n = 9, q = 125 have empty blocks; q = 1 is one cube)
MATMUL_SIZES = [(24, 8), (37, 27), (5, 64), (13, 8), (20, 1), (50, 8), (101, 27), (37, 64), (24, 64), (9, 125)]
# n = 36 divides by every grid side and round count for p <= 8 but 5, 7 (L = 4 for p = 8)
CANNON_SIZES = [1, 3, 23, 36, 37, 50, 70]
INPROD_SIZES = [1, 5, 37, 1000]


def driver_cases(p_values: range, sizes: list[Any]) -> list[Any]:
    return [pytest.param(p, size, id=f"p{p}-{size}") for p in p_values for size in sizes]


@needs_drivers
@pytest.mark.parametrize("p,n", driver_cases(range(1, 9), INPROD_SIZES))
def test_inprod_against_driver(p: int, n: int) -> None:
    assert_matches_run(closed_form("inprod", {"n": n}, p), run_driver("bspalg-inprod", p, "--size", str(n)))


def check_cannon(p: int, n: int, variant: str, kernel: str = "blas") -> None:
    run = run_driver("bspalg-cannon", p, "--size", str(n), "--variant", variant, "--kernel", kernel)
    assert_matches_run(closed_form(f"cannon-{variant}", {"n": n, "kernel": kernel}, p), run)


@needs_drivers
@pytest.mark.parametrize("dist", ["blockcyclic", "static2d"])
@pytest.mark.parametrize("p,size", driver_cases(range(1, 9), MATMUL_SIZES))
def test_matmul_against_driver(p: int, size: tuple[int, int], dist: str) -> None:
    n, q = size
    run = run_driver("bspalg-matmul", p, "--size", str(n), "--q", str(q), "--dist", dist)
    assert_matches_run(closed_form(f"matmul-{dist}", {"n": n, "q": q}, p), run)


@needs_drivers
@pytest.mark.parametrize("variant", ["put", "get", "send"])
@pytest.mark.parametrize("p,n", driver_cases(range(1, 9), CANNON_SIZES))
def test_cannon_against_driver(p: int, n: int, variant: str) -> None:
    check_cannon(p, n, variant)


@needs_drivers
@pytest.mark.parametrize("kernel", ["naive", "transposed"])
def test_cannon_kernels_cost_the_same(kernel: str) -> None:
    check_cannon(4, 37, "get", kernel)


@needs_drivers
@pytest.mark.parametrize(
    "algorithm,program,extra",
    [
        ("inprod", "bspalg-inprod", []),
        ("matmul-blockcyclic", "bspalg-matmul", []),
        ("matmul-static2d", "bspalg-matmul", ["--dist", "static2d"]),
        ("cannon-get", "bspalg-cannon", ["--variant", "get"]),
    ],
)
def test_driver_defaults(algorithm: str, program: str, extra: list[str]) -> None:
    """No size given: the model fills in the driver's defaults (n = 1000, q = 8, kernel blas;
    inprod n = 10^6). --no-check: the reference would be the slow part."""
    assert_matches_run(closed_form(algorithm, {}, 2), run_driver(program, 2, "--no-check", *extra))


# ----------------------------------------------------- against the schedule simulator


def simulated(steps: list[Step]) -> list[tuple[float, float, float, float, bool]]:
    """(w, h, count, msg_words, any request) per superstep of test_matmul_cost's model."""
    out = []
    for step in steps:
        w, h, count = step.cost()
        words, requests = sum(map(sum, step.words)), sum(step.requests)
        out.append((w, h, count, words / requests if requests else 0.0, requests > 0))
    return out


def assert_matches_simulation(cost: Cost, steps: list[Step]) -> None:
    want = simulated(steps)
    got = cost.supersteps()
    assert len(got) == len(want) == cost.S
    for k, (g, (w, h, count, msg_words, moves)) in enumerate(zip(got, want, strict=True)):
        where = f"superstep {k}: model {g}, simulated {(w, h, count, msg_words)}"
        assert (g["w"], g["h"], g["count"]) == (w, h, count), where
        assert g["msg_words"] == pytest.approx(msg_words, rel=1e-12, abs=0), where
        assert (g["primitive"] is not None) == moves, where


@pytest.mark.parametrize("dist", ["blockcyclic", "static2d"])
@pytest.mark.parametrize(
    "p,n,q",
    [
        (9, 37, 27),
        (12, 50, 64),
        (16, 101, 27),
        (16, 64, 64),
        (13, 40, 64),
        (30, 61, 125),
        (36, 100, 729),
        (64, 101, 512),
    ],
)
def test_matmul_against_simulation(p: int, n: int, q: int, dist: str) -> None:
    assert_matches_simulation(closed_form(f"matmul-{dist}", {"n": n, "q": q}, p), matmul_model(n, q, p, dist))


@pytest.mark.parametrize("variant", ["put", "get", "send"])
@pytest.mark.parametrize("p,n", [(9, 37), (12, 50), (12, 48), (16, 101), (30, 61), (31, 100), (36, 100), (64, 129)])
def test_cannon_against_simulation(p: int, n: int, variant: str) -> None:
    assert_matches_simulation(closed_form(f"cannon-{variant}", {"n": n}, p), cannon_model(n, p, variant))


@pytest.mark.parametrize("variant", ["put", "get", "send"])
def test_cannon_closed_form_is_the_general_evaluation(variant: str) -> None:
    """Where L divides n the closed form is used; it equals the per-process evaluation."""
    for p in range(1, 65):
        L = cannon.rounds_of(p)[2]
        for n in (L, 3 * L):
            assert cannon.even_supersteps(n, p, variant) == cannon.general_supersteps(n, p, variant), (p, n)


def test_chunks_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """The models evaluate their steps in chunks: one step (one round) a chunk gives the same
    supersteps, the partial products carried from one chunk's last remainder step into the
    next chunk's first input phase included (p = 6, q = 64: 3 remainder steps; p = 16, q = 27:
    only remainder steps and the closing superstep)."""
    cases = [(6, 37, 64), (16, 37, 27), (5, 13, 8), (3, 50, 27)]
    whole = {(p, n, q, d): closed_form(f"matmul-{d}", {"n": n, "q": q}, p) for p, n, q in cases for d in DISTS}
    rounds = {(p, v): closed_form(f"cannon-{v}", {"n": 37}, p) for p in (5, 6, 12) for v in ("put", "get")}
    monkeypatch.setattr(matmul, "CHUNK_CELLS", 1)
    monkeypatch.setattr(cannon, "CHUNK_CELLS", 1)
    for (p, n, q, d), cost in whole.items():
        assert closed_form(f"matmul-{d}", {"n": n, "q": q}, p) == cost, (p, n, q, d)
    for (p, v), cost in rounds.items():
        assert closed_form(f"cannon-{v}", {"n": 37}, p) == cost, (p, v)


# ------------------------------------------------------------------------- large p


def test_cannon_at_p_1024() -> None:
    """32 x 32 grid, L = 32 rounds of 3125 x 3125 blocks: W = 2 n^3 / p, H = 2 n^2 / sqrt(p);
    the 31 rounds in the middle are one StepKind."""
    n, p = 100000, 1024
    cost = closed_form("cannon-put", {"n": n}, p)
    assert (33, 2 * n**3 / p, 2 * n**2 / 32) == (cost.S, cost.W, cost.H)
    assert [(k.kind, k.repeat) for k in cost.steps] == [
        ("shift A and B", 1),
        ("multiply, shift A and B", 31),
        ("multiply", 1),
    ]
    uneven = closed_form("cannon-get", {"n": n + 1}, p)
    assert uneven.S == 33 and uneven.H > cost.H and uneven.W > cost.W


@pytest.mark.parametrize("dist", ["blockcyclic", "static2d"])
def test_matmul_at_p_4096(dist: str) -> None:
    """q = 512 (Q = 8), n = 4096 (s = 512) on 4096 processes: Q^2 = 64 columns < p, so one
    remainder step (processes x < 512 compute cube x: column x // 8, J = x mod 8) and a closing
    superstep, S = 3. Block (a, b) is fetched 16 times (8 times as A, 8 as B).
      blockcyclic: every block whole on process 8 a + b < 64, C_IK on process 8 I + K = x // 8:
        input h = 16 s^2 (an owner sends 16 blocks), output h = 8 s^2 (an owner receives its
        column's 8 products; process 0 computes one itself), closing w = 8 s^2:
        W = 2 s^3 + 8 s^2, H = 24 s^2.
      static2d: 64 x 64 grid of 64 x 64 rectangles; a block is 8 x 8 pieces, 64 row requests
        each (not whole rows of the block): input h = 2 s^2 (a process gets two blocks it does
        not hold), output h = s^2 (it sends all of V_IJK); processes x < 64 hold a piece of
        their own C_IK and add it at once (64^2 more in the output), the owners of C pieces
        add 8 pieces in the closing superstep: W = 2 s^3 + 64^2 + 8 64^2, H = 3 s^2."""
    n, q, p, s = 4096, 512, 4096, 512
    cost = closed_form(f"matmul-{dist}", {"n": n, "q": q}, p)
    assert cost.S == 2 * math.ceil(q / p) + 1 == 3
    if dist == "blockcyclic":
        assert (2 * s**3 + 8 * s**2, 24 * s**2) == (cost.W, cost.H)
    else:
        assert (2 * s**3 + 9 * 64**2, 3 * s**2) == (cost.W, cost.H)
    assert [k.kind for k in cost.steps] == ["fetch blocks", "multiply, send products", "add products"]


def test_matmul_thesis_totals_at_large_p() -> None:
    """Eq. 4.5 and 4.7 where they hold exactly (n = Q s, Q^2 mod p = 0), at p = 64, 256."""
    for p, q, n in ((64, 512, 800), (256, 4096, 1600)):
        Q = round(q ** (1 / 3))
        s = n // Q
        for dist in ("blockcyclic", "static2d"):
            cost = closed_form(f"matmul-{dist}", {"n": n, "q": q}, p)
            assert 2 * math.ceil(q / p) == cost.S
            assert cost.W == 2 * s**3 * math.ceil(q / p) == 2 * n**3 / p
