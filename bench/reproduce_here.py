#!/usr/bin/env python3
"""reproduce_here.py - the seeds' experiments re-run on this machine, in their own grids scaled
to it, beside the seeds' numbers (issue 40, item 3; docs/reproduction.md, "Re-run here").

    OPENBLAS_CORETYPE=Haswell .venv/bin/python bench/reproduce_here.py [--quick] [-n P]
        [-b BACKEND ...] [--params FILE] [--out DIR] [--only NAME ...] [--report-only]

Each experiment is one `bspkit validate` sweep (the driver at every size and value, each run
predicted from this machine's probe under every model) in the seed's grid:

  D     matmul-blockcyclic, q = 8 .. 729 (the thesis' cubes), n = 400 .. 2000   (thesis App. D)
  E     matmul-static2d, the same grid                                          (App. E)
  F     llcs-dp --schedule thesis, alpha = 1 .. 5, lengths 16384 .. 65536        (App. F)
  G     llcs-bitpar --schedule thesis, alpha = 1 .. 5, lengths 32768 .. 131072   (App. G)
  HB    lu, nb = 32, n = 500 .. 4000                                            (H&B Table 1)
  GL    cannon-put, -get, -send at n = 320, 640 and 2560, p = 1 and P            (G&L Table 1)
  HB2   lu's time breakdown, n = 1000, 2000, 4000, nb = 32, from its profile     (H&B Fig. 2)

and its table is printed the seed's way: per value the peak efficiency over the sizes and the
mean relative error over them per model (the thesis' two, "thesis g const" and "g(h,h*)+l0",
and bspkit's own best, "g(h,h*)"), beside the thesis' row of aracari, Oxtool, p = 4 (its
smallest p, on the machine whose library is the thesis' best); for H&B the rate in Gflop/s;
for G&L the speedup T(1) / T(P). The machine's load, CPU and BLAS core type head the output.
Never run it beside a build or tests: it is a measurement.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BSPKIT = [sys.executable, "-m", "bspkit"]

MATMUL_Q = "8,27,64,125,216,343,512,729"
EXPERIMENTS = {
    "D": ("matmul-blockcyclic", "400,800,1200,1600,2000", MATMUL_Q, "D.3"),
    "E": ("matmul-static2d", "400,800,1200,1600,2000", MATMUL_Q, "E.3"),
    "F": ("llcs-dp", "16384,32768,65536", "1,2,3,4,5", "F.3"),
    "G": ("llcs-bitpar", "32768,65536,131072", "1,2,3,4,5", "G.3"),
    "HB": ("lu", "500,1000,2000,3000,4000", "32", None),
}
QUICK = {
    "D": ("400,800", "8,64"),
    "E": ("400,800", "8,64"),
    "F": ("16384", "1,2"),
    "G": ("32768", "1,2"),
    "HB": ("500,1000", "32"),
}
MODELS = ("thesis g const", "g(h,h*)+l0", "g(h,h*)")
# driver options that make the driver the seed's algorithm (LLCS: Fig. 5.4's schedule)
DRIVER_OPTIONS = {"F": ["--schedule", "thesis"], "G": ["--schedule", "thesis"]}


def run(cmd: list[str], log: Path) -> None:
    with log.open("a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        r = subprocess.run(
            cmd, check=False, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT
        )
    if r.returncode != 0:
        sys.exit(
            f"reproduce_here: {' '.join(cmd)} failed (exit {r.returncode}); see {log}"
        )


def validate(
    name: str, backend: str, p: int, args: argparse.Namespace, out: Path, log: Path
) -> Path:
    algorithm, sizes, values, _ = EXPERIMENTS[name]
    if args.quick:
        sizes, values = QUICK[name]
    target = out / f"{name}-{backend}-p{p}"
    if (target / "validate.json").exists():
        return target
    cmd = [
        *BSPKIT,
        "validate",
        algorithm,
        "-n",
        str(p),
        "-b",
        backend,
        "--sizes",
        sizes,
        "--values",
        values,
        "-r",
        str(args.reps),
        "--output-dir",
        str(target),
    ]
    if args.params:
        cmd += ["--params", args.params]
    cmd += ["--", "--no-check", *DRIVER_OPTIONS.get(name, [])]
    run(cmd, log)
    return target


@functools.cache
def seed_results(name: str) -> dict:
    """A file of data/seed_results/, read once."""
    return json.loads((ROOT / "data" / "seed_results" / name).read_text())


def thesis_row(table: str | None, value: int) -> dict | None:
    if table is None:
        return None
    t = next(
        x
        for x in seed_results("thesis-appendix-d-g.json")["tables"]
        if x["table"] == table
    )
    for row in t["rows"]:
        if row["p"] == 4 and row[t["parameter"]] == value:
            return row["libraries"]["Oxtool"]
    return None


def fmt(v: float | None, scale: float = 100.0) -> str:
    return "-" if v is None else f"{scale * v:.1f}"


def thesis_table(name: str, result: Path) -> list[str]:
    """The seed's layout: per value, peak efficiency and mean |error| per model, ours beside the thesis'."""
    table = EXPERIMENTS[name][3]
    doc = json.loads((result / "validate.json").read_text())
    by_value: dict[int, list[dict]] = {}
    for row in doc["rows"]:
        by_value.setdefault(int(row["sweep_value"]), []).append(row)
    head = f"| {'q' if name in 'DE' else 'alpha'} | E % here | " + " | ".join(
        f"err {m} here" for m in MODELS
    )
    head += " | thesis E % (aracari Oxtool p = 4) | thesis err const g | thesis err 2nd model |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for value, rows in sorted(by_value.items()):
        peak = max(
            (r["efficiency"] for r in rows if r.get("efficiency") is not None),
            default=None,
        )
        errs = []
        for m in MODELS:
            vals = [
                abs(r["rel_error"][m])
                for r in rows
                if r.get("rel_error", {}).get(m) is not None
            ]
            errs.append(statistics.mean(vals) if vals else None)
        th = thesis_row(table, value)
        th_cells = ["-", "-", "-"]
        if th:
            second = next(k for k in th["error"] if k != "const g")
            th_cells = [
                fmt(th["efficiency"], 1),
                fmt(th["error"]["const g"], 1),
                fmt(th["error"][second], 1),
            ]
        lines.append(
            f"| {value} | {fmt(peak)} | "
            + " | ".join(fmt(e) for e in errs)
            + " | "
            + " | ".join(th_cells)
            + " |"
        )
    return lines


def hb_table(result: Path) -> list[str]:
    doc = json.loads((result / "validate.json").read_text())
    hb = seed_results("others.json")["hb-table-1"]
    seed = {r["n"]: r["gflops"]["BSPlib"] for r in hb["rows"]}
    lines = [
        f"| n | Gflop/s here (p = {doc['p']}) | err g(h,h*) | err thesis g const | H&B BSPlib Gflop/s (p = 64) |",
        "|---|---|---|---|---|",
    ]
    for r in sorted(doc["rows"], key=lambda r: r["size"]):
        n = r["size"]
        rate = r["W"] / r["measured_s"] / 1e9
        lines.append(
            f"| {n} | {rate:.2f} | {fmt(r['rel_error'].get('g(h,h*)'))} | "
            f"{fmt(r['rel_error'].get('thesis g const'))} | {seed.get(n, '-')} |"
        )
    return lines


def gl_table(
    backend: str, p: int, args: argparse.Namespace, out: Path, log: Path
) -> list[str]:
    """Speedups T(1) / T(p) of the three Mult variants at n = 320, 640 (G&L Table 1's sizes)."""
    # the seed's sizes, and one 8 times larger: T(1) of n = 320 is 0.93 s there, 2 ms here
    sizes = "320" if args.quick else "320,640,2560"
    times: dict[tuple[str, int, int], float] = {}
    build = Path(os.environ.get("BSPKIT_BUILD_DIR", ROOT / "build"))
    reps = str(max(args.reps, 5))
    for n in map(int, sizes.split(",")):
        for variant in ("put", "get", "send"):
            for procs in (1, p):
                cmd = [
                    str(build / "bin" / "bsprun"),
                    "-b",
                    backend,
                    "-n",
                    str(procs),
                    str(build / "bin" / "bspalg-cannon"),
                    "--variant",
                    variant,
                    "--size",
                    str(n),
                    "--reps",
                    reps,
                    "--no-check",
                    "--json",
                    str(out / "gl-run.json"),
                ]
                with log.open("a") as f:
                    f.write("$ " + " ".join(cmd) + "\n")
                r = subprocess.run(
                    cmd, check=False, capture_output=True, text=True, cwd=ROOT
                )
                if r.returncode != 0:
                    sys.exit(
                        f"reproduce_here: {' '.join(cmd)} failed: {r.stderr.strip()}"
                    )
                times[(variant, procs, n)] = float(
                    json.loads((out / "gl-run.json").read_text())["time_s"]
                )
    gl = seed_results("others.json")["gl-table-1"]
    block = next(
        b for b in gl["blocks"] if b["p"] == 4 and b["configuration"] == "non-SMP"
    )
    seed = {r["n"]: r["speedup"] for r in block["rows"]}
    lines = [
        f"| n | put here (p = {p}) | get here | send here | G&L BSPlib put (p = 4 non-SMP) | BSPlib get | LAM send |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in sorted({k[2] for k in times}):
        cells = [
            f"{times[(v, 1, n)] / times[(v, p, n)]:.2f}" for v in ("put", "get", "send")
        ]
        s = seed.get(n, {})
        lines.append(
            f"| {n} | "
            + " | ".join(cells)
            + f" | {s.get('BSPlib put', '-')} | {s.get('BSPlib get', '-')} | "
            f"{s.get('LAM send', '-')} |"
        )
    return lines


def hb_breakdown(
    backend: str, p: int, args: argparse.Namespace, out: Path, log: Path
) -> list[str]:
    """H&B's Fig. 2: LU's time in synchronisation, communication, packing, computation and idle
    (bspkit profile's breakdown of one timed repetition, phase 'rep 1')."""
    build = Path(os.environ.get("BSPKIT_BUILD_DIR", ROOT / "build"))
    sizes = (1000,) if args.quick else (1000, 2000, 4000)
    parts = ("synchronisation", "communication", "packing", "computation", "idle")
    lines = [
        f"| n (p = {p}, nb = 32) | " + " | ".join(parts) + " | total |",
        "|---|" + "---|" * (len(parts) + 1),
    ]
    for n in sizes:
        prof, analysis = (
            out / f"hb2-{backend}-n{n}.jsonl",
            out / f"hb2-{backend}-n{n}.json",
        )
        prof.unlink(missing_ok=True)
        cmd = [
            str(build / "bin" / "bsprun"),
            "-b",
            backend,
            "-n",
            str(p),
            "--profile",
            str(prof),
            str(build / "bin" / "bspalg-lu"),
            "--size",
            str(n),
            "--nb",
            "32",
            "--reps",
            "1",
            "--no-check",
        ]
        run(cmd, log)
        run([*BSPKIT, "profile", str(prof), "--json", str(analysis)], log)
        phases = json.loads(analysis.read_text())["breakdown"]["by_phase"]
        rep = next(ph for ph in phases if ph["phase"] == "rep 1")
        total = rep["total_s"]
        cells = [
            f"{1e3 * rep[f'{x}_s']:.1f} ms ({100 * rep[f'{x}_s'] / total:.1f} %)"
            for x in parts
        ]
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {1e3 * total:.1f} ms |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="two sizes and values each (a check that it runs)",
    )
    ap.add_argument("-n", "--nprocs", type=int, default=2, help="p (default 2)")
    ap.add_argument(
        "-b",
        "--backend",
        action="append",
        help="back ends (default threads; repeat for more)",
    )
    ap.add_argument(
        "--params",
        help="the probe's params.json (default: validate's, the newest probe)",
    )
    ap.add_argument(
        "-r",
        "--reps",
        type=int,
        default=3,
        help="repetitions per run (median; default 3)",
    )
    ap.add_argument(
        "--out",
        default=str(ROOT / "results" / "reproduce-here"),
        help="output directory",
    )
    ap.add_argument(
        "--only",
        action="append",
        choices=[*EXPERIMENTS, "GL", "HB2"],
        help="experiments (default all)",
    )
    ap.add_argument(
        "--gl-p",
        type=int,
        default=4,
        help="G&L's p (default 4: oversubscribed on 2 cores)",
    )
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "reproduce_here.log"
    backends = args.backend or ["threads"]
    cpu = next(
        (
            l.split(":", 1)[1].strip()
            for l in Path("/proc/cpuinfo").read_text().splitlines()
            if l.startswith("model name")
        ),
        "?",
    )
    report = [
        f"# The seeds re-run here ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"cpu: {cpu}, {os.cpu_count()} cores; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}; "
        f"load before: {os.getloadavg()[0]:.2f}; p = {args.nprocs}; reps {args.reps}"
        + ("; --quick" if args.quick else ""),
    ]
    for backend in backends:
        for name in args.only or [*EXPERIMENTS, "GL", "HB2"]:
            print(f"reproduce_here: {name} on {backend}", file=sys.stderr, flush=True)
            report += ["", f"## {name} ({backend})", ""]
            if name == "GL":
                report += gl_table(backend, args.gl_p, args, out, log)
                continue
            if name == "HB2":
                report += hb_breakdown(backend, args.nprocs, args, out, log)
                continue
            result = validate(name, backend, args.nprocs, args, out, log)
            report += hb_table(result) if name == "HB" else thesis_table(name, result)
    report += ["", f"load after: {os.getloadavg()[0]:.2f}"]
    text = "\n".join(report) + "\n"
    (out / "summary.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
