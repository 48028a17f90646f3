"""Source locations of code addresses: the `bsp_sync` call sites of a superstep profile
(docs/profile-format.md) resolved to file:line with binutils' `addr2line`.

A site is (object path, offset from the object's load address) and the address is a return
address, so the call is the instruction before it: offset - 1 is looked up. A
position-independent object (ELF type DYN: shared libraries, PIE executables) is looked up
at the offset; a fixed-address executable (ELF type EXEC) at load address + offset. All
addresses of one object go to one `addr2line` run. Where there is no addr2line, no object
file or no debug information, a site reads "object+0xoffset", with the function's name
where the symbol table has it.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ET_EXEC = 2  # ELF e_type of a fixed-address executable
ET_DYN = 3  # ... of a position-independent object

ADDR2LINE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class SiteKey:
    """One call site: the object's path and load address, and the offset recorded."""

    path: str
    base: int
    offset: int


@dataclass(frozen=True)
class Site:
    """What is known about a site: file and line where debug information gives them, the
    function where the symbol table does."""

    key: SiteKey
    file: str | None = None
    line: int | None = None
    function: str | None = None

    def fallback(self) -> str:
        """object+0xoffset: the object's file name and the offset recorded."""
        return f"{Path(self.key.path).name}+{self.key.offset:#x}"

    def short(self) -> str:
        """file:line (basename) where known, else object+0xoff; with the function."""
        where = f"{Path(self.file).name}:{self.line}" if self.file and self.line else self.fallback()
        return f"{where} ({self.function})" if self.function else where

    def to_json(self) -> dict[str, object]:
        return {
            "object": self.key.path,
            "offset": f"{self.key.offset:#x}",
            "file": self.file,
            "line": self.line,
            "function": self.function,
            "text": self.short(),
        }


def elf_type(path: str | Path) -> int | None:
    """e_type of an ELF file (ET_EXEC, ET_DYN, ...), None when it is not one or cannot be read."""
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return None
    if len(head) < 18 or head[:4] != b"\x7fELF" or head[5] not in (1, 2):
        return None
    return int.from_bytes(head[16:18], "little" if head[5] == 1 else "big")


def lookup_address(key: SiteKey, etype: int | None) -> int:
    """The address addr2line wants for a site: the call (offset - 1), plus the load address
    for a fixed-address executable."""
    call = max(key.offset - 1, 0)
    return key.base + call if etype == ET_EXEC else call


def _parse_location(text: str) -> tuple[str | None, int | None]:
    """addr2line's "file:line" (maybe with " (discriminator N)"); "??:0" and "??:?" are unknown."""
    text = text.split(" (discriminator")[0].strip()
    file, _, line = text.rpartition(":")
    if not file or file == "??" or not line.isdigit() or int(line) == 0:
        return None, None
    return file, int(line)


def addr2line_program() -> str | None:
    return shutil.which("addr2line")


def _run_addr2line(program: str, path: str, addresses: list[int]) -> list[tuple[str | None, str | None, int | None]]:
    """(function, file, line) per address from one addr2line run; unknowns as None, all None
    when addr2line fails."""
    unknown: list[tuple[str | None, str | None, int | None]] = [(None, None, None)] * len(addresses)
    cmd = [program, "-f", "-C", "-e", path, *(f"{a:#x}" for a in addresses)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=ADDR2LINE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return unknown
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or len(lines) != 2 * len(addresses):
        return unknown
    out: list[tuple[str | None, str | None, int | None]] = []
    for i in range(len(addresses)):
        function = lines[2 * i].strip()
        file, line = _parse_location(lines[2 * i + 1])
        out.append((None if function in ("", "??") else function, file, line))
    return out


def resolve(keys: Iterable[SiteKey], program: str | None = None) -> dict[SiteKey, Site]:
    """Every site resolved as far as this machine can: one addr2line run per object file.
    program: the addr2line to run (default: the one on PATH; "" for none)."""
    exe = addr2line_program() if program is None else program
    by_object: dict[str, list[SiteKey]] = {}
    for key in set(keys):
        by_object.setdefault(key.path, []).append(key)
    out: dict[SiteKey, Site] = {}
    for path, group in by_object.items():
        group.sort(key=lambda k: (k.offset, k.base))
        etype = elf_type(path)
        if not exe or etype not in (ET_EXEC, ET_DYN):
            out.update({k: Site(k) for k in group})
            continue
        addresses = [lookup_address(k, etype) for k in group]
        # the same address may come from several processes (each with its own load address)
        unique = sorted(set(addresses))
        found = dict(zip(unique, _run_addr2line(exe, path, unique), strict=True))
        for key, address in zip(group, addresses, strict=True):
            function, file, line = found[address]
            out[key] = Site(key, file, line, function)
    return out


def describe(sites: Mapping[SiteKey, Site], keys: Iterable[SiteKey | None]) -> str:
    """The sites of one superstep over the processes, most frequent first: one site where
    all processes synced at the same call, else "a.c:1 (2 processes), b.c:9 (1)"."""
    per_key: dict[SiteKey | None, int] = {}
    for key in keys:
        per_key[key] = per_key.get(key, 0) + 1
    counts: dict[str, int] = {}
    for key, n in per_key.items():  # keys differing only in their load address read the same
        text = sites[key].short() if key is not None else "unknown"
        counts[text] = counts.get(text, 0) + n
    if len(counts) == 1:
        return next(iter(counts))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{text} ({n})" for text, n in ranked)
