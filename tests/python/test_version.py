"""bspkit has one version, python/bspkit/version.py's __version__: CMake and the Python package
read it, include/bsp.h's BSPKIT_VERSION_MAJOR/MINOR must agree with it."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

import bspkit

from conftest import BUILD

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_major_minor_patch() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", bspkit.__version__)


def test_bsp_h_has_the_same_major_and_minor() -> None:
    text = (ROOT / "include" / "bsp.h").read_text()
    major = re.search(r"#define BSPKIT_VERSION_MAJOR (\d+)", text)
    minor = re.search(r"#define BSPKIT_VERSION_MINOR (\d+)", text)
    assert major and minor, "include/bsp.h defines BSPKIT_VERSION_MAJOR and BSPKIT_VERSION_MINOR"
    assert f"{major[1]}.{minor[1]}" == ".".join(bspkit.__version__.split(".")[:2]), (
        f"include/bsp.h says {major[1]}.{minor[1]}, python/bspkit/version.py {bspkit.__version__}"
    )


def test_pyproject_and_cmake_read_the_version_instead_of_repeating_it() -> None:
    project = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "bspkit.version.__version__"}
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r"project\(bspkit VERSION \$\{CMAKE_MATCH_1\}", cmake)
    assert "python/bspkit/version.py" in cmake


@pytest.mark.skipif(BUILD is None, reason="BSPKIT_BUILD_DIR is not set")
def test_the_build_has_the_version() -> None:
    assert BUILD is not None
    cache = (BUILD / "CMakeCache.txt").read_text()
    assert f"CMAKE_PROJECT_VERSION:STATIC={bspkit.__version__}\n" in cache
    out = subprocess.run([str(BUILD / "bin" / "bsprun"), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout == f"bsprun (bspkit) {bspkit.__version__}\n"
    ninja = BUILD / "build.ninja"
    if ninja.is_file():  # the C code gets the version as BSPKIT_VERSION_STRING (via bspkit_common_plain)
        assert f'-DBSPKIT_VERSION_STRING=\\"{bspkit.__version__}\\"' in ninja.read_text()
