"""Where bspkit's programs are: bsprun, bspprobe and the algorithm drivers (bspalg-*).

One rule for every command that starts them (probe, run, validate), first match wins:
  1. --build-dir DIR, else $BSPKIT_BUILD_DIR: that build tree;
  2. the source tree this package runs from ($BSPKIT_SOURCE_DIR, or the checkout around
     python/bspkit): its build/;
  3. an installed bspkit (`cmake --install BUILD --prefix P`): the program next to the bsprun
     found on PATH (P/bin), else the program itself on PATH.
A build tree is (re)built first when the source tree is known and the program is missing or
older than the sources; an installed bspkit, or a build tree without sources, never is.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from bspkit import results
from bspkit.console import Failure, progress
from bspkit.measure import probe as pr

# where a program lies inside a build tree; the drivers are in bin/ beside bsprun
BUILD_TREE_PATHS = {"bsprun": "bin/bsprun", "bspprobe": "probe/bspprobe"}
HINT = "build bspkit, give --build-dir, or put the bin/ of an installed bspkit on PATH"


@dataclass(frozen=True)
class Origin:
    """Where the programs come from: a build tree (with its sources, if known) or an installation."""

    build_dir: Path | None  # None: an installed bspkit
    source: Path | None
    why: str  # how the build tree was chosen, for messages

    @property
    def installed(self) -> bool:
        return self.build_dir is None


def origin(build_dir_arg: str | None) -> Origin:
    root = results.source_tree()
    if build_dir_arg:
        return Origin(Path(build_dir_arg), root, "--build-dir")
    env = os.environ.get("BSPKIT_BUILD_DIR")
    if env:
        return Origin(Path(env), root, "$BSPKIT_BUILD_DIR")
    if root is not None:
        return Origin(root / "build", root, f"the build of the source tree {root}")
    return Origin(None, None, "installed")


def _in_build_tree(build_dir: Path, name: str) -> Path:
    return build_dir / BUILD_TREE_PATHS.get(name, f"bin/{name}")


def _stale(exe: Path, name: str, source: Path) -> bool:
    """Missing, or (a compiled program) older than the sources. bsprun is a configured
    script that CMake rewrites only when it changes, so only its presence counts."""
    if not exe.is_file():
        return True
    return name != "bsprun" and exe.stat().st_mtime < pr.newest_source(source)


def installed_program(name: str) -> tuple[Path | None, list[str]]:
    """(the program, where it was looked for) in an installed bspkit."""
    looked = []
    bsprun = shutil.which("bsprun")
    if bsprun is not None:
        beside = Path(bsprun).resolve().parent / name
        if beside.is_file() and os.access(beside, os.X_OK):
            return beside, looked
        looked.append(f"next to bsprun ({beside.parent})")
    elif name != "bsprun":
        looked.append("next to bsprun (no bsprun on PATH)")
    found = shutil.which(name)
    if found is not None:
        return Path(found), looked
    looked.append("on PATH")
    return None, looked


def find(name: str, build_dir_arg: str | None = None) -> Path:
    """The program `name` (bsprun, bspprobe or a driver such as bspalg-inprod), building the
    build tree first where that is how it is made; Failure names every place looked at."""
    where = origin(build_dir_arg)
    if where.build_dir is None:
        exe, looked = installed_program(name)
        if exe is None:
            raise Failure(f"cannot find {name}: no bspkit source tree, not {' nor '.join(looked)}; {HINT}")
        return exe
    exe = _in_build_tree(where.build_dir, name)
    if where.source is not None and _stale(exe, name, where.source):
        progress(f"{name} in {where.build_dir} is missing or older than the sources: building")
        try:
            pr.build(where.source, where.build_dir)
        except pr.ProbeError as e:
            raise Failure(str(e)) from None
    if not exe.is_file():
        raise Failure(f"cannot find {name}: {exe} does not exist ({where.why}); {HINT}")
    return exe
