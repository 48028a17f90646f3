"""`pip install .` at the repository root (pyproject.toml: scikit-build-core runs CMake with
BSPKIT_PYTHON_WHEEL) into a fresh virtual environment: the bspkit package with bspkit's C
library inside it, bspkit/_lib/libbsp.so and, with MPI, bspkit/_lib/bspkit/libbspkit_mpi.so
(the layout bspkit.bsp loads), then used from a directory outside the repository.

The environment borrows this interpreter's packages (pip, scikit-build-core, numpy, ...) by a
.pth file instead of downloading them, so the install runs offline (--no-index,
--no-build-isolation) in seconds. The development install of bspkit in .venv stays out of it:
the .pth files of a borrowed directory are not run, so its import hook is not installed."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

import bspkit

from conftest import BUILD, missing_dependency

REPO = Path(__file__).resolve().parents[2]
PACKAGE_SOURCES = REPO / "python" / "bspkit"

# One BSP program on the installed library by ctypes alone: each process puts 100 + its pid
# into the next one's registered int, and says what it got.
RING = r"""
import ctypes
import os
import sys
from pathlib import Path

import bspkit

lib = ctypes.CDLL(str(Path(bspkit.__file__).parent / "_lib" / "libbsp.so"))
lib.bsp_push_reg.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.bsp_put.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
lib.bsp_begin(int(sys.argv[1]))
pid, nprocs = lib.bsp_pid(), lib.bsp_nprocs()
received = ctypes.c_int(-1)
lib.bsp_push_reg(ctypes.byref(received), ctypes.sizeof(received))
lib.bsp_sync()
mine = ctypes.c_int(100 + pid)
lib.bsp_put((pid + 1) % nprocs, ctypes.byref(mine), ctypes.byref(received), 0, ctypes.sizeof(mine))
lib.bsp_sync()
os.write(1, f"{pid}/{nprocs} got {received.value}\n".encode())  # one write: the lines do not mix
lib.bsp_end()
"""


def ring_lines(nprocs: int) -> list[str]:
    return sorted(f"{pid}/{nprocs} got {100 + (pid - 1) % nprocs}" for pid in range(nprocs))


class Environment:
    """A virtual environment with bspkit installed from the repository, and a working
    directory outside the repository."""

    def __init__(self, root: Path) -> None:
        self.venv = root / "venv"
        self.work = root / "work"
        self.python = self.venv / "bin" / "python"

    def site_packages(self) -> Path:
        return Path(self.run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())

    def run(self, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args],
            cwd=self.work,
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
            timeout=120,
        )

    def run_python(self, code: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return self.run(self.python, "-c", code, *args, env=env)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Environment:
    if importlib.util.find_spec("scikit_build_core") is None:
        pytest.skip(missing_dependency("scikit-build-core"))
    env = Environment(tmp_path_factory.mktemp("packaging"))
    env.work.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env.venv)], check=True, timeout=60)
    # this interpreter's packages, pip among them
    borrowed = dict.fromkeys(sysconfig.get_paths()[kind] for kind in ("purelib", "platlib"))
    (env.site_packages() / "borrowed-packages.pth").write_text("".join(f"{path}\n" for path in borrowed))
    done = env.run(
        env.python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
        "--no-index", "--no-build-isolation", REPO,
    )  # fmt: skip
    assert done.returncode == 0, f"pip install {REPO} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return env


def installed_package(env: Environment) -> Path:
    done = env.run_python("import bspkit; print(bspkit.__file__)")
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip()).parent


def test_the_root_pyproject_has_the_metadata_of_python_pyproject() -> None:
    root = tomllib.loads((REPO / "pyproject.toml").read_text())
    package = tomllib.loads((REPO / "python" / "pyproject.toml").read_text())
    ours, theirs = root["project"], package["project"]
    assert set(theirs["classifiers"]) <= set(ours["classifiers"])
    differing = [k for k in theirs.keys() | ours.keys() if k != "classifiers" and ours.get(k) != theirs.get(k)]
    assert differing == [], f"pyproject.toml and python/pyproject.toml differ in {differing}"
    skbuild = root["tool"]["scikit-build"]
    assert skbuild["metadata"]["version"]["input"] == "python/bspkit/version.py"  # the one version
    assert skbuild["wheel"]["packages"] == ["python/bspkit"]
    assert skbuild["cmake"]["define"] == {"BSPKIT_PYTHON_WHEEL": "ON"}


@pytest.mark.slow  # the fresh environment and pip install: 5 s; the full tier runs it
def test_pip_install_puts_the_library_inside_the_package(installed: Environment) -> None:
    package = installed_package(installed)
    assert package.is_relative_to(installed.venv), f"bspkit imported from {package}, not the environment"
    library = package / "_lib" / "libbsp.so"
    assert sorted(p.name for p in library.parent.glob("libbsp*")) == ["libbsp.so"]
    done = installed.run_python(
        "import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); print(hasattr(lib, 'bsp_begin'), hasattr(lib, 'bsp_sync'))",
        str(library),
    )
    assert (done.returncode, done.stdout) == (0, "True True\n"), done.stderr
    # the package's files as in python/bspkit, nothing left out, nothing more but _lib/
    sources = {p.relative_to(PACKAGE_SOURCES) for p in PACKAGE_SOURCES.rglob("*.py") if "__pycache__" not in p.parts}
    assert {p.relative_to(package) for p in package.rglob("*.py")} == sources
    assert (package / "py.typed").is_file()
    # the MPI plugin, when the release build found MPI (the wheel's build finds the same)
    if BUILD is not None and (BUILD / "lib" / "bspkit" / "libbspkit_mpi.so").is_file():
        assert (package / "_lib" / "bspkit" / "libbspkit_mpi.so").is_file()


@pytest.mark.slow  # the fresh environment and pip install: 5 s; the full tier runs it
def test_the_bspkit_command_of_the_environment(installed: Environment) -> None:
    done = installed.run(installed.venv / "bin" / "bspkit", "--version")
    assert (done.returncode, done.stdout) == (0, f"bspkit {bspkit.__version__}\n"), done.stderr


@pytest.mark.slow  # the fresh environment and pip install: 5 s; the full tier runs it
def test_bspkit_bsp_imports(installed: Environment) -> None:
    if not (PACKAGE_SOURCES / "bsp.py").is_file():
        pytest.skip("python/bspkit/bsp.py (BSPlib for Python, issue 42) is not written yet")
    done = installed.run_python("import bspkit, bspkit.bsp")
    assert done.returncode == 0, done.stderr


@pytest.mark.slow  # the fresh environment and pip install: 5 s; the full tier runs it
def test_a_bsp_program_runs_on_the_installed_library(installed: Environment) -> None:
    done = installed.run_python(RING, "3", env={"BSPKIT_BACKEND": "procs"})
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ring_lines(3)


@pytest.mark.slow  # the fresh environment and pip install: 5 s; the full tier runs it
def test_the_installed_library_finds_the_mpi_plugin_by_bspkit_plugin_dir(installed: Environment) -> None:
    plugin_dir = installed_package(installed) / "_lib" / "bspkit"
    if not (plugin_dir / "libbspkit_mpi.so").is_file():
        pytest.skip(missing_dependency("Open MPI", "the wheel has no MPI plugin: CMake found no MPI"))
    # No directory is compiled in (the wheel's build tree is gone): bspkit.bsp names it.
    done = installed.run_python(RING, "2", env={"BSPKIT_BACKEND": "mpi"})
    assert done.returncode == 1
    assert "could not be loaded (no plugin directory known)" in done.stderr
    bsprun = BUILD / "bin" / "bsprun" if BUILD else None
    if bsprun is None or not bsprun.is_file():
        pytest.skip("BSPKIT_BUILD_DIR is not set or has no bin/bsprun (the MPI launch)")
    done = installed.run(
        bsprun, "-b", "mpi", "-n", "2", installed.python, "-c", RING, "2", env={"BSPKIT_PLUGIN_DIR": str(plugin_dir)}
    )
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ring_lines(2)
