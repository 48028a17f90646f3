"""scripts/build-peer.sh: its help, its errors (one line, exit status 1) and, where a checkout
of a peer is given in $BSPKIT_PEER_SRC_<NAME>, a full build whose compiler command and launcher
must build and run the script's BSPlib check at p = 1, 2, 4 (docs/peers.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

SCRIPT = REPO / "scripts" / "build-peer.sh"
NAMES = ("bsponmpi", "multicorebsp", "lpf")
# files by which the script recognises each library's sources
MARKERS = {
    "bsponmpi": ("CMakeLists.txt", "bspcc.in", "bsprun.in", "include/bsp.h"),
    "multicorebsp": ("Makefile", "version.mk", "bspcc.in", "mcbsp.c"),
    "lpf": ("bootstrap.sh", "lpfrun.in", "lpfcc.in", "src/bsplib/"),
}
# the variants a full build must offer (LPF: mpirma only where MPI has unified windows)
VARIANTS = {"bsponmpi": {"msg", "rma"}, "multicorebsp": {"pthread"}, "lpf": {"pthread", "mpimsg"}}


def run(*args: str | Path, path: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    return subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env)


def one_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The run failed with status 1 and one error line on stderr; returns that line."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("build-peer.sh: error: "), lines[0]
    return lines[0]


def fake_sources(tmp_path: Path, name: str) -> Path:
    """A directory that has the files by which the script recognises NAME's sources."""
    src = tmp_path / f"{name}-src"
    for marker in MARKERS[name]:
        target = src / marker
        if marker.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("")
    return src


