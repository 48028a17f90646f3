"""Shared helpers for the bspkit Python tests."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from html import unescape as html_unescape
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYDIR = REPO / "python"
if str(PYDIR) not in sys.path:
    sys.path.insert(0, str(PYDIR))


def pytest_configure(config: pytest.Config) -> None:
    """The markers of the test tiers (docs/testing.md)."""
    config.addinivalue_line("markers", "slow: takes seconds; the quick tier (-m 'not slow') leaves it out")
    config.addinivalue_line(
        "markers", "probe_run: runs the built bspprobe; ctest runs each as probe.<case>.<backend>.p<P>"
    )


# ------------------------------------------------- what scripts/setup.sh installs
#
# A test that cannot run without one of these skips with the reason missing_dependency()
# gives, and only that way. Under BSPKIT_REQUIRE_DEPS=1 (run-tests.sh sets it: it ran
# scripts/setup.sh first, so everything below must be there) such a skip is a failure
# (pytest_runtest_makereport below); every other skip (not root, no network namespaces, a
# peer's checkout not given) stays a skip.

SETUP_DEPENDENCIES: dict[str, str] = {
    # name: what the tests need of it (scripts/setup.sh's Debian package)
    "Open MPI": "mpirun and mpicc, and the mpi and mpi-rma back ends built with them (openmpi-bin, libopenmpi-dev)",
    "OpenBLAS": "cblas.h and libopenblas: the probe's BLAS kernels, the matrix products and LU (libopenblas-dev)",
    "a C compiler": "cc (build-essential)",
    "binutils": "addr2line, to name the sync sites of a profile (binutils, with build-essential)",
    "Chromium": "headless chromium, to check a report in a real browser (chromium)",
    "clang-format": "the C style check (clang-format)",
    "ruff": "the Python style check (.venv: python/requirements.txt)",
    "scikit-build-core": "the build back end of pip install . (.venv: python/requirements.txt)",
    "fio": "the disk suite's peer (fio)",
    "ScaLAPACK": "pdgetrf, the LU peer (libscalapack-openmpi-dev)",
    "TBB": "parallel_sort, a peer of the radix sort (libtbb-dev)",
    "Boost": "spreadsort, a peer of the radix sort (libboost-dev)",
    "iproute2": "ip and tc, for the emulated cluster (iproute2)",
    "util-linux": "unshare, nsenter, taskset and setpriv, for the emulated cluster (util-linux)",
}
DEPENDENCY_SKIP = "missing dependency"  # how every such reason begins: "missing dependency NAME: ..."


def missing_dependency(name: str, detail: str = "") -> str:
    """The skip reason of a test that needs `name` (a key of SETUP_DEPENDENCIES), with what
    exactly is missing; a name not there is a KeyError (at import, where the test defines it)."""
    needed = SETUP_DEPENDENCIES[name]
    return f"{DEPENDENCY_SKIP} {name}: {detail or needed} (scripts/setup.sh installs it)"


def dependency_of(reason: str) -> str | None:
    """The dependency a skip reason names when missing_dependency() made it, else None."""
    if not reason.startswith(DEPENDENCY_SKIP + " "):
        return None
    name = reason[len(DEPENDENCY_SKIP) + 1 :].split(":", 1)[0]
    return name if name in SETUP_DEPENDENCIES else None


def require_dependencies() -> bool:
    """BSPKIT_REQUIRE_DEPS=1: a skip for a missing dependency of setup.sh's fails the test."""
    return os.environ.get("BSPKIT_REQUIRE_DEPS", "") == "1"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # noqa: ANN201 (a generator)
    report = yield
    if report.skipped and not hasattr(report, "wasxfail") and require_dependencies():
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        name = dependency_of(reason)
        if name is not None:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} would be skipped for a missing dependency, which BSPKIT_REQUIRE_DEPS=1 "
                f"(run-tests.sh) does not allow: {reason}. Run scripts/setup.sh, which installs {name}; "
                "BSPKIT_REQUIRE_DEPS=0 lets the test skip."
            )
    return report


# Open MPI reads its settings from the environment (OMPI_MCA_*, and OMPI_*, PMIX_*, PRTE_*, PMI_*
# of a job it runs in) and from ~/.openmpi/mca-params.conf: a user's
# OMPI_MCA_rmaps_base_oversubscribe=1 lets 2 processes onto a host with one slot, and a shell
# inside an MPI job makes bspkit's programs think they are ranks of it. The tests run MPI as
# bspkit does on a machine set up by scripts/setup.sh: without any of them but, as root, the
# pair that lets root run mpirun. tests/mpi_env.cmake.in does the same for ctest.
MPI_ENV_PREFIXES = ("OMPI_", "PMIX_", "PRTE_", "PMI_")
MPI_ENV_KEPT = frozenset({"OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"})


