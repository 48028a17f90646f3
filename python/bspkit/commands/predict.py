"""`bspkit predict ALG`: an algorithm's running time at any p and n from its closed-form cost
and a machine's parameters, without a run (bspkit.model.predict)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bspkit import algorithms as al
from bspkit import results
from bspkit.commands._args import (
    Subparsers,
    algorithm_arg,
    comma_list,
    parse_int_list,
    parse_procs,
    positive_float,
    positive_int,
)
from bspkit.console import Failure, UsageError, check_writable, progress, write_text

if TYPE_CHECKING:
    from bspkit.model.costs import Cost
    from bspkit.model.gl_speedup import GLSpeedup
    from bspkit.model.params import Params
    from bspkit.model.predict import Machine, Point, Rate, Sweep

NAME = "predict"
PASS_THROUGH = False
DEFAULT_PROCS = "1,2,4,...,1024"


def add_parser(subparsers: Subparsers) -> None:
    algs = ", ".join(al.closed_form_names())
    pr = subparsers.add_parser(
        "predict",
        help="predict an algorithm's time at any p and n from its closed-form cost, without a run",
        description="Evaluates ALG's closed-form BSP cost (W, H, S per superstep kind: bspkit.model.costs) with a "
        "machine's parameters (f, g, l) at each p of -n and each size, under each model of communication, with a 10-90% "
        "band, the speedup T(1)/T(p) and efficiency (thesis eq. 4.11-4.12), and where the time goes at the "
        "largest p (f W, g H, l S, and what halving each would give). Nothing is run. With several parameter "
        "files (probes at different p) l and g are fitted over p; a p outside them is an extrapolation, "
        "reported as such.",
        epilog="Example: bspkit predict cannon-put --size 4000 -n 1,4,16,...,1024 --params cluster/params.json",
    )
    pr.add_argument("algorithm", metavar="ALG", help=algs)
    pr.add_argument(
        "--size",
        metavar="N",
        help="problem size(s), the driver's --size, in -n's forms: a list (1000,2000), a range, a list continued "
        "by its step or ratio (1000,2000,...,8000) (default: validate's sizes of ALG)",
    )
    pr.add_argument(
        "-n",
        "--nprocs",
        default=DEFAULT_PROCS,
        metavar="P",
        help=f"the p to predict: a list (1,2,4), a range (1-16), or a list continued by its step or ratio "
        f"(1,2,4,...,1024) (default: {DEFAULT_PROCS}); the speedup's base p = 1 is a row only when asked",
    )
    pr.add_argument(
        "--values",
        metavar="V[,V...]",
        help="the algorithm's second parameter (q for matmul, alpha for LLCS, bits for radix sort, nb for LU); "
        "default: the driver's default",
    )
    pr.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another parameter of the problem as the driver's JSON names it (e.g. key_bits=64, m=50000); repeatable",
    )
    pr.add_argument(
        "--params",
        action="append",
        default=[],
        metavar="FILE",
        help="a parameter file (a probe's params.json, or one written by hand: docs/probe-format.md); repeat it "
        "with probes at several p to fit l(p) and g(p). Default: the newest probe of each p under results/probe/ "
        "for -b",
    )
    pr.add_argument(
        "-b", "--backend", default="threads", metavar="BACKEND", help="whose probes to use without --params"
    )
    rate = pr.add_mutually_exclusive_group()
    rate.add_argument(
        "--f",
        type=positive_float,
        metavar="SECONDS",
        help="f: seconds per work unit of the algorithm (flop, cell, key)",
    )
    rate.add_argument(
        "--f-from",
        metavar="RUN.json",
        help="f from a driver's run: the kernel it timed with --measure-f, else (a run on one process) its time "
        "over its W (bspkit run ALG -n 1 --size N --json RUN.json)",
    )
    pr.add_argument(
        "--cores",
        type=positive_int,
        metavar="C",
        help="the cores the processes share: beyond them they take turns, each computing at f p / C (default: the "
        "probe's cores for the threads back end; none for mpi, a core per process)",
    )
    pr.add_argument(
        "--gl-speedup",
        action="store_true",
        help="also Gerbessiotis & Lee's speedup of their MatMul/MatMulG, p / (1 + sqrt(p) g / (f (n - 1))) with g "
        "of a put total exchange of 2 n^2 / p words (seed 002 sec. 4), for the cannon algorithms",
    )
    pr.add_argument("--json", metavar="FILE", help="write the predictions as one JSON object ('-': stdout)")
    pr.add_argument("-o", "--html", metavar="FILE", help="write a page with the tables and the speedup plots")


@dataclass(frozen=True)
class PredictOptions:
    algorithm: str
    sizes: str | None  # as written: parse_int_list's forms
    procs: str
    values: tuple[str, ...]
    settings: tuple[str, ...]
    params: tuple[str, ...]
    backend: str
    f: float | None
    f_from: str | None
    cores: int | None
    json: str | None
    html: str | None
    gl_speedup: bool = False


def options_from(args: argparse.Namespace) -> PredictOptions:
    return PredictOptions(
        algorithm=args.algorithm,
        sizes=args.size,
        procs=args.nprocs,
        values=tuple(comma_list(args.values, "--values")),
        settings=tuple(args.set),
        params=tuple(args.params),
        backend=args.backend,
        f=args.f,
        f_from=args.f_from,
        cores=args.cores,
        json=args.json,
        html=args.html,
        gl_speedup=args.gl_speedup,
    )


def number(text: str, what: str) -> int | float | str:
    """A problem parameter as the driver's JSON holds it: an integer, a number, else the word."""
    for kind in (int, float):
        try:
            return kind(text)  # type: ignore[no-any-return]
        except ValueError:
            pass
    if not text:
        raise UsageError(f"{what}: empty value")
    return text


