"""Building and running bspprobe (`bspkit probe`)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bspkit.console import describe_exit, progress

# how much of a raw file's end is read at first to find its last line (doubled while that line is longer)
_TAIL_BYTES = 1 << 16

SOURCE_DIRS = ("probe", "src", "include", "tools", "cmake", "algorithms")
BUILD_INPUT_SUFFIXES = (".c", ".h", ".txt", ".cmake", ".in", ".sh")


class ProbeError(Exception):
    """Building or running bspprobe failed."""


# `bspkit probe --suites`: each suite is a set of bspprobe sections (bspprobe --only).
SUITES: dict[str, tuple[str, ...]] = {
    "bsp": ("f", "memcpy", "hw", "l", "g", "validation", "as"),
    "mem": ("mem",),
    "pp": ("pp",),
    "disk": ("disk",),
}


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def newest_source(root: Path) -> float:
    newest = 0.0
    for d in SOURCE_DIRS:
        base = root / d
        if not base.is_dir():
            continue
        for dirpath, _dirs, files in os.walk(base):
            for fn in files:
                if not fn.endswith(BUILD_INPUT_SUFFIXES):
                    continue  # a README or a Python test changes no binary
                with contextlib.suppress(OSError):  # removed while we walk: it cannot be newer
                    newest = max(newest, (Path(dirpath) / fn).stat().st_mtime)
    for cm in root.glob("CMakeLists.txt"):
        newest = max(newest, cm.stat().st_mtime)
    return newest


def _run_checked(cmd: list[str], what: str, **kw: object) -> None:
    progress(f"{what}: {shlex.join(cmd)}")
    try:
        # the tools' output is progress: it goes to stderr, stdout keeps bspkit's summary
        rc = subprocess.run(cmd, stdout=sys.stderr, **kw).returncode  # type: ignore[call-overload]
    except FileNotFoundError:
        raise ProbeError(f"{what}: cannot run {cmd[0]!r}: not found") from None
    if rc != 0:
        raise ProbeError(f"{what} failed ({describe_exit(rc)})")


def build(root: Path, build_dir: Path) -> None:
    """Configures (once, Release, Ninja) and builds bspkit in build_dir."""
    if not (build_dir / "CMakeCache.txt").is_file():
        _run_checked(
            ["cmake", "-S", str(root), "-B", str(build_dir), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"],
            "configuring",
        )
    _run_checked(["cmake", "--build", str(build_dir)], "building")
    if not (build_dir / "probe" / "bspprobe").is_file():
        raise ProbeError(f"the build did not produce {build_dir / 'probe' / 'bspprobe'}")


@dataclass
class ProbeRun:
    """What `bspkit probe` will run."""

    command: list[str]
    env: dict[str, str] = field(default_factory=dict)

    def run(self) -> None:
        env = dict(os.environ)
        env.update(self.env)
        shown = " ".join(f"{k}={v}" for k, v in self.env.items())
        progress(f"running: {shown + ' ' if shown else ''}{shlex.join(self.command)}")
        try:
            rc = subprocess.run(self.command, env=env, stdout=sys.stderr).returncode
        except FileNotFoundError:
            raise ProbeError(f"cannot run {self.command[0]!r}: not found") from None
        except PermissionError:
            raise ProbeError(f"cannot run {self.command[0]!r}: permission denied") from None
        if rc != 0:
            raise ProbeError(f"bspprobe failed ({describe_exit(rc)}; its messages are above)")


def probe_command(
    binary: Path,
    raw: Path,
    nprocs: int,
    backend: str,
    bsprun: Path | None,
    launcher: str | None,
    quick: bool,
    library_name: str | None,
    extra: list[str],
    hostfile: Path | None = None,
) -> ProbeRun:
    """The command line: through bsprun (bspkit builds; on the hosts of hostfile, if given), a
    user launcher, or directly."""
    args = [str(binary), "--output", str(raw)]
    if quick:
        args.append("--quick")
    if library_name:
        args += ["--library-name", library_name]
    args += extra
    env = {"BSPKIT_NPROCS": str(nprocs), "BSP_NPROCS": str(nprocs)}
    if launcher is not None and launcher.strip():
        pre = [a.replace("{p}", str(nprocs)) for a in shlex.split(launcher)]
        return ProbeRun(pre + args, env)
    if launcher is not None:  # '': the program starts its own processes, P on its command line
        return ProbeRun(args[:1] + ["-n", str(nprocs)] + args[1:], env)
    if bsprun is not None:
        hosts = ["--hostfile", str(hostfile)] if hostfile else []
        return ProbeRun([str(bsprun), "-n", str(nprocs), "-b", backend, *hosts] + args, {})
    return ProbeRun(args, env)


@dataclass(frozen=True)
class RawEnd:
    """How a raw-sample file ends: bspprobe writes its footer last, so a file without one is
    a run that was stopped (killed, interrupted, out of disk) before its end."""

    whole: bool  # the last line is a whole JSON record (not cut in the middle of a write)
    footer: bool  # ... and it is the footer: bspprobe finished

    @property
    def finished(self) -> bool:
        return self.whole and self.footer


def raw_end(raw: Path) -> RawEnd:
    """Reads the last line of a raw file (only the file's end: the samples are not parsed)."""
    with raw.open("rb") as f:
        size = f.seek(0, os.SEEK_END)
        chunk = _TAIL_BYTES
        while True:
            start = max(0, size - chunk)
            f.seek(start)
            lines = f.read().rstrip().split(b"\n")
            if len(lines) > 1 or start == 0:  # the last line begins inside what was read
                break
            chunk *= 2
    last = lines[-1].strip()
    if not last:
        return RawEnd(whole=False, footer=False)
    try:
        rec = json.loads(last)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return RawEnd(whole=False, footer=False)
    return RawEnd(whole=True, footer=isinstance(rec, dict) and rec.get("type") == "footer")


def record_counts(raw: Path) -> dict[str, int]:
    """The whole records of a raw file by type, in the order first seen (lines that are not
    JSON records are left out)."""
    counts: dict[str, int] = {}
    with raw.open("rb") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except (UnicodeDecodeError, json.JSONDecodeError):
                continue
            if isinstance(rec, dict) and isinstance(rec.get("type"), str):
                counts[rec["type"]] = counts.get(rec["type"], 0) + 1
    return counts


def unfinished(raw: Path) -> str | None:
    """What the raw file of a run that did not finish lacks and what it holds, for a message;
    None when it finished, or when it does not begin with bspprobe's header (not a raw file:
    its reader, bspkit.measure.rawdata, says what is wrong)."""
    with raw.open("rb") as f:
        first = f.readline()
    try:
        header = json.loads(first)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(header, dict) or header.get("type") != "header":
        return None
    end = raw_end(raw)
    if end.finished:
        return None
    missing = [] if end.whole else ["its last line is cut short (not JSON)"]
    missing.append("no footer record (bspprobe writes it last)")
    counts = record_counts(raw)
    if not counts.get("g"):
        missing.append("no g records")
    held = ", ".join(f"{n} {t}" for t, n in counts.items()) or "no whole record"
    return f"the run did not finish: {', '.join(missing)}; it holds {held}"
