"""Another BSPlib (BSPonMPI, MulticoreBSP for C, LPF, the Oxford toolset, ...): how bspkit
builds its algorithm drivers and bspprobe against it, and how it starts them there.

The build is the portable one (cmake -DBSPKIT_PORTABLE=ON, docs/comparing-libraries.md): the
drivers on the library's bsp.h alone, compiled by its wrapper (--bspcc) or by a compiler with
its flags (--cc/--cflags/--libs), into a cache directory keyed by everything that decides the
binaries, so that two libraries (or two versions of one) never share a binary. A wrapper is
given to CMake as BSPKIT_PORTABLE_WRAPPER, and CMake runs it through
cmake/portable/wrapper-cc.sh: the peers' own wrappers (BSPonMPI's bspcc, LPF's lpfcc) sort
their arguments themselves and misread CMake's command lines (BSPonMPI's bspcc takes the word
after -MT for an input file). A run starts
through the library's launcher, a command line in which {p} stands for the number of
processes ('mpirun -n {p}'); an empty launcher runs the program directly and gives it -n P,
for libraries whose programs start their own threads (MulticoreBSP for C). Every result is
labelled with the library's name and version (`Library.label`).

scripts/build-peer.sh leaves a description of what it built (PEER_FILE) in its prefix;
--peer PREFIX reads it instead of the options one by one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bspkit.console import progress

PEER_FILE = "bspkit-peer.json"  # scripts/build-peer.sh writes it into its PREFIX
UNKNOWN_VERSION = "unknown"
# the bspkit-peer.json keys that name a Library's fields (name is the only one required)
PEER_KEYS = ("name", "version", "compiler", "cflags", "libs", "launcher")
# how build() configures; part of the cache key (2: wrappers through cmake/portable/wrapper-cc.sh)
BUILD_SCHEME = 2


class LibraryError(Exception):
    """The library's options do not make sense, or its portable build failed."""


@dataclass(frozen=True)
class Library:
    """Another BSPlib, as the user described it."""

    name: str  # e.g. bsponmpi
    version: str  # e.g. 1.1 or a commit; UNKNOWN_VERSION when not given
    compiler: str  # its compiler wrapper, or a plain compiler with cflags and libs
    cflags: str  # extra compiler flags, as a shell would split them
    libs: str  # link flags and libraries
    launcher: str  # a command line with {p}, or '' (the program starts its own processes)
    wrapper: bool  # compiler is the library's wrapper (--bspcc) rather than a plain compiler

    @property
    def label(self) -> str:
        """name@version: what the drivers' JSON, validate.json and the comparison call it."""
        return self.name if self.version == UNKNOWN_VERSION else f"{self.name}@{self.version}"

    def describe(self) -> dict[str, Any]:
        """The library as the results record it."""
        return {**asdict(self), "label": self.label}

    def probe_args(self) -> list[str]:
        """`bspkit probe`'s options that measure this library (filed under its name)."""
        args = ["--bspcc", self.compiler]  # the probe takes a plain compiler there too
        flags = " ".join(f for f in (self.cflags, self.libs) if f)
        if flags:
            args.append(f"--bspcc-flags={flags}")
        return [*args, "--launcher", self.launcher, "--library-name", self.name]

    def command(self, exe: Path, nprocs: int, args: list[str]) -> list[str]:
        """The command that runs exe on nprocs processes of this library."""
        if not self.launcher.strip():  # the program starts its own processes: p on its command line
            return [str(exe), "-n", str(nprocs), *args]
        return [*shlex.split(self.launcher.replace("{p}", str(nprocs))), str(exe), *args]

    def environment(self, nprocs: int) -> dict[str, str]:
        """What every run gets in its environment: P for libraries that read it (bspkit's
        BSPKIT_NPROCS, the Oxford toolset's BSP_NPROCS)."""
        return {"BSPKIT_NPROCS": str(nprocs), "BSP_NPROCS": str(nprocs)}