def tools_dir(tmp_path: Path, present: list[str], fakes: dict[str, str] | None = None) -> str:
    """A PATH of one directory with links to the system's PRESENT tools and scripts FAKES
    (name -> bash body), nothing else."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in present:
        found = shutil.which(tool)
        assert found, f"{tool} is not installed"
        (bin_dir / tool).symlink_to(found)
    for tool, body in (fakes or {}).items():
        (bin_dir / tool).write_text(f"#!/bin/bash\n{body}\n")
        (bin_dir / tool).chmod(0o755)
    return str(bin_dir)


# what the script runs before it looks for the build tools
BASICS = ["bash", "dirname", "realpath", "sed"]


def test_help_lists_every_library_and_option_and_exits_0() -> None:
    proc = run("--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: scripts/build-peer.sh [options] NAME SRC_DIR PREFIX")
    for name in NAMES:
        assert re.search(rf"^  {name} ", proc.stdout, re.MULTILINE), name
    options = set(re.findall(r"^  (--[a-z-]+)", proc.stdout, re.MULTILINE))
    assert options == {"--jobs", "--cmake", "--procs", "--timeout", "--no-check"}
    # each option the help lists is one the script takes: with it, the error is the NAME's
    for option, value in (("--jobs", "3"), ("--cmake", "cmake"), ("--procs", "2"), ("--timeout", "9")):
        assert "unknown NAME 'nope'" in one_error(run(option, value, "nope", "x", "y"))
    assert "unknown NAME 'nope'" in one_error(run("--no-check", "nope", "x", "y"))


def test_unknown_name_says_which_names_there_are(tmp_path: Path) -> None:
    line = one_error(run("oxtool", tmp_path, tmp_path / "prefix"))
    assert line == "build-peer.sh: error: unknown NAME 'oxtool' (one of: bsponmpi, multicorebsp, lpf)"
    assert not (tmp_path / "prefix").exists()


def test_missing_source_directory(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-checkout"
    line = one_error(run("bsponmpi", missing, tmp_path / "prefix"))
    assert line == f"build-peer.sh: error: source directory {missing} does not exist"
    assert not (tmp_path / "prefix").exists()


@pytest.mark.parametrize("name", NAMES)
def test_sources_of_another_library_are_refused(tmp_path: Path, name: str) -> None:
    other = fake_sources(tmp_path, "multicorebsp" if name != "multicorebsp" else "bsponmpi")
    line = one_error(run(name, other, tmp_path / "prefix"))
    assert "does not look like" in line and f"(no {MARKERS[name][0].rstrip('/')})" in line, line


def test_wrong_number_of_arguments_and_bad_values(tmp_path: Path) -> None:
    assert "expected NAME SRC_DIR PREFIX, got 2 argument(s)" in one_error(run("lpf", tmp_path))
    assert "unknown option --fast" in one_error(run("--fast", "lpf", tmp_path, tmp_path / "p"))
    assert "--jobs must be a positive integer, not '0'" in one_error(run("--jobs", "0", "lpf", tmp_path, tmp_path))
    assert "--procs: 'x' is not a positive integer" in one_error(run("--procs", "1 x", "lpf", tmp_path, tmp_path))
    assert "--timeout needs a value" in one_error(run("--timeout"))


def test_nothing_of_a_peer_goes_into_the_repository(tmp_path: Path) -> None:
    src = fake_sources(tmp_path, "bsponmpi")
    inside = REPO / "peer-build-test-prefix"
    line = one_error(run("bsponmpi", src, inside))
    assert f"PREFIX {inside} is inside this repository" in line
    assert not inside.exists()
    line = one_error(run("bsponmpi", REPO / "docs", tmp_path / "prefix"))
    assert "is inside this repository" in line and "not ours to vendor" in line
    line = one_error(run("bsponmpi", src, src / "install"))
    assert f"PREFIX {src / 'install'} is inside the source directory" in line


def test_a_missing_tool_names_the_package_to_install(tmp_path: Path) -> None:
    src = fake_sources(tmp_path, "multicorebsp")
    path = tools_dir(tmp_path, BASICS)  # no make
    line = one_error(run("multicorebsp", src, tmp_path / "prefix", path=path))
    assert line == (
        "build-peer.sh: error: make not found in PATH; MulticoreBSP for C needs it (Debian/Ubuntu: apt-get install make)"
    )


def test_bsponmpi_needs_mpi(tmp_path: Path) -> None:
    src = fake_sources(tmp_path, "bsponmpi")
    path = tools_dir(tmp_path, BASICS, {"make": "exit 0", "gcc": "exit 0", "g++": "exit 0"})
    line = one_error(run("bsponmpi", src, tmp_path / "prefix", path=path))
    assert line.endswith("mpicc not found in PATH; BSPonMPI needs it (Debian/Ubuntu: apt-get install libopenmpi-dev)")


def test_lpf_says_which_cmake_it_needs(tmp_path: Path) -> None:
    src = fake_sources(tmp_path, "lpf")
    fakes = dict.fromkeys(("make", "gcc", "g++", "mpicc", "mpicxx", "mpirun"), "exit 0")
    fakes["cmake"] = 'echo "cmake version 3.25.1"'
    path = tools_dir(tmp_path, BASICS, fakes)
    line = one_error(run("lpf", src, tmp_path / "prefix", path=path))
    assert "LPF needs CMake 3.29 or newer, cmake is 3.25.1: give one with --cmake PATH" in line
    line = one_error(run("--cmake", tmp_path / "none", "lpf", src, tmp_path / "prefix", path=path))
    assert f"--cmake: {tmp_path / 'none'} is not an executable" in line


def peer_source(name: str) -> Path | None:
    value = os.environ.get(f"BSPKIT_PEER_SRC_{name.upper()}")
    return Path(value) if value else None


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_full_build_runs_the_check(name: str, tmp_path: Path) -> None:
    """Builds the peer from $BSPKIT_PEER_SRC_<NAME> (minutes); the script's check must pass for
    every variant at p = 1, 2, 4, and each variant's bspkit-peer.json must describe it as
    bspkit's --peer reads it (the default variant's also in PREFIX)."""
    src = peer_source(name)
    if src is None:
        pytest.skip(f"no {name} checkout: set BSPKIT_PEER_SRC_{name.upper()} to one (docs/peers.md) to build it")
    cmake = os.environ.get("BSPKIT_PEER_CMAKE")  # LPF needs CMake 3.29 or newer
    prefix = tmp_path / name
    args = (["--cmake", cmake] if cmake else []) + [name, str(src), str(prefix)]
    proc = run(*args, timeout=3600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    variants = {d.name for d in (prefix / "variants").iterdir()}
    assert VARIANTS[name] <= variants, variants
    for variant in variants:
        peer = json.loads((prefix / "variants" / variant / "bspkit-peer.json").read_text())
        assert peer["name"] == (name if name == "multicorebsp" else f"{name}-{variant}")
        assert re.fullmatch(r"\d+\.\d+\.\d+(\+[0-9a-f]{7}(\.modified)?)?", peer["version"]), peer
        assert Path(peer["compiler"]).is_file() and os.access(peer["compiler"], os.X_OK), peer
        launcher = f"{prefix}/bin/launch-{variant} -n {{p}}"
        assert peer["launcher"] == ("" if name == "multicorebsp" else launcher), peer
        assert peer["wrapper"] is True and peer["variant"] == variant, peer
        for p in (1, 2, 4):
            assert f"  {variant} p={p}: ok" in proc.stdout, proc.stdout
    default = json.loads((prefix / "bspkit-peer.json").read_text())
    assert default["variant"] == ("rma" if name == "bsponmpi" else "pthread"), default
    # what the check's processes printed: every process got its neighbour's put and message
    log = (prefix / "logs" / f"check-{default['variant']}.p4.log").read_text()
    assert len(re.findall(r"^check: process [0-3] of 4: ok ", log, re.MULTILINE)) == 4, log
