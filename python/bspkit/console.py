"""What every command shares for talking to the user: progress lines, the two kinds of error
(exit status 1 and 2) and writing an output file."""

from __future__ import annotations

import sys
from pathlib import Path


class Failure(Exception):
    """A failure (exit status 1) with a message for the user."""


class UsageError(Exception):
    """A usage error (exit status 2, argparse's convention) with a message for the user."""


def progress(msg: str) -> None:
    """A progress line on stderr (stdout keeps the commands' results)."""
    print(f"bspkit: {msg}", file=sys.stderr, flush=True)


def print_error(msg: str) -> None:
    print(f"bspkit: error: {msg}", file=sys.stderr)


def write_text(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise Failure(f"cannot write {path}: {e.strerror or e}") from None
