"""The matrix-multiplication drivers' counted BSP cost against their cost models.

Two checks per run of bspalg-matmul / bspalg-cannon (threads back end, small n, --json):
  * closed forms where they hold exactly (n divisible, see algorithms/matmul/README.md):
    S = 2 ceil(q/p) (thesis eq. 4.7), W = 2 n^3 / p, H for p = 1, 2, 4 and Cannon's
    H = 2 n^2 / sqrt(p) (square p) and (p - 1) n^2 / p (1 x p grid);
  * every superstep's w, h and request count against a model of the schedule written here
    independently of the C code (which blocks each process fetches, from whom, and where its
    products go), for sizes that divide nothing.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from conftest import built_program, needs_programs

BSPRUN, MATMUL, CANNON = built_program("bsprun"), built_program("bspalg-matmul"), built_program("bspalg-cannon")
pytestmark = needs_programs("bsprun", "bspalg-matmul", "bspalg-cannon", hint=" (no CBLAS?)")


def run_driver(driver: Path, p: int, *args: str) -> dict:
    out = subprocess.run(
        [
            str(BSPRUN),
            "-b",
            "threads",
            "-n",
            str(p),
            str(driver),
            "--json",
            "-",
            "-r",
            "1",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, f"{driver.name} {args} at p = {p}: status {out.returncode}\n{out.stderr}"
    run = json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])
    assert run["verified"] is True, run["check_note"]
    return run


# ----------------------------------------------------------------------------- models


def grid(p: int) -> tuple[int, int]:
    rows = max(d for d in range(1, math.isqrt(p) + 1) if p % d == 0)
    return rows, p // rows


def part_start(n: int, parts: int, i: int) -> int:
    return i * n // parts


def part_size(n: int, parts: int, i: int) -> int:
    return part_start(n, parts, i + 1) - part_start(n, parts, i)


class Step:
    """One superstep's counts: work and requests per process, words per (source, destination)."""

    def __init__(self, p: int):
        self.p = p
        self.work = [0.0] * p
        self.requests = [0] * p
        self.words = [[0] * p for _ in range(p)]  # words[src][dst]

    def move(self, issuer: int, src: int, dst: int, words: int) -> None:
        if src == dst:
            return
        self.requests[issuer] += 1
        self.words[src][dst] += words

    def cost(self) -> tuple[float, int, int]:
        sent = [sum(row) for row in self.words]
        recv = [sum(self.words[s][d] for s in range(self.p)) for d in range(self.p)]
        return max(self.work), max(sent + recv), max(self.requests)


