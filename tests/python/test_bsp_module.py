"""bspkit.bsp, BSPlib for Python programs: the semantic tests ported to Python
(bsp_programs/semantics.py) on procs and mpi at p = 1-4 through bsprun, an uncaught
exception ending the run with one line and status 1, each process' output once, the
profile of a Python program read by `bspkit profile`, run() for notebooks, and where the
module finds libbsp."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD, PYDIR, missing_dependency

PROGRAMS = Path(__file__).resolve().parent / "bsp_programs"
BSPRUN = BUILD / "bin" / "bsprun" if BUILD else None
LIBBSP = BUILD / "src" / "libbsp.so" if BUILD else None
MPI_BUILT = BUILD is not None and (BUILD / "lib" / "bspkit" / "libbspkit_mpi.so").is_file()

pytestmark = pytest.mark.skipif(
    BSPRUN is None or not BSPRUN.is_file() or LIBBSP is None or not LIBBSP.is_file(),
    reason="BSPKIT_BUILD_DIR is not set or has no bin/bsprun and src/libbsp.so",
)
# mpi: each launch costs about half a second; the quick tier runs procs, the full tier both
MPI_SLOW = pytest.param("mpi", marks=pytest.mark.slow)


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BSPKIT_BACKEND", "BSPKIT_NPROCS", "BSPKIT_LIBBSP")}
    env["PYTHONPATH"] = str(PYDIR) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OPENBLAS_CORETYPE", "Haswell")
    env.update(extra)
    return env


def bsprun(backend: str, nprocs: int, *args: str, profile: Path | None = None) -> subprocess.CompletedProcess[str]:
    if backend.startswith("mpi") and not MPI_BUILT:
        pytest.skip(missing_dependency("Open MPI", "the build has no MPI back end"))
    options = ["--profile", str(profile)] if profile else []
    return subprocess.run(
        [str(BSPRUN), "-b", backend, "-n", str(nprocs), *options, sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(),
    )


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=environment(**env)
    )


@pytest.mark.parametrize("nprocs", [1, 2, 3, 4])
@pytest.mark.parametrize("backend", ["procs", MPI_SLOW])
def test_semantics(backend: str, nprocs: int, tmp_path: Path) -> None:
    # One run with a profile: the Python program's profile is one `bspkit profile` reads.
    profile = tmp_path / "profile.jsonl" if (backend, nprocs) == ("procs", 2) else None
    done = bsprun(backend, nprocs, str(PROGRAMS / "semantics.py"), str(nprocs), profile=profile)
    assert done.returncode == 0, f"status {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert f"semantics ok on {backend} with {nprocs} processes" in done.stdout
    # each process' print once, the line buffered before the fork once (not once per copy)
    for s in range(nprocs):
        assert done.stdout.count(f"print from process {s}") == 1, done.stdout
    assert done.stdout.count("before begin: once") == (1 if backend == "procs" else nprocs), done.stdout
    if profile:
        report = subprocess.run(
            [sys.executable, "-m", "bspkit", "profile", str(profile)],
            capture_output=True,
            text=True,
            timeout=120,
            env=environment(MPLBACKEND="Agg"),
        )
        assert report.returncode == 0, report.stderr
        assert "last" in profile.read_text()  # the phase the program named


UNCAUGHT_LINES = {
    "value": r"bspkit: error on process 1: ValueError: a wrong value on {p} processes \(uncaught\.py, line \d+\)",
    "bsp": r"bspkit: error in bsp_put on process 1: pid {p} is out of range: there are {p} processes \(0\.\.\d\)",
}


@pytest.mark.parametrize("nprocs", [2, 3])
@pytest.mark.parametrize("backend", ["procs", MPI_SLOW])
def test_an_uncaught_exception_ends_the_run_with_one_line(backend: str, nprocs: int) -> None:
    # three runs each: process 1 raises (twice a ValueError, once a refused put) while the
    # others wait in sync
    for mode in ("value", "bsp", "value"):
        done = bsprun(backend, nprocs, str(PROGRAMS / "uncaught.py"), mode)
        ours = [line for line in done.stderr.splitlines() if line.startswith("bspkit: ")]
        assert done.returncode == 1, done.stderr
        assert len(ours) == 1, done.stderr
        assert re.fullmatch(UNCAUGHT_LINES[mode].format(p=nprocs), ours[0]), ours[0]
        assert "not reached" not in done.stdout
        if backend == "procs":  # mpirun adds its own lines about MPI_Abort
            assert done.stderr.splitlines() == ours


RUN_TWICE = """
import numpy as np
from bspkit import bsp

def square_sum(scale):
    mine = float(bsp.pid() + 1) * scale
    return bsp.reduce("sum", mine * mine), bsp.nprocs()

print(bsp.run(square_sum, 3, 1.0), bsp.run(square_sum, 2, 2.0), flush=True)
try:
    bsp.pid()
except bsp.BspError as err:
    print(err)
"""


def test_run_twice_from_one_process() -> None:
    done = python(RUN_TWICE)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{(1.0 + 4.0 + 9.0, 3)} {(4.0 + 16.0, 2)}"  # process 0 alone returns and prints
    assert lines[1] == "bspkit: error in bsp_pid: called outside the SPMD section (before bsp_begin or after bsp_end)"
    assert len(lines) == 2


def test_the_threads_back_end_is_refused() -> None:
    done = python("from bspkit import bsp\nbsp.begin(2)", BSPKIT_BACKEND="threads")
    assert done.returncode == 1
    assert (
        "BspError: bspkit: error in bsp_begin: the threads back end runs every BSP process as a thread" in done.stderr
    )


def test_import_loads_no_analysis_stack_and_says_where_it_looked() -> None:
    done = python(
        "import sys\nfrom bspkit import bsp\nprint(bsp.LIBRARY_PATH, [m for m in ('scipy', 'matplotlib') if m in sys.modules])"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(LIBBSP), "[]"]
    missing = python("from bspkit import bsp", BSPKIT_LIBBSP="/nonexistent/libbsp.so")
    assert missing.returncode == 1
    assert "ImportError: bspkit.bsp cannot find libbsp" in missing.stderr
    assert "$BSPKIT_LIBBSP: /nonexistent/libbsp.so (missing)" in missing.stderr


def test_the_docs_example_is_the_example_file() -> None:
    """docs/python.md shows examples/python/hello_bsp.py (its code after the docstring), which
    its sh block runs."""
    page = (PYDIR.parent / "docs" / "python.md").read_text()
    shown = page.split("```python\n", 1)[1].split("```\n", 1)[0]
    source = (PYDIR.parent / "examples" / "python" / "hello_bsp.py").read_text()
    assert source.endswith("\n" + shown), "docs/python.md's inner product differs from examples/python/hello_bsp.py"