def mpi_env_changes(environ: dict[str, str] | os._Environ[str]) -> tuple[list[str], dict[str, str]]:
    """What the tests take out of `environ` and what they set: (names to unset, {name: value})."""
    kept = MPI_ENV_KEPT if os.geteuid() == 0 else frozenset()  # not root: bsprun sets neither (tools_test.sh)
    unset = sorted(k for k in environ if k.startswith(MPI_ENV_PREFIXES) and k not in kept)
    settings: dict[str, str] = {}
    user_file = Path(environ.get("HOME", "/nonexistent")) / ".openmpi" / "mca-params.conf"
    if user_file.is_file() and shutil.which("ompi_info"):
        # Open MPI's default list of parameter files, without the user's
        done = subprocess.run(["ompi_info", "--path", "sysconfdir", "--parsable"], capture_output=True, text=True)
        sysconf = done.stdout.strip().rpartition(":")[2]
        if done.returncode == 0 and sysconf:
            settings["OMPI_MCA_mca_base_param_files"] = f"{sysconf}/openmpi-mca-params.conf"
    return unset, settings


@pytest.fixture(autouse=True, scope="session")
def mpi_test_environment() -> Iterator[None]:
    """Every test runs with Open MPI's environment as mpi_env_changes() leaves it."""
    unset, settings = mpi_env_changes(os.environ)
    with pytest.MonkeyPatch.context() as mp:
        for name in unset:
            mp.delenv(name)
        for name, value in settings.items():
            mp.setenv(name, value)
        yield


@pytest.fixture(autouse=True)
def no_validation_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    """A prediction takes its model from the newest `bspkit validate` of its algorithm under
    results/ (bspkit.model.model_choice): in a test there is none, unless the test files its
    own and asks for them with a root of its own (REAL_VALIDATIONS)."""
    from bspkit import results

    monkeypatch.setattr(
        results, "validations", lambda algorithm, root=None: REAL_VALIDATIONS(algorithm, root) if root else []
    )


def _real_validations() -> Callable[[str, Path | None], list[Path]]:
    from bspkit import results

    return results.validations


REAL_VALIDATIONS = _real_validations()  # bspkit.results.validations itself, before any test patches it

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


def bspkit_in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`bspkit ARGS` in this process (cheaper than a new one): exit status, stdout, stderr."""
    from bspkit import cli

    try:
        rc = cli.main(list(args))
    except SystemExit as e:  # argparse's usage errors
        rc = int(e.code or 0)
    out = capsys.readouterr()
    return rc, out.out, out.err


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
    """One g surface per primitive/pattern, plus latency, f, As total exchange, validation (the
    memcpy section has tables only since the hardware references replaced its g_inf plot)."""
    n = len(params["g"])
    n += bool(params["l_detail"] or params["as"]["tests"])
    n += any(d.get("s_per_op") for d in params["f_detail"].values())
    n += bool(params["as"]["total_exchange"])
    n += bool(params["validation"]["used"])
    imh = params.get("imh") or {}
    if imh.get("mem"):  # Fig. 22/23 for double reads by one process, out of cache and in cache
        n += sum(f"read/double/{cache}/p1" in imh["mem"]["fits"] for cache in ("cold", "warm"))
    n += bool(imh.get("pp") and any(f["model"].get("tau") for f in imh["pp"]["fits"].values()))
    n += bool(
        imh.get("disk") and any("/sequential/" in k and f["model"].get("tau") for k, f in imh["disk"]["fits"].items())
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


# ------------------------------------------------------------ a report in a real browser

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)

# Runs in the page after it loaded: what a reader sees, per section (h2 with an id): its
# tables and images, whether each image decoded and has a size on the page.
_BROWSER_CHECK = """
<script>
window.addEventListener('load', () => {
  const out = {sections: {}, broken_images: 0};
  let current = null;
  for (const el of document.body.querySelectorAll('h2, table, img')) {
    if (el.tagName === 'H2') { current = el.id || el.textContent; out.sections[current] = {title: el.textContent, tables: 0, rows: 0, images: 0}; continue; }
    if (!current) continue;
    const box = el.getBoundingClientRect();
    if (el.tagName === 'TABLE' && box.width > 0 && box.height > 0) { out.sections[current].tables++; out.sections[current].rows += el.rows.length; }
    if (el.tagName === 'IMG') {
      if (el.complete && el.naturalWidth > 0 && box.width > 0) out.sections[current].images++; else out.broken_images++;
    }
  }
  const pre = document.createElement('pre'); pre.id = 'bspkit-browser-check';
  pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script>
"""


def render_in_chromium(report: Path, tmp_path: Path) -> dict:
    """Loads the report in headless Chromium and returns what the page shows per section
    (see _BROWSER_CHECK); fails when Chromium cannot render it."""
    assert CHROMIUM, "no chromium (scripts/setup.sh installs it)"
    page = tmp_path / "browser-check.html"
    page.write_text(report.read_text().replace("</body>", _BROWSER_CHECK + "</body>"))
    r = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'<pre id="bspkit-browser-check">(.*?)</pre>', r.stdout, re.S)
    assert m, "the page's check did not run: " + r.stdout[-500:] + r.stderr[-1000:]
    return json.loads(html_unescape(m.group(1)))
