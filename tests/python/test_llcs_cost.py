"""bspalg-llcs: the BSP cost the driver counts (JSON W, H, S and every superstep) equals the
cost model of algorithms/llcs/README.md, exactly: per superstep from the block grid for any
sizes, and the closed forms W = b_m b_n (p alpha (alpha + 1) - alpha),
H = (p alpha (alpha + 1) - 2 alpha) beta + [p > 1], S = 2 alpha p when the sizes divide."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import built_program, needs_programs

DRIVER, BSPRUN = built_program("bspalg-llcs"), built_program("bsprun")
pytestmark = needs_programs("bspalg-llcs", "bsprun")


def run_driver(tmp_path: Path, kernel: str, m: int, n: int, p: int, alpha: int, alphabet: int = 4) -> dict:
    out = tmp_path / f"llcs-{kernel}-{m}-{n}-{p}-{alpha}.json"
    cmd = [
        str(BSPRUN),
        "-b",
        "threads",
        "-n",
        str(p),
        str(DRIVER),
        "--kernel",
        kernel,
        "--sizes",
        f"{m},{n}",
        "--alpha",
        str(alpha),
        "--alphabet",
        str(alphabet),
        "-r",
        "1",
        "--json",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{cmd} failed: {done.stdout}\n{done.stderr}"
    return json.loads(out.read_text())


def model(kernel: str, m: int, n: int, p: int, alpha: int) -> list[dict]:
    """Per superstep (w, h, count) of the blocked wavefront, from the block grid."""
    G = alpha * p
    units = n if kernel == "dp" else (n + 63) // 64  # block rows split rows (dp) or words of V
    unit_bytes = 4 if kernel == "dp" else 8

    def col(x: int) -> int:
        return m * x // G

    def row(y: int) -> int:
        return units * y // G

    def cells_high(y: int) -> int:
        if kernel == "dp":
            return row(y + 1) - row(y)
        return max(0, min(n, 64 * row(y + 1)) - 64 * row(y))

    steps = []
    for d in range(2 * G - 1):
        work, sent, recv, count = [0] * p, [0] * p, [0] * p, [0] * p
        for x in range(G):
            y = d - x
            if not 0 <= y < G:
                continue
            s = x % p
            work[s] += (col(x + 1) - col(x)) * cells_high(y)
            nbytes = (row(y + 1) - row(y)) * unit_bytes
            dest = (x + 1) % p
            if x < G - 1 and nbytes > 0 and dest != s:
                words = (nbytes + 7) // 8
                sent[s] += words
                recv[dest] += words
                count[s] += 1
        steps.append(
            {
                "w": max(work),
                "h": max(max(a, b) for a, b in zip(sent, recv, strict=True)),
                "count": max(count),
            }
        )
    owner = (G - 1) % p  # the extra superstep: the LLCS to process 0
    steps.append({"w": 0, "h": 1 if owner != 0 else 0, "count": 1 if owner != 0 else 0})
    return steps


def check_against_model(run: dict, kernel: str, m: int, n: int, p: int, alpha: int) -> None:
    expected = model(kernel, m, n, p, alpha)
    got = [{"w": s["w"], "h": s["h"], "count": s["count"]} for s in run["supersteps"]]
    assert got == expected
    assert run["S"] == 2 * alpha * p
    assert run["W"] == sum(s["w"] for s in expected)
    assert run["H"] == sum(s["h"] for s in expected)
    assert run["work_unit"] == "cell"
    assert run["algorithm"] == f"llcs-{kernel}"
    assert run["params"]["G"] == alpha * p and run["params"]["alpha"] == alpha
    assert run["verified"] is True
    for step in run["supersteps"]:  # communication is labelled as the neighbour shift
        if step["h"] > 0:
            assert (step["primitive"], step["pattern"]) == ("put", "shift")
        if p == 1:
            assert (step["primitive"], step["pattern"]) == (None, None)


@pytest.mark.parametrize(
    "kernel,m,n,p,alpha,beta",
    [
        ("dp", 1200, 1200, 2, 3, 100),  # G = 6, 200 x 200 blocks, a column is 100 words
        ("dp", 1200, 1200, 3, 2, 100),
        ("bitpar", 1280, 1280, 2, 2, 5),  # G = 4, 320 rows = 5 words per block
        ("bitpar", 2304, 2304, 3, 2, 6),  # G = 6, 384 rows = 6 words
        ("bitpar", 1280, 1280, 1, 4, 5),  # p = 1: no communication
    ],
)
def test_closed_forms_when_sizes_divide(
    tmp_path: Path, kernel: str, m: int, n: int, p: int, alpha: int, beta: int
) -> None:
    run = run_driver(tmp_path, kernel, m, n, p, alpha)
    check_against_model(run, kernel, m, n, p, alpha)
    G = alpha * p
    assert run["W"] == (m // G) * (n // G) * (p * alpha * (alpha + 1) - alpha)  # eq. 5.2
    assert run["H"] == ((p * alpha * (alpha + 1) - 2 * alpha) * beta + 1 if p > 1 else 0)
    assert run["S"] == 2 * G


@pytest.mark.parametrize(
    "kernel,m,n,p,alpha,alphabet",
    [
        ("dp", 1000, 3001, 3, 2, 4),
        ("dp", 65, 63, 4, 5, 256),  # blocks of 3 x 3 cells
        ("bitpar", 3001, 1000, 2, 3, 2),
        ("bitpar", 4097, 200, 4, 5, 256),  # 4 words over 20 block rows: most are empty
    ],
)
def test_uneven_sizes_match_the_grid(
    tmp_path: Path, kernel: str, m: int, n: int, p: int, alpha: int, alphabet: int
) -> None:
    run = run_driver(tmp_path, kernel, m, n, p, alpha, alphabet)
    check_against_model(run, kernel, m, n, p, alpha)
    assert run["W"] >= m * n / p  # every cell once, and no process does less than its share
    assert sum(s["w"] for s in run["supersteps"]) == run["W"]
