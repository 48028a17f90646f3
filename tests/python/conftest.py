"""Shared helpers for the bspkit Python tests."""

from __future__ import annotations

import base64
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYDIR = REPO / "python"
if str(PYDIR) not in sys.path:
    sys.path.insert(0, str(PYDIR))

# The build the tests run bspkit's programs from ($BSPKIT_BUILD_DIR); None when it is not set.
BUILD = Path(os.environ["BSPKIT_BUILD_DIR"]) if os.environ.get("BSPKIT_BUILD_DIR") else None


def built_program(name: str) -> Path | None:
    """<build>/bin/<name>, or None without a build directory."""
    return BUILD / "bin" / name if BUILD else None


def needs_programs(*names: str, hint: str = "") -> pytest.MarkDecorator:
    """Skips unless the build has bin/<name> for every name (hint: why one may be missing)."""
    missing = [n for n in names if not ((path := built_program(n)) and path.is_file())]
    return pytest.mark.skipif(
        bool(missing),
        reason=f"BSPKIT_BUILD_DIR is not set or has no {' and '.join('bin/' + n for n in missing)}{hint}",
    )


def run_bspkit(*args: str, timeout: float = 120, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Runs `python -m bspkit ARGS` with this interpreter; returns the completed process."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(PYDIR) + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("MPLBACKEND", "Agg")
    if env:
        e.update(env)
    return subprocess.run(
        [sys.executable, "-m", "bspkit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=e,
    )


PNG_RE = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


def report_pngs(html: str) -> list[bytes]:
    """The decoded PNG images embedded in a report; fails if one is not a valid PNG."""
    from PIL import Image

    out = []
    for b64 in PNG_RE.findall(html):
        data = base64.b64decode(b64, validate=True)
        assert data[:8] == b"\x89PNG\r\n\x1a\n", "embedded image is not a PNG"
        with Image.open(io.BytesIO(data)) as im:
            im.verify()
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            assert im.size[0] > 200 and im.size[1] > 150
        out.append(data)
    return out


def assert_self_contained(html: str) -> None:
    assert "<html" in html and html.rstrip().endswith("</html>")
    # every src= is an embedded data: URL; no stylesheets or scripts from elsewhere
    for m in re.finditer(r'\bsrc\s*=\s*["\']?([^"\' >]*)', html):
        assert m.group(1).startswith("data:"), f"external src: {m.group(1)[:80]}"
    assert not re.search(r"<link\b[^>]*\bhref=", html)
    assert "<script" not in html


def expected_plots(params: dict) -> int:
    """One g surface per primitive/pattern, plus latency, f, As total exchange, validation, memcpy."""
    n = len(params["g"])
    n += bool(params["l_detail"] or params["as"]["tests"])
    n += any(d.get("s_per_op") for d in params["f_detail"].values())
    n += bool(params["as"]["total_exchange"])
    n += bool(params["validation"]["used"])
    n += bool(
        params["memcpy_detail"] and params["memcpy_s_per_word"] and any(e.get("predict") for e in params["g"].values())
    )
    return n


def check_report(path: Path, params: dict) -> str:
    html = path.read_text()
    assert_self_contained(html)
    pngs = report_pngs(html)
    assert len(pngs) == expected_plots(params)
    return html


@pytest.fixture
def synth_run(tmp_path: Path) -> Path:
    """A run directory with a synthetic raw.jsonl (default SynthSpec)."""
    from synth import write_synthetic

    d = tmp_path / "run1"
    write_synthetic(d / "raw.jsonl")
    return d
