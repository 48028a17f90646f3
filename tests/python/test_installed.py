"""An installed bspkit works without the source tree: `cmake --install` of the build into a
temporary prefix, `pip install` of python/ into a temporary target (offline: --no-deps
--no-build-isolation, with this interpreter's setuptools), then the installed `bspkit` run from
a directory outside the sources, with the prefix's bin/ on PATH and neither
$BSPKIT_SOURCE_DIR nor $BSPKIT_BUILD_DIR set."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bspkit

from conftest import PYDIR
from synth import PARAMS_JSON

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ["BSPKIT_BUILD_DIR"]) if os.environ.get("BSPKIT_BUILD_DIR") else None

pytestmark = pytest.mark.skipif(
    BUILD is None or not (BUILD / "bin" / "bspalg-inprod").is_file() or not (BUILD / "probe" / "bspprobe").is_file(),
    reason="BSPKIT_BUILD_DIR is not set or has no bspprobe and bspalg-inprod",
)


class Installed:
    def __init__(self, root: Path) -> None:
        self.prefix = root / "prefix"
        self.site = root / "site"
        self.work = root / "work"  # the user's current directory, far from the sources

    def env(self, with_prefix_on_path: bool = True) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("BSPKIT_SOURCE_DIR", "BSPKIT_BUILD_DIR")}
        path = ["/usr/bin", "/bin"]
        env["PATH"] = os.pathsep.join(([str(self.prefix / "bin")] if with_prefix_on_path else []) + path)
        env["PYTHONPATH"] = str(self.site)
        env["MPLBACKEND"] = "Agg"
        return env

    def bspkit(self, *args: str, with_prefix_on_path: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.site / "bin" / "bspkit"), *args],
            cwd=self.work,
            env=self.env(with_prefix_on_path),
            capture_output=True,
            text=True,
            timeout=120,
        )


def _run(cmd: list[str], what: str) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"{what} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    inst = Installed(tmp_path_factory.mktemp("installed"))
    assert BUILD is not None
    _run(["cmake", "--install", str(BUILD), "--prefix", str(inst.prefix)], "cmake --install")
    # a copy of python/ (README.md and LICENSE there are links to the repository's): pip's
    # in-tree build leaves build/ behind, and the copy must not find the sources around it
    src = inst.prefix.parent / "python-src"
    shutil.copytree(
        REPO / "python", src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".ruff_cache")
    )
    _run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--target", str(inst.site), str(src)],
        "pip install (needs setuptools >= 77 in this environment: run scripts/setup.sh)",
    )  # fmt: skip
    inst.work.mkdir()
    return inst


@pytest.mark.slow
def test_the_package_is_installed_with_its_metadata(installed: Installed) -> None:
    dist = installed.site / f"bspkit-{bspkit.__version__}.dist-info"
    meta = (dist / "METADATA").read_text()
    assert f"Version: {bspkit.__version__}\n" in meta
    assert "License-Expression: MIT\n" in meta
    assert "Classifier: Typing :: Typed\n" in meta
    assert "Description-Content-Type: text/markdown\n" in meta
    assert "# bspkit" in meta  # the README is the long description
    assert "Permission is hereby granted" in (dist / "licenses" / "LICENSE").read_text()
    assert (installed.site / "bspkit" / "py.typed").is_file()
    # every module of every subpackage (pyproject.toml lists the packages: one left out is missing here)
    source = PYDIR / "bspkit"
    modules = sorted(str(m.relative_to(source)) for m in source.rglob("*.py"))
    assert [m for m in modules if not (installed.site / "bspkit" / m).is_file()] == []
    assert "measure/programs.py" in modules and "model/costs/lu.py" in modules
    res = installed.bspkit("--version")
    assert (res.returncode, res.stdout) == (0, f"bspkit {bspkit.__version__}\n")


@pytest.mark.slow
def test_run_finds_the_installed_driver_and_bsprun(installed: Installed) -> None:
    res = installed.bspkit("run", "inprod", "-n", "2", "--size", "1000")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("inprod on 2 processes:")
    assert "check: passed" in res.stdout
    assert "building" not in res.stderr


@pytest.mark.slow
def test_probe_finds_the_installed_bspprobe_and_writes_under_the_current_directory(installed: Installed) -> None:
    res = installed.bspkit("probe", "--quick", "-n", "2", "--", "--only", "l")
    assert res.returncode == 0, res.stderr
    runs = list((installed.work / "results" / "probe").glob("*-threads-p2-*"))
    assert len(runs) == 1, runs
    assert {p.name for p in runs[0].iterdir()} >= {"raw.jsonl", "params.json", "report.html"}
    assert f"raw samples: {runs[0] / 'raw.jsonl'}" in res.stdout
    # the installed bspprobe, through the installed bsprun
    assert (
        f"running: {installed.prefix / 'bin' / 'bsprun'} -n 2 -b threads {installed.prefix / 'bin' / 'bspprobe'}"
        in (res.stderr)
    )


@pytest.mark.slow
def test_validate_finds_the_installed_driver_and_writes_under_the_current_directory(installed: Installed) -> None:
    params = installed.work / "synth-params.json"
    params.write_text(json.dumps(PARAMS_JSON))
    res = installed.bspkit("validate", "inprod", "-n", "2", "--sizes", "1000", "--reps", "1", "--params", params.name)
    assert res.returncode == 0, res.stderr
    runs = list((installed.work / "results" / "validate").glob("inprod-threads-p2-*"))
    assert len(runs) == 1, runs
    assert {p.name for p in runs[0].iterdir()} >= {"validate.json", "validate.html"}
    assert json.loads((runs[0] / "validate.json").read_text())["rows"][0]["params"]["n"] == 1000


@pytest.mark.slow
def test_without_the_prefix_on_path_it_says_where_it_looked(installed: Installed) -> None:
    res = installed.bspkit("run", "inprod", "-n", "2", "--size", "1000", with_prefix_on_path=False)
    assert res.returncode == 1
    assert res.stderr == (
        "bspkit run: error: cannot find bspalg-inprod: no bspkit source tree, not next to bsprun (no bsprun on PATH) "
        "nor on PATH; build bspkit, give --build-dir, or put the bin/ of an installed bspkit on PATH\n"
    )