def problems_of(options: PredictOptions, alg: al.Algorithm) -> list[dict[str, Any]]:
    """Every problem to predict: each size with each value of the second parameter."""
    base: dict[str, Any] = {}
    for setting in options.settings:
        key, sep, value = setting.partition("=")
        if not sep or not key:
            raise UsageError(f"--set {setting}: write KEY=VALUE, e.g. --set key_bits=64")
        base[key.strip()] = number(value.strip(), f"--set {key}")
    try:  # -n's forms, by the one parser; a value said as written (1e99 stays 1e99)
        sizes = parse_int_list(options.sizes, "--size", "problem size") if options.sizes is not None else []
    except ValueError as e:
        raise UsageError(str(e)) from None
    sizes = sizes or list(alg.sizes)
    if options.values and alg.sweep_param is None:
        raise UsageError(f"{alg.name} has no second parameter for --values")
    values: list[Any] = [number(v, "--values") for v in options.values] or [None]
    return [
        {**base, "n": n, **({alg.sweep_param: v} if v is not None and alg.sweep_param else {})}
        for n in sizes
        for v in values
    ]


def parameter_files(options: PredictOptions) -> list[Path]:
    """--params, else the newest probe of each p of the back end under results/probe/."""
    if options.params:
        return [Path(p) for p in options.params]
    newest = results.newest_probe_params_per_p(options.backend)
    if not newest:
        raise Failure(
            "no parameter file: give --params FILE (a probe's params.json, or one written by hand: "
            f"docs/probe-format.md), or run `bspkit probe -b {options.backend} -n P` first"
        )
    for path in newest.values():
        progress(f"parameters: {path}")
    return list(newest.values())


