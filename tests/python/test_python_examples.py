"""The Python examples (examples/python/) against their C versions, on procs and mpi: each
prints what its C counterpart prints or checks, for the same input, and the test compares
the two (issue 42 item 3)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD, REPO, missing_dependency, needs_programs

EXAMPLES = REPO / "examples" / "python"
PYTHON = sys.executable

pytestmark = needs_programs("bsprun", "bspalg-rdxsort")


def mpi_built() -> bool:
    return BUILD is not None and (BUILD / "lib" / "bspkit" / "libbspkit_mpi.so").is_file()


# Each MPI launch costs about half a second: the full tier runs the mpi cases, the quick one not.
MPI_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(not mpi_built(), reason=missing_dependency("Open MPI", "the mpi back end is not built")),
]

# (backend, p): every p of the issue on procs, two on mpi (each MPI launch costs ~0.5 s)
RUNS = [("procs", p) for p in (1, 2, 3, 4)] + [
    pytest.param(
        "mpi",
        p,
        marks=MPI_MARKS,
    )
    for p in (2, 3)
]


def bsprun(backend: str, p: int, *command: str) -> str:
    """Runs COMMAND on P processes of BACKEND; its stdout (a failure shows everything)."""
    assert BUILD is not None
    env = dict(os.environ, BSPKIT_BUILD_DIR=str(BUILD), PYTHONPATH=str(REPO / "python"))
    r = subprocess.run(
        [str(BUILD / "bin" / "bsprun"), "-b", backend, "-n", str(p), *command],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert r.returncode == 0, f"{command} on {backend} p={p}: status {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.mark.parametrize(("backend", "p"), RUNS)
def test_inner_product_as_c(backend: str, p: int) -> None:
    """examples/python/inner_product.py prints the C version's lines, with the same sum (to
    rounding: NumPy's dot adds in another order than C's loop)."""
    assert BUILD is not None
    n = "20011"  # not a multiple of any p: uneven shares
    py = bsprun(backend, p, PYTHON, str(EXAMPLES / "inner_product.py"), n)
    c = bsprun(backend, p, str(BUILD / "examples" / "inner_product"), n)
    pattern = re.compile(rf"with itself on {p} processes: (\S+)\n")
    got_py, got_c = pattern.search(py), pattern.search(c)
    assert got_py and got_c, (py, c)
    assert float(got_py.group(1)) == pytest.approx(float(got_c.group(1)), rel=1e-12)
    # the cost line: the same W, H and S
    assert re.search(r"\(W = .*\)", py).group(0) == re.search(r"\(W = .*\)", c).group(0)  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def c_sort_fingerprint(tmp_path_factory: pytest.TempPathFactory) -> str:
    """bspalg-rdxsort's fingerprint of the sorted output for the test's keys (p = 1)."""
    assert BUILD is not None
    out = tmp_path_factory.mktemp("rdxsort") / "run.json"
    bsprun(
        "threads",
        1,
        str(BUILD / "bin" / "bspalg-rdxsort"),
        "--size",
        "30011",
        "--seed",
        "7",
        "-r",
        "1",
        "--json",
        str(out),
    )
    note = json.loads(out.read_text())["check_note"]
    found = re.search(r"fingerprint (0x[0-9a-f]{16})", note)
    assert found, note
    return found.group(1)


@pytest.mark.parametrize(("backend", "p"), RUNS)
def test_radix_sort_as_c(backend: str, p: int, c_sort_fingerprint: str) -> None:
    """examples/python/radix_sort.py sorts the keys bspalg-rdxsort sorts: in order, and the
    same fingerprint as the C driver's output."""
    out = bsprun(backend, p, PYTHON, str(EXAMPLES / "radix_sort.py"), "30011", "7")
    found = re.search(rf"radix sort of 30011 keys on {p} processes: sorted, fingerprint (0x[0-9a-f]{{16}})", out)
    assert found, out
    assert found.group(1) == c_sort_fingerprint


# LU: every p on procs, one on mpi (its n supersteps cost more there)
LU_RUNS = [("procs", p) for p in (1, 2, 3, 4)] + [
    pytest.param(
        "mpi",
        2,
        marks=MPI_MARKS,
    )
]
LU_SIZE, LU_SEED = "97", "5"  # n prime: uneven shares of the columns at every p > 1


@pytest.fixture(scope="module")
def c_lu_check(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, float]:
    """bspalg-lu's pivot fingerprint and residual bound for the test's matrix (p = 1)."""
    assert BUILD is not None
    out = tmp_path_factory.mktemp("lu") / "run.json"
    command = ["--size", LU_SIZE, "--seed", LU_SEED, "-r", "1", "--json", str(out)]
    bsprun("threads", 1, str(BUILD / "bin" / "bspalg-lu"), *command)
    note = json.loads(out.read_text())["check_note"]
    found = re.search(r"\(bound (\S+)\).*pivots (0x[0-9a-f]{16})", note)
    assert found, note
    return found.group(2), float(found.group(1))


@needs_programs("bspalg-lu")
@pytest.mark.parametrize(("backend", "p"), LU_RUNS)
def test_lu_as_c(backend: str, p: int, c_lu_check: tuple[str, float]) -> None:
    """examples/python/lu.py factors bspalg-lu's matrix with the C driver's pivots (the same
    fingerprint) and a residual ||P A - L U||_1 / (n ||A||_1 eps) under the C check's bound."""
    pivots, bound = c_lu_check
    out = bsprun(backend, p, PYTHON, str(EXAMPLES / "lu.py"), LU_SIZE, LU_SEED)
    found = re.search(
        rf"LU of {LU_SIZE} x {LU_SIZE} on {p} processes: pivots (0x[0-9a-f]{{16}}), "
        r"\|\|PA - LU\|\|_1/\(n \|\|A\|\|_1 eps\) = (\S+),",
        out,
    )
    assert found, out
    assert found.group(1) == pivots
    assert 0 <= float(found.group(2)) <= bound
