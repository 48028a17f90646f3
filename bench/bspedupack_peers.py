#!/usr/bin/env python3
"""bspedupack_peers.py - BSPedupack 2.0's sort, LU and FFT, unmodified, on bspkit's back ends and
on the other BSPlibs side by side (issue 41): interleaved repetitions, medians.

Each library's compiler command builds the programs once, as BSPedupack ships them, through
`scripts/run-bspedupack.sh --build-only` (a copy of the BSPedupack directory, its own Makefile,
make CC=<the compiler command>); libraries that share a compiler command (bspkit's back ends,
BSPonMPI's msg and rma) share the build. The libraries:
  bspkit-threads, bspkit-mpi, bspkit-mpi-rma   build/bin/bspcc, run by build/bin/bsprun -b B
  multicorebsp                                 PEERS/multicorebsp
  bsponmpi-msg, bsponmpi-rma                   PEERS/bsponmpi/variants/{msg,rma}
  lpf-pthread, lpf-mpimsg, lpf-mpirma          PEERS/lpf/variants/{pthread,mpimsg,mpirma}
where PEERS (--peers-dir) holds the prefixes of scripts/build-peer.sh (docs/peers.md); a peer
runs through the launcher its bspkit-peer.json names (Open MPI ranks bound to cores), and by
default every library found there takes part.

Repetition r runs every program on every library, the libraries' order rotated by r, so that a
change of the machine's state falls on all of them alike. A run's time is the one the program
prints (sort and LU: "This took only T seconds", bsp_time around the algorithm; FFT: "Time per
FFT = T sec", the mean of its 100 forward and 100 backward transforms), else the run's wall time;
each run's output is checked (sort: P parts of N keys in all; LU: every process' maximum error 0
and no error in pi; FFT: the relative error), and a run that fails the check is not timed. The
program's inputs go to its stdin as BSPedupack asks for them (sort: P, N; LU: the M x N grid, n;
FFT: P, n).

Prints, per program and library, the median, min and max of the repetitions, and the median's
ratio to the best bspkit back end's median, with the CPU, OPENBLAS_CORETYPE, the load average
before and after and the date; --out writes every run as JSON lines. Exit status 1 when a run
failed or a library built none of the programs (the others are still reported; a program that
does not compile on a library is listed, not a failure), 2 on a usage error. From the repository root:
  .venv/bin/python bench/bspedupack_peers.py --bspedupack /path/to/BSPedupack2.0 \\
      --peers-dir /work/peers [--reps 9] [--programs sort,lu,fft] [--libraries a,b,...] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from machine_info import cpu_model  # bench/, this script's directory

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from bspkit.measure.libraries import LibraryError, library_from  # noqa: E402

BUILD_SCRIPT = ROOT / "scripts" / "run-bspedupack.sh"
BSPKIT_BACKENDS = ("threads", "mpi", "mpi-rma")
# library key -> the prefix of its bspkit-peer.json under --peers-dir
PEER_PREFIXES = {
    "multicorebsp": "multicorebsp",
    "bsponmpi-msg": "bsponmpi/variants/msg",
    "bsponmpi-rma": "bsponmpi/variants/rma",
    "lpf-pthread": "lpf/variants/pthread",
    "lpf-mpimsg": "lpf/variants/mpimsg",
    "lpf-mpirma": "lpf/variants/mpirma",
}
ALL_LIBRARIES = [f"bspkit-{b}" for b in BSPKIT_BACKENDS] + list(PEER_PREFIXES)
PROGRAMS = ("sort", "lu", "fft")
# The times the programs print (bspsort_test.c, bsplu_test.c, bspfft_test.c)
PRINTED_TIME = {
    "sort": re.compile(r"^This took only ([0-9.]+) seconds", re.M),
    "lu": re.compile(r"^This took only ([0-9.]+) seconds", re.M),
    "fft": re.compile(r"^Time per FFT = ([0-9.]+) sec", re.M),
}
# FFT: the largest relative error (max |x_j - x_j^0| / n after 100 round trips) still taken as right
FFT_MAX_RELATIVE_ERROR = 1e-9


@dataclass
class Lib:
    """One column: a bspkit back end or a peer's variant."""

    key: str  # e.g. bspkit-mpi, bsponmpi-rma
    label: str  # with the version, e.g. bsponmpi-rma@1.1.1+2dc757c
    compiler: str
    launcher: list[str]  # the command before the program ([] for MulticoreBSP: it starts its own threads)
    build_dir: Path | None = None
    built: list[str] = field(default_factory=list)  # the programs that compiled
    times: dict[str, list[float]] = field(default_factory=dict)


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def bspkit_commit() -> str:
    """The commit of this checkout (with +modified when the working tree differs), for before/after."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD"], capture_output=True).returncode
    return (head.stdout.strip() or "unknown") + ("+modified" if dirty else "")


def lu_grid(p: int) -> tuple[int, int]:
    """M x N = p with N the largest divisor whose square is at most p (scripts/run-bspedupack.sh's
    choice: 2 x 1 at p = 2)."""
    cols = max(d for d in range(1, p + 1) if p % d == 0 and d * d <= p)
    return p // cols, cols


def libraries(keys: list[str], peers_dir: Path, p: int) -> list[Lib]:
    libs: list[Lib] = []
    bsprun = ROOT / "build" / "bin" / "bsprun"
    for key in keys:
        if key.startswith("bspkit-"):
            backend = key.removeprefix("bspkit-")
            launcher = [str(bsprun), "-b", backend, "-n", str(p)]
            libs.append(Lib(key, key, str(ROOT / "build" / "bin" / "bspcc"), launcher))
            continue
        lib = library_from(peer=str(peers_dir / PEER_PREFIXES[key]))
        assert lib is not None  # a peer always describes a library
        launcher = shlex.split(lib.launcher.replace("{p}", str(p))) if lib.launcher.strip() else []
        libs.append(Lib(key, f"{key}@{lib.version}", lib.compiler, launcher))
    return libs


def build(libs: list[Lib], bspedupack: Path, programs: list[str], work: Path) -> list[str]:
    """Builds the programs once per compiler command; returns what was not built, with the first
    error (a program that does not compile on a library is left out there, not changed:
    BSPedupack's sort uses bsp_size_t, which LPF's bsp.h does not define)."""
    not_built: list[str] = []
    by_compiler: dict[str, tuple[Path, list[str], str]] = {}
    for lib in libs:
        if lib.compiler not in by_compiler:
            dest = work / f"build-{len(by_compiler)}"
            cmd = [str(BUILD_SCRIPT), "--build-only", str(dest), "--bspcc", lib.compiler]
            cmd += ["--programs", " ".join(programs), str(bspedupack)]
            res = subprocess.run(cmd, capture_output=True, text=True, check=False)
            built = [prog for prog in programs if (dest / prog).is_file()]
            log = res.stdout + res.stderr
            first_error = next((ln.strip() for ln in log.splitlines() if "error" in ln.lower()), log.strip()[-300:])
            by_compiler[lib.compiler] = (dest, built, first_error)
            print(f"build with {lib.compiler}: {' '.join(built) or 'nothing'} built", flush=True)
        lib.build_dir, lib.built, first_error = by_compiler[lib.compiler]
        for prog in programs:
            if prog not in lib.built:
                not_built.append(f"{lib.key} {prog}: {first_error[:300]}")
    return not_built


def answers(program: str, p: int, sizes: dict[str, int]) -> str:
    if program == "lu":
        rows, cols = lu_grid(p)
        return f"{rows}\n{cols}\n{sizes['lu']}\n"
    return f"{p}\n{sizes[program]}\n"


def check(program: str, out: str, p: int, n: int) -> str:
    """What is wrong with the program's output, or ''."""
    if program == "sort":
        counts = [int(m) for m in re.findall(r"^Proc \d+: number of elements = (\d+)", out, re.M)]
        if f"Using {p} processors" not in out:
            return f"no line 'Using {p} processors'"
        if len(counts) != p or sum(counts) != n:
            return f"{len(counts)} parts of {sum(counts)} keys in all, want {p} parts of {n}"
    elif program == "lu":
        errors = [float(m) for m in re.findall(r"^Maximum error of proc=\S+ = (\S+)", out, re.M)]
        if "Error in pi" in out:
            return "the program found an error in pi"
        if len(errors) != p or max(errors) > 0:
            return f"maximum errors {errors}, want {p} zeros"
    else:
        head = re.search(rf"^FFT of vector of length {n} using {p} processors", out, re.M)
        rel = re.search(r"^Relative error= (\S+)", out, re.M)
        if not head or not rel:
            return "no 'FFT of vector of length' or 'Relative error' line"
        if not float(rel.group(1)) <= FFT_MAX_RELATIVE_ERROR:
            return f"relative error {rel.group(1)}, want at most {FFT_MAX_RELATIVE_ERROR:g}"
    return ""


