"""conftest.py's rules for the test environment: under BSPKIT_REQUIRE_DEPS=1 (run-tests.sh) a
test skipped for a dependency scripts/setup.sh installs fails, and any other skip stays a
skip."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (
    DEPENDENCY_SKIP,
    PYDIR,
    SETUP_DEPENDENCIES,
    dependency_of,
    missing_dependency,
)

HERE = Path(__file__).resolve().parent

# A test file of four tests: a dependency skip by a mark and one by pytest.skip, a skip of
# another kind, and a test that passes.
TESTS = """
import pytest
from conftest import missing_dependency

@pytest.mark.skipif(True, reason=missing_dependency("Open MPI", "no mpirun"))
def test_needs_mpi():
    pass

def test_needs_chromium():
    pytest.skip(missing_dependency("Chromium"))

@pytest.mark.skipif(True, reason="needs root (network namespaces)")
def test_needs_root():
    pass

def test_runs():
    pass

@pytest.mark.xfail(reason=missing_dependency("fio"))
def test_expected_to_fail():
    assert False
"""


def run_pytest(tmp_path: Path, require: str | None) -> subprocess.CompletedProcess[str]:
    """pytest on TESTS with tests/python/conftest.py as a plugin (its hooks, as the suite has them)."""
    (tmp_path / "test_tiny.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if k != "BSPKIT_REQUIRE_DEPS"}
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(PYDIR)])
    if require is not None:
        env["BSPKIT_REQUIRE_DEPS"] = require
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-rA", "-v", "test_tiny.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def outcomes(out: str) -> dict[str, str]:
    """test name (without test_) -> PASSED, FAILED, ERROR, SKIPPED or XFAIL, from -v's lines."""
    return dict(re.findall(r"^test_tiny\.py::test_(\w+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL)\b", out, re.M))


def test_a_dependency_skip_fails_under_bspkit_require_deps(tmp_path: Path) -> None:
    r = run_pytest(tmp_path, "1")
    assert r.returncode == 1, r.stdout + r.stderr
    got = outcomes(r.stdout)
    # a skip in setup (a mark) is reported as an error of the setup, one in the test as a failure
    assert got == {
        "needs_mpi": "ERROR",
        "needs_chromium": "FAILED",
        "needs_root": "SKIPPED",
        "runs": "PASSED",
        "expected_to_fail": "XFAIL",
    }, r.stdout
    assert "missing dependency Open MPI: no mpirun (scripts/setup.sh installs it)" in r.stdout
    assert "Run scripts/setup.sh, which installs Open MPI" in r.stdout
    assert "Run scripts/setup.sh, which installs Chromium" in r.stdout


@pytest.mark.parametrize("require", [None, "0"])
def test_without_it_a_dependency_skip_is_a_skip(tmp_path: Path, require: str | None) -> None:
    r = run_pytest(tmp_path, require)
    assert r.returncode == 0, r.stdout + r.stderr
    assert outcomes(r.stdout) == {
        "needs_mpi": "SKIPPED",
        "needs_chromium": "SKIPPED",
        "needs_root": "SKIPPED",
        "runs": "PASSED",
        "expected_to_fail": "XFAIL",
    }, r.stdout


def test_the_reasons_name_their_dependency() -> None:
    for name in SETUP_DEPENDENCIES:
        reason = missing_dependency(name)
        assert reason.startswith(DEPENDENCY_SKIP) and dependency_of(reason) == name
        assert dependency_of(missing_dependency(name, "no such tool: x")) == name
    for other in ("needs root", "needs mpirun", "missing dependency nothing-known: x", "BSPKIT_BUILD_DIR is not set"):
        assert dependency_of(other) is None, other
    with pytest.raises(KeyError):
        missing_dependency("a dependency setup.sh does not know")
