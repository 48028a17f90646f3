"""What every command shares for talking to the user: progress lines, the two kinds of error
(exit status 1 and 2), how a program ended, and writing an output file."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from pathlib import Path


class Failure(Exception):
    """A failure (exit status 1) with a message for the user."""


class UsageError(Exception):
    """A usage error (exit status 2, argparse's convention) with a message for the user."""


def progress(msg: str) -> None:
    """A progress line on stderr (stdout keeps the commands' results)."""
    print(f"bspkit: {msg}", file=sys.stderr, flush=True)


def print_error(msg: str, prog: str = "bspkit") -> None:
    """One error line, `PROG: error: MSG`, as argparse writes its own: PROG is the
    subcommand's (`bspkit probe`), plain `bspkit` for the top level's errors."""
    print(f"{prog}: error: {msg}", file=sys.stderr)


def describe_exit(returncode: int) -> str:
    """How a program ended, for a message: 'exit status 3', 'killed by SIGSEGV (...)'.

    A negative status is a signal (subprocess' convention); 128 + N is a shell's or mpirun's
    report of one. SIGKILL is almost always the kernel's out-of-memory killer."""
    signum = -returncode if returncode < 0 else returncode - 128 if 128 < returncode < 160 else None
    if signum is None:
        return f"exit status {returncode}"
    try:
        name = signal.Signals(signum).name
    except ValueError:
        return f"exit status {returncode}"
    why = {
        "SIGKILL": "killed, most likely out of memory",
        "SIGSEGV": "a crash: invalid memory access",
        "SIGBUS": "a crash: bad memory access",
        "SIGABRT": "aborted",
        "SIGFPE": "a crash: arithmetic error",
        "SIGTERM": "terminated",
        "SIGINT": "interrupted",
    }.get(name)
    return f"killed by {name}" + (f" ({why})" if why else "")


def write_text(path: Path, text: str) -> None:
    """Writes the file whole or not at all: into a temporary file beside it, then renamed over
    it, so an interrupted or failed write never leaves half a file (or loses the old one)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as e:
        raise Failure(f"cannot write {path}: {e.strerror or e}") from None


def check_writable(path: Path, what: str) -> None:
    """Fails now, before a long run, when `path` could not be written afterwards (write_text
    renames into its directory, so that directory, or the nearest one that exists, must be
    writable)."""
    if path.is_dir():
        raise Failure(f"cannot write {what} {path}: it is a directory")
    target = path.parent
    while not target.exists():
        target = target.parent
    if not target.is_dir() or not os.access(target, os.W_OK | os.X_OK):
        raise Failure(f"cannot write {what} {path}: {target} is not a writable directory")


def check_writable_dir(path: Path, what: str) -> None:
    """Fails now, before a long run, when the directory `path` (made later if missing) could
    not be written: the nearest part of it that exists must be a directory this process may
    write into (root may write anywhere but on a read-only mount: that error comes at
    make_dir)."""
    target = path
    while not target.exists() and target != target.parent:
        target = target.parent
    if not target.is_dir():
        raise Failure(f"cannot write {what} {path}: {target} is not a directory")
    if not os.access(target, os.W_OK | os.X_OK):
        raise Failure(f"cannot write {what} {path}: {target} is not writable")


def make_dir(path: Path, what: str) -> None:
    """mkdir -p, its error told as a failure."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise Failure(f"cannot make {what} {path}: {e.strerror or e}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