def bspkit_library() -> dict[str, Any]:
    """bspkit itself as the results record a library (its drivers run through bsprun)."""
    from bspkit.version import __version__

    return {"name": "bspkit", "version": __version__, "label": f"bspkit@{__version__}", "launcher": "bsprun"}


def _read_peer(prefix: str) -> dict[str, str]:
    path = Path(prefix) / PEER_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LibraryError(
            f"--peer {prefix}: no {PEER_FILE} there (scripts/build-peer.sh writes it into the prefix it installs to)"
        ) from None
    except (OSError, ValueError) as e:
        raise LibraryError(f"--peer {prefix}: cannot read {path}: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(data.get("compiler"), str):
        raise LibraryError(f'{path}: not a peer description (it needs at least "name" and "compiler")')
    return {k: str(data[k]) for k in PEER_KEYS if data.get(k) is not None} | {
        "wrapper": "1" if data.get("wrapper", True) else ""
    }


def library_from(
    *,
    bspcc: str | None = None,
    cc: str | None = None,
    cflags: str | None = None,
    libs: str | None = None,
    launcher: str | None = None,
    name: str | None = None,
    version: str | None = None,
    peer: str | None = None,
) -> Library | None:
    """The library the command-line options describe (None: bspkit's own, through bsprun).
    An option given beside --peer overrides the peer file's value."""
    if bspcc and cc:
        raise LibraryError("--bspcc and --cc exclude each other: a wrapper adds the library's flags itself")
    given = dict(_read_peer(peer)) if peer else {}
    if bspcc:
        given.update(compiler=bspcc, wrapper="1")
    elif cc:
        given.update(compiler=cc, wrapper="")
    elif not peer:
        if cflags or libs:
            raise LibraryError("--cflags and --libs go with --cc (a plain compiler) or --bspcc")
        if launcher is not None or name or version:
            raise LibraryError(
                "--launcher, --library-name and --library-version describe another BSPlib: give "
                "--bspcc, --cc or --peer too"
            )
        return None
    for key, value in (
        ("cflags", cflags),
        ("libs", libs),
        ("launcher", launcher),
        ("name", name),
        ("version", version),
    ):
        if value is not None:
            given[key] = value
    compiler = given["compiler"]
    if shutil.which(compiler) is None:
        raise LibraryError(f"the compiler {compiler!r} is not there (not a file, not on PATH)")
    if "launcher" not in given:
        raise LibraryError(
            "another BSPlib needs --launcher: the command that starts P processes, with {p} for P "
            "(e.g. 'mpirun -n {p}'), or '' for a library whose programs start their own (MulticoreBSP for C)"
        )
    if given["launcher"].strip() and "{p}" not in given["launcher"]:
        raise LibraryError(f"--launcher {given['launcher']!r} has no {{p}}: where does the number of processes go?")
    if given.get("wrapper") and Path(compiler).name == "lpfcc" and "-lbsplib" not in given.get("cflags", "").split():
        raise LibraryError(
            f"--bspcc {compiler}: LPF's lpfcc compiles BSPlib programs only with an engine and -lbsplib on every "
            "call: give --peer PREFIX or --bspcc PREFIX/bin/bspcc-ENGINE as scripts/build-peer.sh writes them "
            "(docs/peers.md)"
        )
    if "/" in compiler:  # cmake runs the compiler from the cache directory: no relative paths
        compiler = os.path.abspath(compiler)
    label = given.get("name") or default_name(compiler)
    if not all(c.isalnum() or c in "._+-" for c in label):
        raise LibraryError(f"--library-name {label!r}: letters, digits and ._+- only")
    return Library(
        name=label,
        version=given.get("version") or UNKNOWN_VERSION,
        compiler=compiler,
        cflags=given.get("cflags", ""),
        libs=given.get("libs", ""),
        launcher=given["launcher"],
        wrapper=bool(given.get("wrapper", "1")),
    )


# compiler names that say nothing of the library (BSPonMPI and MulticoreBSP both ship a bspcc)
GENERIC_COMPILERS = ("bspcc", "mpicc", "cc", "gcc", "clang")


def default_name(compiler: str) -> str:
    """The library's name when --library-name is not given: the compiler's file name, or for
    a generic one in PREFIX/bin/ the name of PREFIX (/opt/bsponmpi/bin/bspcc: bsponmpi)."""
    path = Path(compiler)
    if path.name in GENERIC_COMPILERS and path.parent.name == "bin" and path.parent.parent.name:
        return path.parent.parent.name
    return path.name


def cache_root() -> Path:
    """Where portable builds are kept: $BSPKIT_CACHE_DIR, else $XDG_CACHE_HOME/bspkit, else
    ~/.cache/bspkit."""
    env = os.environ.get("BSPKIT_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "bspkit"


def build_dir(lib: Library, root: Path) -> Path:
    """The cache directory of lib's portable build of the sources in root: keyed by the
    library, its compiler (the file it resolves to and its time) and the source tree."""
    resolved = shutil.which(lib.compiler) or lib.compiler
    try:
        stamp = os.stat(resolved).st_mtime_ns
    except OSError:
        stamp = 0
    # BUILD_SCHEME: a cache configured another way (a wrapper as CMake's compiler) is not reused
    key = json.dumps(
        [lib.describe(), os.path.realpath(resolved), stamp, str(root.resolve()), BUILD_SCHEME], sort_keys=True
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return cache_root() / "portable" / f"{lib.name}-{digest}"


def build(lib: Library, root: Path, targets: list[str]) -> Path:
    """Builds targets (bspalg-<name>, bspprobe) against lib in its cache directory and returns
    that directory; ninja rebuilds what the sources changed since."""
    out = build_dir(lib, root)
    if not (out / "CMakeCache.txt").is_file():
        progress(f"configuring the portable build for {lib.label} in {out}")
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(
            [
                "cmake",
                "-S",
                str(root),
                "-B",
                str(out),
                *gen,
                "-DCMAKE_BUILD_TYPE=Release",
                "-DBSPKIT_PORTABLE=ON",
                # a wrapper runs through cmake/portable/wrapper-cc.sh, which gives it every
                # argument as one word (BSPonMPI's bspcc takes the word after CMake's -MT for
                # an input file); a plain compiler is CMake's compiler itself
                f"-DBSPKIT_PORTABLE_WRAPPER={lib.compiler}" if lib.wrapper else f"-DCMAKE_C_COMPILER={lib.compiler}",
                f"-DBSPKIT_PORTABLE_CFLAGS={lib.cflags}",
                f"-DBSPKIT_PORTABLE_LIBS={lib.libs}",
                f"-DBSPKIT_PORTABLE_LIBRARY={lib.label}",
            ],
            f"configuring the portable build for {lib.label} (cmake)",
            out,
        )
    # a wrapper that still cannot build them: its compiler and flags are the way out
    hint = (
        f"if {lib.compiler} cannot build C programs for CMake, give the compiler it calls with --cc, --cflags "
        "and --libs instead (docs/comparing-libraries.md)"
        if lib.wrapper
        else ""
    )
    _run(
        ["cmake", "--build", str(out), "--target", *targets],
        f"building {', '.join(targets)} against {lib.label}",
        out,
        hint,
    )
    return out


def _run(cmd: list[str], what: str, out: Path, hint: str = "") -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise LibraryError(f"{what}: {cmd[0]} is not installed") from None
    if proc.returncode != 0:
        tail = "\n  ".join((proc.stdout + proc.stderr).strip().splitlines()[-12:])
        also = f"\n{hint}" if hint else ""
        raise LibraryError(f"{what} failed (the whole log: {shlex.join(cmd)}; the build is in {out}):\n  {tail}{also}")