def matmul_model(n: int, q: int, p: int, dist: str) -> list[Step]:
    """The memory-efficient algorithm's supersteps as the README describes them."""
    Q = round(q ** (1 / 3))
    s = -(-n // Q)
    full, rem = divmod(Q * Q, p)
    rem_steps = -(-(rem * Q) // p)
    Pr, Pc = grid(p)

    def size(I: int) -> int:
        return max(0, min(s, n - I * s))

    def cube(x: int, t: int):
        if t < rem_steps:
            u = t * p + x
            if u >= rem * Q:
                return None
            I, K = divmod(p * full + u // Q, Q)
            return I, u % Q, K, -1
        t1 = t - rem_steps
        I, K = divmod((t1 // Q) * p + x, Q)
        stage = t1 % Q
        return I, (stage + I + K) % Q, K, stage

    def bc_owner(a: int, b: int) -> int:
        return (a * Q + b) % p

    def pieces(r0: int, c0: int, rows: int, cols: int):
        """(owner, rows, cols, owner's row length) of each owner's part of a rectangle."""
        if rows <= 0 or cols <= 0:
            return
        for pr in range(Pr):
            a0, a1 = (
                max(r0, part_start(n, Pr, pr)),
                min(r0 + rows, part_start(n, Pr, pr + 1)),
            )
            for pc in range(Pc):
                b0, b1 = (
                    max(c0, part_start(n, Pc, pc)),
                    min(c0 + cols, part_start(n, Pc, pc + 1)),
                )
                if a1 > a0 and b1 > b0:
                    yield pr * Pc + pc, a1 - a0, b1 - b0, part_size(n, Pc, pc)

    def mine(x: int, r0: int, c0: int, rows: int, cols: int) -> bool:
        pr, pc = divmod(x, Pc)
        return (
            part_start(n, Pr, pr) <= r0
            and r0 + rows <= part_start(n, Pr, pr + 1)
            and part_start(n, Pc, pc) <= c0
            and c0 + cols <= part_start(n, Pc, pc + 1)
        )

    def s2d_transfer(step: Step, x: int, r0: int, c0: int, rows: int, cols: int, to_owner: bool) -> None:
        for owner, prows, pcols, owner_cols in pieces(r0, c0, rows, cols):
            if owner == x:
                continue
            whole = pcols == owner_cols and pcols == cols  # contiguous on both sides: one request
            for _ in range(1 if whole else prows):
                words = prows * pcols if whole else pcols
                if to_owner:
                    step.move(x, x, owner, words)
                else:
                    step.move(x, owner, x, words)

    steps: list[Step] = []
    pending = [[] for _ in range(p)]  # partial products to add, per receiver
    for t in range(rem_steps + Q * full):
        step = Step(p)  # input phase: add what arrived, fetch A_IJ and B_JK
        for x in range(p):
            step.work[x] += sum(pending[x])
            pending[x] = []
            c = cube(x, t)
            if c is None:
                continue
            I, J, K, _ = c
            for a, b in ((I, J), (J, K)):
                words = size(a) * size(b)
                if dist == "blockcyclic":
                    if words:
                        step.move(x, bc_owner(a, b), x, words)
                elif not mine(x, a * s, b * s, size(a), size(b)):
                    s2d_transfer(step, x, a * s, b * s, size(a), size(b), False)
        steps.append(step)
        step = Step(p)  # output phase: the product, then where it belongs
        for x in range(p):
            c = cube(x, t)
            if c is None:
                continue
            I, J, K, stage = c
            bi, bj, bk = size(I), size(J), size(K)
            if stage >= 0:
                step.work[x] += 2.0 * bi * bj * bk
                if dist == "static2d" and stage == Q - 1 and not mine(x, I * s, K * s, bi, bk):
                    s2d_transfer(step, x, I * s, K * s, bi, bk, True)
            elif bi * bj * bk:
                step.work[x] += 2.0 * bi * bj * bk
                if dist == "blockcyclic":
                    owner = bc_owner(I, K)
                    if owner != x:
                        step.move(x, x, owner, bi * bk)
                        pending[owner].append(bi * bk)
                elif not mine(x, I * s, K * s, bi, bk):
                    for owner, prows, pcols, _ in pieces(I * s, K * s, bi, bk):
                        if owner == x:
                            step.work[x] += prows * pcols
                        else:
                            step.move(x, x, owner, prows * pcols)
                            pending[owner].append(prows * pcols)
        steps.append(step)
    if full == 0:  # closing superstep: the last partial products are added
        step = Step(p)
        for x in range(p):
            step.work[x] += sum(pending[x])
        steps.append(step)
    return steps


def cannon_model(n: int, p: int, variant: str) -> list[Step]:
    Pr, Pc = grid(p)
    L = Pr * Pc // math.gcd(Pr, Pc)
    steps = []
    for l in range(L + 1):
        step = Step(p)
        for x in range(p):
            i, j = divmod(x, Pc)
            if l > 0:
                k = (i + j + l - 1) % L
                step.work[x] += 2.0 * part_size(n, Pr, i) * part_size(n, L, k) * part_size(n, Pc, j)
            if l < L:
                k = (i + j + l) % L
                a_owner, b_owner = i * Pc + k % Pc, (k % Pr) * Pc + j
                for owner, words in (
                    (a_owner, part_size(n, Pr, i) * part_size(n, L, k)),
                    (b_owner, part_size(n, L, k) * part_size(n, Pc, j)),
                ):
                    if words:
                        # put and send: the owner issues the request; get: the user
                        step.move(x if variant == "get" else owner, owner, x, words)
        steps.append(step)
    return steps


def assert_matches_model(run: dict, steps: list[Step]) -> None:
    got = [(st["w"], st["h"], st["count"]) for st in run["supersteps"]]
    want = [st.cost() for st in steps]
    assert len(got) == len(want), f"{len(got)} supersteps counted, the model has {len(want)}"
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == pytest.approx(w), f"superstep {k}: (w, h, count) counted {g}, model {w}"
    assert run["S"] == len(steps)
    assert run["W"] == pytest.approx(sum(w for w, _, _ in want))
    assert run["H"] == pytest.approx(sum(h for _, h, _ in want))


# ------------------------------------------------------------------------------ tests


@pytest.mark.parametrize("dist", ["blockcyclic", "static2d"])
@pytest.mark.parametrize("p,q", [(1, 8), (2, 8), (2, 27), (3, 27), (4, 8), (4, 64)])
def test_matmul_closed_forms(dist: str, p: int, q: int) -> None:
    Q = round(q ** (1 / 3))
    n = 24  # divisible by Q = 2, 3, 4 and by the grids' sides 1, 2, 3
    s = n // Q
    run = run_driver(MATMUL, p, "--size", str(n), "--q", str(q), "--dist", dist)
    assert run["algorithm"] == f"matmul-{dist}"
    assert run["params"]["n"] == n and run["params"]["q"] == q and run["params"]["s"] == s
    assert run["S"] == 2 * math.ceil(q / p)  # eq. 4.7
    if (Q * Q) % p == 0:
        assert run["W"] == 2 * math.ceil(q / p) * s**3 == 2 * n**3 / p  # eq. 4.5 (2 flops per point)
    if p == 1:
        assert run["H"] == 0
    if dist == "blockcyclic" and p == 2 and Q % 2 == 0:
        assert run["H"] == Q * n * n / 4  # B_JK is always local, A_IJ remote in half the steps
    if dist == "static2d" and p == Q * Q:
        assert run["H"] == 2 * math.ceil(q / p) * s * s  # eq. 4.6: two s x s blocks per step, no output
    if p == 2:  # the thesis' input term is an upper bound here
        assert run["H"] <= 2 * math.ceil(q / p) * s * s
    assert_matches_model(run, matmul_model(n, q, p, dist))


@pytest.mark.parametrize("dist", ["blockcyclic", "static2d"])
@pytest.mark.parametrize(
    "p,q,n",
    [(2, 27, 37), (3, 8, 50), (3, 64, 37), (4, 27, 101), (4, 1, 20), (5, 8, 13)],
)
def test_matmul_uneven_against_model(dist: str, p: int, q: int, n: int) -> None:
    run = run_driver(MATMUL, p, "--size", str(n), "--q", str(q), "--dist", dist)
    assert_matches_model(run, matmul_model(n, q, p, dist))


@pytest.mark.parametrize("variant", ["put", "get", "send"])
@pytest.mark.parametrize("p", [1, 2, 3, 4])
def test_cannon_closed_forms(variant: str, p: int) -> None:
    n = 36  # divisible by every grid side and round count for p <= 4
    run = run_driver(CANNON, p, "--size", str(n), "--variant", variant)
    assert run["algorithm"] == f"cannon-{variant}"
    Pr, Pc = grid(p)
    L = Pr * Pc // math.gcd(Pr, Pc)
    assert run["S"] == L + 1
    assert run["W"] == 2 * n**3 / p
    if p == 1:
        assert run["H"] == 0
    elif Pr == Pc:
        assert run["H"] == 2 * n * n / math.isqrt(p)
    elif Pr == 1:
        assert run["H"] == (p - 1) * n * n / p
    assert_matches_model(run, cannon_model(n, p, variant))


@pytest.mark.parametrize("variant", ["put", "get", "send"])
@pytest.mark.parametrize("p,n", [(2, 37), (4, 37), (6, 50), (8, 23)])
def test_cannon_uneven_against_model(variant: str, p: int, n: int) -> None:
    run = run_driver(CANNON, p, "--size", str(n), "--variant", variant)
    assert_matches_model(run, cannon_model(n, p, variant))
