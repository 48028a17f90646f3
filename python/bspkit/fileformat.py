"""The stamp every JSON file bspkit writes carries (its format and the bspkit version that
wrote it: raw header, params.json, validate.json, a driver's run), and the one message a
reader gives when it meets a format it does not read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bspkit.version import __version__

# A JSON object as json.loads returns it: the files' records before a typed record reads them.
JsonObject = dict[str, Any]


def writer_version(data: Mapping[str, Any]) -> str:
    """The bspkit version that wrote a file ("bspkit_version"; the raw header: "version")."""
    v = data.get("bspkit_version") or data.get("version")
    return str(v) if v else "unknown (an older bspkit)"


def format_problem(data: Mapping[str, Any], kind: str, expected: int) -> str | None:
    """None when `data` is a `kind` file of format `expected`; else what is wrong, naming both
    versions (the file's format and writer, this bspkit's format and version)."""
    found = data.get("format")
    if found == expected:
        return None
    return (
        f"{kind} format {found!r} (written by bspkit {writer_version(data)}) is not supported: "
        f"this bspkit {__version__} reads {kind} format {expected}"
    )