def run_once(lib: Lib, program: str, p: int, sizes: dict[str, int], work: Path, timeout_s: int) -> dict[str, Any]:
    assert lib.build_dir is not None
    out_path, err_path = work / "out.txt", work / "err.txt"
    env = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI refuses root without these (bsprun and the launchers set them too)
        env |= {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    rec: dict[str, Any] = {"program": program, "library": lib.key, "label": lib.label, "p": p, "n": sizes[program]}
    with out_path.open("w") as out, err_path.open("w") as err:
        t0 = time.perf_counter()
        try:
            res = subprocess.run(
                [*lib.launcher, f"./{program}"],
                cwd=lib.build_dir,
                input=answers(program, p, sizes).encode(),
                stdout=out,
                stderr=err,
                env=env,
                timeout=timeout_s,
                check=False,
            )
            rc: int | None = res.returncode
        except subprocess.TimeoutExpired:
            rc = None
        rec["wall_s"] = time.perf_counter() - t0
    # LU prints every matrix entry (tens of MB at n = 1000): read once, then dropped
    text = out_path.read_text(errors="replace")
    out_path.unlink()
    if rc is None:
        rec |= {"status": "failed", "reason": f"timed out after {timeout_s} s"}
        return rec
    if rc != 0:
        first = next((ln for ln in err_path.read_text(errors="replace").splitlines() if ln.strip()), "")
        rec |= {"status": "failed", "reason": f"exit status {rc}: {first[:200]}"}
        return rec
    wrong = check(program, text, p, sizes[program])
    if wrong:
        rec |= {"status": "wrong", "reason": wrong}
        return rec
    printed = PRINTED_TIME[program].search(text)
    if printed:
        rec |= {"status": "ok", "time_s": float(printed.group(1)), "timer": "program"}
    else:
        rec |= {"status": "ok", "time_s": rec["wall_s"], "timer": "wall"}
    return rec


def seconds(t: float) -> str:
    """4 significant digits, no e-notation, at most the 6 decimals the programs print."""
    if t <= 0:
        return "0"
    return f"{t:.{min(6, max(0, 3 - math.floor(math.log10(t))))}f}"


def table(libs: list[Lib], programs: list[str], sizes: dict[str, int]) -> list[str]:
    size_names = {"sort": "N", "lu": "n", "fft": "n"}
    lines = [
        f"{'program':<14} {'library':<28} {'runs':>4} {'median s':>10} {'min s':>10} {'max s':>10} {'/bspkit best':>12}"
    ]
    for prog in programs:
        medians = {lib.key: statistics.median(lib.times[prog]) for lib in libs if lib.times.get(prog)}
        ours = [m for k, m in medians.items() if k.startswith("bspkit-")]
        best = min(ours) if ours else None
        name = f"{prog} {size_names[prog]}={sizes[prog]}"
        for lib in libs:
            ts = lib.times.get(prog, [])
            if not ts:
                why = "failed" if prog in lib.built else "not built"
                lines.append(f"{name:<14} {lib.label:<28} {0:>4} {why:>10}")
                continue
            ratio = f"{medians[lib.key] / best:.3f}" if best else "-"
            lines.append(
                f"{name:<14} {lib.label:<28} {len(ts):>4} {seconds(medians[lib.key]):>10} {seconds(min(ts)):>10} "
                f"{seconds(max(ts)):>10} {ratio:>12}"
            )
    return lines


def write_json(sink: TextIO | None, rec: dict[str, Any]) -> None:
    if sink:
        sink.write(json.dumps(rec) + "\n")
        sink.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bspedupack", required=True, type=Path, help="BSPedupack 2.0's directory (its Makefile)")
    ap.add_argument("--peers-dir", type=Path, default=Path("/work/peers"), help="the prefixes of build-peer.sh")
    ap.add_argument(
        "--libraries",
        help=f"comma-separated, from {','.join(ALL_LIBRARIES)} (default: bspkit's "
        "three and every peer found in --peers-dir)",
    )
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--p", type=int, default=2)
    ap.add_argument("--sort-n", type=int, default=4_000_000, help="keys (default: 4000000)")
    ap.add_argument("--lu-n", type=int, default=1000, help="matrix order (default: 1000)")
    ap.add_argument("--fft-n", type=int, default=1 << 20, help="vector length, a power of 2 (default: 2^20)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds one run may take")
    ap.add_argument("--out", type=Path, help="JSON lines: the setup, every run, the summary")
    args = ap.parse_args()

    programs = [x for x in args.programs.split(",") if x]
    for prog in programs:
        if prog not in PROGRAMS:
            ap.error(f"--programs: unknown program {prog!r} (from {','.join(PROGRAMS)})")
    if args.reps < 1 or args.p < 1:
        ap.error("--reps and --p must be positive")
    if not (args.bspedupack / "Makefile").is_file() or not (args.bspedupack / "bspedupack.h").is_file():
        ap.error(f"--bspedupack {args.bspedupack}: no Makefile and bspedupack.h there (BSPedupack 2.0's directory)")
    if "fft" in programs and (args.fft_n & (args.fft_n - 1) or args.fft_n < 2 * args.p):
        ap.error("--fft-n must be a power of 2 and at least 2p")
    if args.libraries:
        keys = [x for x in args.libraries.split(",") if x]
        for key in keys:
            if key not in ALL_LIBRARIES:
                ap.error(f"--libraries: unknown library {key!r} (from {','.join(ALL_LIBRARIES)})")
    else:
        keys = [f"bspkit-{b}" for b in BSPKIT_BACKENDS]
        keys += [k for k, pre in PEER_PREFIXES.items() if (args.peers_dir / pre / "bspkit-peer.json").is_file()]
    try:
        libs = libraries(keys, args.peers_dir, args.p)
    except LibraryError as e:
        ap.error(f"{e} (build the peers with scripts/build-peer.sh, docs/peers.md)")
    sizes = {"sort": args.sort_n, "lu": args.lu_n, "fft": args.fft_n}
    sink = args.out.open("w") if args.out else None

    with tempfile.TemporaryDirectory(prefix="bspedupack-peers-") as tmp:
        work = Path(tmp)
        not_built = build(libs, args.bspedupack.resolve(), programs, work)
        failures = [f"{lib.key}: none of the programs was built" for lib in libs if not lib.built]
        runnable = [lib for lib in libs if lib.built]
        machine = {
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "bspkit_commit": bspkit_commit(),
            "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
            "loadavg_before": os.getloadavg(),
            "start": now(),
        }
        write_json(
            sink,
            {
                "kind": "setup",
                **machine,
                "bspedupack": str(args.bspedupack),
                "reps": args.reps,
                "sizes": sizes,
                "libraries": {lib.key: lib.label for lib in libs},
            },
        )
        for rep in range(args.reps):
            order = runnable[rep % len(runnable) :] + runnable[: rep % len(runnable)] if runnable else []
            for prog in programs:
                for lib in [lib for lib in order if prog in lib.built]:
                    rec = run_once(lib, prog, args.p, sizes, work, args.timeout)
                    rec = {"kind": "run", "rep": rep + 1, **rec}
                    write_json(sink, rec)
                    if rec["status"] == "ok":
                        lib.times.setdefault(prog, []).append(rec["time_s"])
                        print(f"rep {rep + 1} {prog:<5} {lib.label:<28} {rec['time_s']:.4f} s", flush=True)
                    else:
                        failures.append(f"rep {rep + 1} {prog} {lib.key}: {rec['status']}: {rec['reason']}")
                        print(f"rep {rep + 1} {prog:<5} {lib.label:<28} {rec['status'].upper()}: {rec['reason']}")
    machine |= {"loadavg_after": os.getloadavg(), "end": now()}
    head = (
        f"BSPedupack 2.0 ({args.bspedupack}) on bspkit {machine['bspkit_commit']} and its peers, p = {args.p}, "
        f"{args.reps} interleaved repetitions; "
        f"CPU {machine['cpu']} ({machine['cores']} cores), OPENBLAS_CORETYPE={machine['openblas_coretype']}; "
        f"load average {machine['loadavg_before'][0]:.2f} before, {machine['loadavg_after'][0]:.2f} after; "
        f"{machine['start']} to {machine['end']}"
    )
    lines = [head, "", *table(libs, programs, sizes)]
    if not_built:
        lines += ["", "Not built (BSPedupack unmodified does not compile there):", *not_built]
    if failures:
        lines += ["", "FAILED:", *failures]
    print("\n".join(lines))
    medians = {lib.key: {prog: statistics.median(ts) for prog, ts in lib.times.items()} for lib in libs if lib.times}
    write_json(sink, {"kind": "summary", **machine, "medians_s": medians, "not_built": not_built, "failures": failures})
    if sink:
        sink.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
