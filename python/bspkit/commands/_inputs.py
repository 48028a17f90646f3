"""Finding and loading what the commands start from: run directories, raw-sample files,
parameter files (given, or the newest probe's), and the build with bsprun and the drivers."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bspkit import results
from bspkit.algorithms import DriverLaunch
from bspkit.console import Failure, UsageError, describe_exit, progress
from bspkit.measure import cluster, libraries, programs
from bspkit.measure.libraries import Library
from bspkit.measure.rawdata import RawDataError, RawRun, load_raw
from bspkit.model import supersteps as pd
from bspkit.model.params import Params, ParamsError


def resolve_input(arg: str) -> tuple[str, Path]:
    """A run directory, a raw .jsonl file or a params .json file -> (kind, path)."""
    p = Path(arg)
    if p.is_dir():
        if (p / "raw.jsonl").is_file():
            return "raw", p / "raw.jsonl"
        if (p / "params.json").is_file():
            return "params", p / "params.json"
        raise Failure(f"{arg}: no raw.jsonl (or params.json) in this directory")
    if not p.exists():
        raise Failure(f"{arg}: no such file or directory")
    if p.suffix == ".json":
        return "params", p
    return "raw", p


def load_fit(raw: Path) -> tuple[RawRun, Params]:
    """Reads a raw-sample file and fits it."""
    from bspkit.model.fit import fit_run  # scipy: seconds to import, spared to `bspkit --help` and the other commands

    progress(f"reading {raw}")
    try:
        run = load_raw(raw)
    except RawDataError as e:
        raise Failure(str(e)) from None
    progress(f"fitting {len(run.g_keys())} g surfaces ({len(run.g)} grid points), f, l, As, validation")
    return run, fit_run(run)


def load_params(path: Path, read: Callable[[Path], Params] = Params.read) -> Params:
    """A parameter file read by `read` (Params.read; params.read_params_file also takes
    hand-written shorthand), its errors told as the commands tell a failure."""
    try:
        return read(path)
    except OSError as e:
        raise Failure(f"cannot read {path}: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise Failure(f"{path}: not JSON: {e.msg} (line {e.lineno})") from None
    except ParamsError as e:
        raise Failure(f"{path}: {e}") from None


def default_beside(raw: Path, name: str, suffix: str) -> Path:
    """run/raw.jsonl -> run/<name>; other.jsonl -> other<suffix>."""
    if raw.name == "raw.jsonl":
        return raw.with_name(name)
    return raw.with_name(raw.stem + suffix)


def run_label(backend: str, hostfile: Path | None) -> str:
    """The back end as results are filed (results/probe/HOST-LABEL-pP-...): the back end, or
    'mpi@NAME' on emulated cluster NAME ('mpi@FILE' on another hostfile), so that the newest
    probe found for a run on a cluster is one on that cluster, and one on this machine is not."""
    if hostfile is None:
        return backend
    return f"{backend}@{cluster.name_of_hostfile(hostfile) or hostfile.name}"


def params_for(
    params_arg: str | None,
    backend: str,
    nprocs: int,
    required: bool,
    hostfile: Path | None = None,
    library: Library | None = None,
) -> tuple[Path | None, Params | None]:
    """The parameter file given (--params), else the newest probe's (of this back end and p, on
    the same hosts; of another library: filed under its name); (None, None) if there is none
    and none is required. Checked before anything runs: its format, and that it can predict
    (l and a g surface)."""
    if library is not None:
        backend = library.name
    label = run_label(backend, hostfile)
    if params_arg:
        path: Path | None = Path(params_arg)
    else:
        path = results.newest_probe_params(label, nprocs)
        if path is None:
            if required:
                on = f" --hostfile {hostfile}" if hostfile else ""
                how = f"-b {backend}" if library is None else shlex.join(library.probe_args())
                raise Failure(
                    f"no parameter file: give --params FILE, or run `bspkit probe {how} -n {nprocs}{on}` first "
                    "(its params.json under results/probe/ is found by itself)"
                )
            return None, None
        progress(f"parameters: {path} (the newest probe for {label}, p = {nprocs})")
    params = load_params(path)
    try:
        unserved = pd.check_usable(params)
    except pd.PredictionError as e:
        raise Failure(f"{path}: {e}") from None
    for model in unserved:
        progress(f"warning: {path} has no fit the {model} model can use: its predictions will be '-'")
    return path, params


def driver_launch(
    build_dir_arg: str | None,
    driver: str,
    backend: str,
    nprocs: int,
    hostfile: Path | None = None,
    library: Library | None = None,
) -> DriverLaunch:
    """How `driver` is started: bspkit's (built where needed; bsprun asked whether it can
    launch), or another library's portable build (built into its cache)."""
    if library is None:
        bsprun, bindir = driver_tools(build_dir_arg, driver)
        check_launch(bsprun, backend, nprocs, hostfile)
        return DriverLaunch(bindir, bsprun, backend, hostfile)
    root = results.source_tree()
    if root is None:
        raise Failure("building the drivers against another BSPlib needs bspkit's sources: set BSPKIT_SOURCE_DIR")
    try:
        out = libraries.build(library, root, [driver])
    except libraries.LibraryError as e:
        raise Failure(str(e)) from None
    return DriverLaunch(out / "bin", None, library.label, None, library)


def driver_tools(build_dir_arg: str | None, driver: str) -> tuple[Path, Path]:
    """(bsprun, the directory holding the driver): see bspkit.measure.programs for where they are looked for."""
    exe = programs.find(driver, build_dir_arg)
    return programs.find("bsprun", build_dir_arg), exe.parent


def check_launch(bsprun: Path, backend: str, nprocs: int, hostfile: Path | None = None) -> None:
    """Asks bsprun (`--dry-run`) whether it can start P processes on this back end (and
    hosts): it knows the back ends this build has, and what an emulated cluster needs. Its
    refusal is the user's usage error, in bsprun's words."""
    hosts = ["--hostfile", str(hostfile)] if hostfile else []
    cmd = [str(bsprun), "--dry-run", "-b", backend, "-n", str(nprocs), *hosts, sys.executable]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Failure(f"cannot run {bsprun}: {e}") from None
    if proc.returncode == 2:
        lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("bsprun: error:")]
        msg = lines[0].removeprefix("bsprun: error: ") if lines else proc.stderr.strip()
        raise UsageError(f"-b {backend} -n {nprocs}{' --hostfile ' + str(hostfile) if hostfile else ''}: {msg}")
    if proc.returncode != 0:
        raise Failure(f"{bsprun} --dry-run failed ({describe_exit(proc.returncode)}): {proc.stderr.strip()}")