def read_rate(options: PredictOptions) -> Rate | None:
    from bspkit.model import predict as fc

    if options.f is not None:
        return fc.Rate(options.f, "--f on the command line", spread=0.0)
    if options.f_from is None:
        return None
    try:
        run = json.loads(Path(options.f_from).read_text())
    except OSError as e:
        raise Failure(f"--f-from {options.f_from}: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise Failure(f"--f-from {options.f_from}: not JSON: {e.msg} (line {e.lineno})") from None
    if not isinstance(run, Mapping):
        raise Failure(f"--f-from {options.f_from}: not a driver's JSON object")
    try:
        return fc.rate_from_run(run, options.algorithm)
    except fc.ForecastError as e:
        raise Failure(f"--f-from {options.f_from}: {e}") from None


def read_machine_files(
    files: Sequence[Path], rate_given: bool, primitives: Collection[str] | None = None
) -> list[Params]:
    """The parameter files, probes' or hand-written (the shorthand too), each checked: a
    hand-written one for what it lacks (its f need not be there when f is given; its g
    surfaces those of the primitives the algorithm communicates with, or put/*)."""
    from bspkit.commands._inputs import load_params
    from bspkit.model.params import is_hand_written, read_params_file
    from bspkit.model.supersteps import check_hand_written

    out = []
    for path in files:
        params = load_params(path, read_params_file)
        if is_hand_written(params):
            lacks = check_hand_written(params, primitives)
            missing = [m for m in lacks if not (rate_given and m.startswith("f:"))]
            if missing:
                raise Failure(f"{path} lacks what a prediction needs:\n  " + "\n  ".join(missing))
        out.append(params)
    return out


def machines_at(
    params: Sequence[Params], procs: Sequence[int], cores: int | None, paths: Sequence[Path] = ()
) -> dict[int, Machine]:
    """The machine at each p: the file at p, else l and g fitted over the files' p
    (bspkit.model.machine_scaling); its cores: those given, else the probe's when it ran on
    threads; its origin: the path of the one file it is, where it is one (paths: of params)."""
    from bspkit.model import machine_scaling as ms
    from bspkit.model import predict as fc

    machines = {}
    for p in procs:
        try:
            at = ms.params_at(params, p)
        except ms.MachineScalingError as e:
            raise Failure(str(e)) from None
        shared = fc.shared_cores(at.params, cores)
        of_p = [path for path, f in zip(paths, params, strict=False) if f.p == p]
        origin = of_p[0] if len(of_p) == 1 else (paths[0] if len(params) == 1 and paths else None)
        machines[p] = fc.Machine(
            at.params,
            at.source,
            fc.spread_of(at),
            tuple(at.warnings),
            cores=shared,
            origin=None if origin is None else str(origin),
        )
    return machines


def primitives_used(
    cost_of: Callable[[Mapping[str, Any], int], Cost], problems: Sequence[Mapping[str, Any]], procs: Sequence[int]
) -> set[str]:
    """The primitives the algorithm communicates with at the problems and p asked (a superstep
    without a label puts, as bspkit.model.supersteps reads it)."""
    return {
        step.primitive or "put"
        for problem in problems
        for p in procs
        for step in cost_of(problem, p).steps
        if step.sync and step.h > 0
    }


def gl_rows(result: Sweep, n_of: Callable[[Point], int]) -> list[GLSpeedup | None]:
    """G & L's speedup per point of the sweep (None at p = 1, where their formula has no
    exchange to charge): with the point's f, and g of a put total exchange on the point's
    machine under its model."""
    from bspkit.model import gl_speedup as gl

    out: list[GLSpeedup | None] = []
    for pt in result.points:
        if pt.p == 1:
            out.append(None)
            continue
        try:
            out.append(gl.gl_speedup(pt.machine.params, pt.p, n_of(pt), pt.f.s_per_unit, pt.best_model))
        except gl.GLError as e:
            raise Failure(f"--gl-speedup: {e}") from None
    return out


def gl_lines(result: Sweep, rows: Sequence[GLSpeedup | None]) -> list[str]:
    """The terminal's table of G & L's speedup beside the closed form's, a row per (n, p)."""
    from bspkit.model import gl_speedup as gl
    from bspkit.units import count, plain, quantity

    head = ["n", "p", "h words", "g per word", "GL speedup", "closed form's"]
    table = [
        [
            str(row.n),
            str(pt.p),
            count(row.h_words),
            f"{quantity(row.g_s_per_word, 's')}",
            plain(row.value, 3),
            "-" if pt.speedup is None else plain(pt.speedup, 3),
        ]
        for pt, row in zip(result.points, rows, strict=True)
        if row is not None
    ]
    if not table:
        return ["", "Gerbessiotis & Lee's speedup: none at p = 1 (their formula charges no exchange there)"]
    widths = [max(len(r[i]) for r in [head, *table]) for i in range(len(head))]
    first = next(row for row in rows if row is not None)
    return [
        "",
        f"Gerbessiotis & Lee's speedup {gl.FORMULA} ({gl.CITATION}): f = {quantity(first.f_s, 's')}/flop, g per "
        f"word of {first.g_source}:",
        *("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in [head, *table]),
    ]


def run(options: PredictOptions, extra: Sequence[str] = ()) -> int:
    from bspkit.model import costs
    from bspkit.model import gl_speedup as gl
    from bspkit.model import machine_scaling as ms
    from bspkit.model import model_choice as mc
    from bspkit.model import predict as fc
    from bspkit.pages import predict_report as fr

    alg = algorithm_arg(options.algorithm)
    if alg.cost is None:
        raise UsageError(f"{alg.name} has no closed-form cost; there is one for: {', '.join(al.closed_form_names())}")
    if options.gl_speedup and alg.driver not in gl.DRIVERS:
        gl_algs = ", ".join(a.name for a in al.ALGORITHMS.values() if a.driver in gl.DRIVERS)
        raise UsageError(
            f"--gl-speedup is Gerbessiotis & Lee's speedup of their MatMul and MatMulG: for {gl_algs}, not {alg.name}"
        )
    try:
        procs = list(dict.fromkeys(parse_procs(options.procs)))  # each p once, in the order asked
    except ValueError as e:
        raise UsageError(str(e)) from None
    problems = problems_of(options, alg)
    for out in (options.json, options.html):
        if out and out != "-":
            check_writable(Path(out), "--json" if out == options.json else "-o")
    rate = read_rate(options)

    def cost_of(problem: Mapping[str, Any], p: int) -> costs.Cost:
        try:
            return alg.closed_form(problem, p)
        except costs.CostError as e:
            raise Failure(str(e)) from None

    paths = parameter_files(options)
    files = read_machine_files(paths, rate is not None, primitives_used(cost_of, problems, procs))
    machines = machines_at(files, procs, options.cores, paths)
    # the speedup's base where p = 1 is not asked: a file at p = 1, not one extrapolated to it
    base_machine = None
    if 1 not in procs and any(f.p == 1 for f in files):
        base_machine = machines_at(files, [1], options.cores, paths)[1]

    # the model the newest validate of ALG found best (bspkit.model.model_choice), else the most detailed
    # the back end of the parameters (a file given with --params says its own), whose
    # validation is evidence for them
    backend = next(
        (str(b) for m in machines.values() if isinstance(b := (m.params.machine or {}).get("backend"), str)),
        options.backend,
    )
    evidence = mc.evidence(alg.name, backend)
    if evidence is not None and evidence.residual_sd and mc.same_backend(evidence, backend):
        # the band holds the model's own error as the algorithm's validation measured it
        machines = {
            p: replace(
                m,
                spread=replace(m.spread, validation=evidence.residual_sd, validation_source=evidence.residual_note()),
            )
            for p, m in machines.items()
        }
    try:
        result: Sweep = fc.sweep(
            alg.name,
            problems,
            procs,
            cost_of,
            machines,
            rate,
            order=lambda p: mc.order(evidence, p, backend),
            base_machine=base_machine,
        )
    except (fc.ForecastError, ms.MachineScalingError) as e:
        raise Failure(str(e)) from None
    gl_of = gl_rows(result, lambda pt: int(pt.cost.problem["n"])) if options.gl_speedup else []
    used = result.target().best_model
    say = sys.stderr if options.json == "-" else sys.stdout
    for line in fr.text(result):
        print(line, file=say)
    if options.gl_speedup:
        for line in gl_lines(result, gl_of):
            print(line, file=say)
    target_p = result.target().p
    print(mc.why(used, evidence, alg.name, target_p, backend), file=say)
    data = {**result.to_json(), "model_choice": mc.choice_json(used, evidence, alg.name, target_p, backend)}
    if options.gl_speedup:  # beside each point's own speedup, the target's at the top level
        for entry, row in zip(data["table"], gl_of, strict=True):
            entry["gl_speedup"] = None if row is None else row.to_json()
        data["gl_speedup"] = data["table"][-1]["gl_speedup"] if data["table"][-1]["p"] == target_p else None
    if options.html:
        write_text(Path(options.html), fr.html(result))
        print(f"page written to {options.html}", file=say)
    if options.json == "-":
        sys.stdout.write(json.dumps(data) + "\n")
    elif options.json:
        write_text(Path(options.json), json.dumps(data, indent=1) + "\n")
        print(f"predictions written to {options.json}", file=say)
    return 0
