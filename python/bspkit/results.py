"""Where bspkit files what it measures: the one place that knows the results/ layout.

    results/probe/<host>-<label>-p<P>-<time>/       a probe run: raw.jsonl, params.json, report.html
    results/calibrate/<host>-<label>-p<P>-<time>.json   a short calibration
    results/validate/<algorithm>-<label>-p<P>-<time>/   a validation sweep: validate.json, validate.html
    results/imh/<algorithm>-p<P>/                   `bspkit imh`'s predictions: imh.json

results/ is in the bspkit source tree (`source_tree`), or in the current directory where there
is none (an installed bspkit). <label> is the back end as runs are filed (threads, mpi,
mpi@CLUSTER, or another library's name: commands/_inputs.run_label), <time> the local time
YYYYmmdd-HHMMSS. The commands find "the newest probe" of a label and p here by that name.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
from pathlib import Path

TIME_FORMAT = "%Y%m%d-%H%M%S"


def source_tree() -> Path | None:
    """The bspkit source tree: $BSPKIT_SOURCE_DIR, else the tree this package sits in."""
    env = os.environ.get("BSPKIT_SOURCE_DIR")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for cand in here.parents:
        cm = cand / "CMakeLists.txt"
        if cm.is_file() and "project(bspkit" in cm.read_text(errors="replace"):
            return cand
    return None


def results_root(root: Path | None = None) -> Path:
    """<root>/results, root the source tree (else the current directory)."""
    base = root if root is not None else source_tree()
    return (base if base is not None else Path.cwd()) / "results"


def _host() -> str:
    return platform.node().split(".")[0] or "host"


def _now() -> str:
    return dt.datetime.now().strftime(TIME_FORMAT)


def _safe(label: str) -> str:
    return label.replace("/", "_")


def probe_runs(root: Path | None = None) -> Path:
    """The directory of the probe runs."""
    return results_root(root) / "probe"


def new_probe_run(label: str, nprocs: int, root: Path | None = None) -> Path:
    """A new probe run's directory (not created)."""
    return probe_runs(root) / f"{_host()}-{_safe(label)}-p{nprocs}-{_now()}"


def probe_params(label: str, nprocs: int | None = None) -> list[Path]:
    """params.json of every probe of this label (and p), oldest first."""
    p = "*" if nprocs is None else str(nprocs)
    found = probe_runs().glob(f"*-{_safe(label)}-p{p}-*/params.json")
    return sorted(found, key=lambda q: q.stat().st_mtime)


def newest_probe_params(label: str, nprocs: int) -> Path | None:
    """params.json of the newest probe of this label and p, None when there is none."""
    found = probe_params(label, nprocs)
    return found[-1] if found else None


def newest_probe_params_per_p(label: str) -> dict[int, Path]:
    """The newest probe's params.json of each p of this label."""
    newest: dict[int, Path] = {}
    for path in probe_params(label):
        p_part = path.parent.name.split(f"-{_safe(label)}-p", 1)[1].split("-", 1)[0]
        if p_part.isdigit():
            newest[int(p_part)] = path
    return newest


def new_calibration(label: str, nprocs: int) -> Path:
    """A new calibration's file (not created)."""
    return results_root() / "calibrate" / f"{_host()}-{_safe(label)}-p{nprocs}-{_now()}.json"


def new_validation(algorithm: str, label: str, nprocs: int) -> Path:
    """A new validation sweep's directory (not created)."""
    return results_root() / "validate" / f"{algorithm}-{_safe(label)}-p{nprocs}-{_now()}"


def validations(algorithm: str, root: Path | None = None) -> list[Path]:
    """validate.json of every sweep of this algorithm under results/validate/, newest first (by
    the <time> of its directory's name, then the file's time). A directory's name starts with
    the algorithm's, but "rdxsort-..." also starts "rdxsort-opt-...": the caller checks the
    file's own "algorithm"."""
    found = (results_root(root) / "validate").glob(f"{_safe(algorithm)}-*-p*-*/validate.json")

    def when(path: Path) -> tuple[str, float]:
        stamp = "-".join(path.parent.name.rsplit("-", 2)[-2:])
        return (stamp if _is_time(stamp) else "", path.stat().st_mtime)

    return sorted(found, key=when, reverse=True)


def run_time(directory: Path) -> dt.datetime | None:
    """When a run filed under results/ was started: the <time> its directory's name ends with."""
    stamp = "-".join(directory.name.rsplit("-", 2)[-2:])
    return dt.datetime.strptime(stamp, TIME_FORMAT) if _is_time(stamp) else None


def _is_time(stamp: str) -> bool:
    try:
        dt.datetime.strptime(stamp, TIME_FORMAT)
    except ValueError:
        return False
    return True


def imh_predictions(algorithm: str, nprocs: int) -> Path:
    """The directory of `bspkit imh ALG -n P`'s predictions."""
    return results_root() / "imh" / f"{algorithm}-p{nprocs}"
