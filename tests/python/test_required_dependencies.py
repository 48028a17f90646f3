"""conftest.py's rules for the test environment: under BSPKIT_REQUIRE_DEPS=1 (run-tests.sh) a
test skipped for a dependency scripts/setup.sh installs fails, and any other skip stays a
skip; Open MPI's settings of the user's environment do not reach the tests."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (
    BUILD,
    DEPENDENCY_SKIP,
    PYDIR,
    SETUP_DEPENDENCIES,
    dependency_of,
    missing_dependency,
    mpi_env_changes,
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


def test_open_mpi_settings_of_the_user_are_not_the_tests(tmp_path: Path) -> None:
    environ = {
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", ""),
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
        "OMPI_MCA_btl": "self",
        "OMPI_COMM_WORLD_SIZE": "4",
        "PMIX_RANK": "1",
        "PRTE_MCA_rmaps_default_mapping_policy": "node",
        "PMI_SIZE": "4",
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "BSPKIT_SOMETHING": "kept",
    }
    unset, settings = mpi_env_changes(environ)
    assert unset == sorted(
        [
            "OMPI_MCA_rmaps_base_oversubscribe",
            "OMPI_MCA_btl",
            "OMPI_COMM_WORLD_SIZE",
            "PMIX_RANK",
            "PRTE_MCA_rmaps_default_mapping_policy",
            "PMI_SIZE",
            # root needs them to run mpirun; anyone else, bsprun sets neither (tools_test.sh)
            *([] if os.geteuid() == 0 else ["OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"]),
        ]
    )
    assert settings == {}  # no ~/.openmpi/mca-params.conf here: Open MPI's defaults are the tests'
    # and this session runs so
    assert not [k for k in os.environ if k.startswith(("OMPI_MCA_rmaps", "OMPI_MCA_btl", "OMPI_COMM_WORLD"))]


HAVE_MPI_TEST = bool(BUILD and (BUILD / "CTestTestfile.cmake").is_file() and shutil.which("ctest"))


@pytest.mark.skipif(not HAVE_MPI_TEST, reason="BSPKIT_BUILD_DIR is not set or has no ctest tests")
def test_ctest_runs_mpi_without_the_users_open_mpi_settings() -> None:
    """tests/mpi_env.cmake.in: OMPI_MCA_btl=self alone stops every MPI job of two processes; a
    test on the mpi back end passes all the same, since ctest takes it out of the environment."""
    assert BUILD is not None
    listed = subprocess.run(
        ["ctest", "--test-dir", str(BUILD), "-N", "-R", r"^semantics\.drma_put\.mpi\.p2$"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if "Total Tests: 1" not in listed.stdout:
        pytest.skip(missing_dependency("Open MPI", "the build has no tests on the mpi back end"))
    env = dict(os.environ, OMPI_MCA_btl="self", OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_COMM_WORLD_SIZE="5")
    done = subprocess.run(
        ["ctest", "--test-dir", str(BUILD), "-R", r"^semantics\.drma_put\.mpi\.p2$", "--output-on-failure"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "100% tests passed, 0 tests failed out of 1" in done.stdout
