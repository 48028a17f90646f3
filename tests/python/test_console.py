"""bspkit.console: how a program's end is told (signals by name), files written whole or not
at all, and the check that an output can be written before a long run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bspkit import console
from bspkit.console import Failure, check_writable, describe_exit, write_text


@pytest.mark.parametrize(
    "status, said",
    [
        (0, "exit status 0"),
        (3, "exit status 3"),
        (-9, "killed by SIGKILL (killed, most likely out of memory)"),
        (137, "killed by SIGKILL (killed, most likely out of memory)"),  # a shell's or mpirun's 128 + 9
        (-11, "killed by SIGSEGV (a crash: invalid memory access)"),
        (-6, "killed by SIGABRT (aborted)"),
        (-10, "killed by SIGUSR1"),
        (200, "exit status 200"),
    ],
)
def test_describe_exit(status: int, said: str) -> None:
    assert describe_exit(status) == said


def test_write_text_replaces_the_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "sub" / "validate.json"
    write_text(f, "first\n")
    assert f.read_text() == "first\n" and oct(f.stat().st_mode & 0o777) == oct(0o666 & ~_umask())

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(console.os, "replace", broken_replace)
    with pytest.raises(Failure, match=r"cannot write .*validate.json: No space left on device"):
        write_text(f, "second, cut short\n")
    assert f.read_text() == "first\n"  # the old file is kept whole
    assert [p.name for p in f.parent.iterdir()] == ["validate.json"]  # and no temporary file is left


def test_check_writable(tmp_path: Path) -> None:
    check_writable(tmp_path / "new" / "deeper" / "x.json", "--json")  # made when written: fine
    with pytest.raises(Failure, match="it is a directory"):
        check_writable(tmp_path, "--json")
    (tmp_path / "file").write_text("")
    with pytest.raises(Failure, match="is not a writable directory"):
        check_writable(tmp_path / "file" / "x.json", "--json")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
