"""bspkit.model.profile_scaling and `bspkit profile --scale`: the laws of a program's supersteps per
sync site fitted over profiles at several p and n, against synthetic programs whose laws are
known (synth_profile.SiteLaw), the predicted time against a hand computation with the
parameter file of test_predict, the command's errors, and a real program (the inner product
example) profiled at p = 1, 2, 3 and scaled to p = 4, against its own profile at p = 4."""

from __future__ import annotations

import json
import math
import os
import random
import statistics
import subprocess
from pathlib import Path

import numpy as np
import pytest
from synth_profile import SiteLaw, StepSpec, law_steps, log2p, records, write_profile

from bspkit.commands._args import parse_run_spec
from bspkit.model import profile as pf
from bspkit.model import profile_scaling as ps
from bspkit.model.params import Params

from conftest import REPO, bspkit_in_process, built_program, needs_programs, run_bspkit
from synth import L_EMPTY, PARAMS_JSON

# A program with three sites: one superstep of W = 3e-9 n^2 / p, no communication; log2 p
# supersteps each of W = 2e-8 n / p + 1e-6 and h = n / sqrt(p) (a shift: each process puts
# h words to the next one); the last superstep, ending at bsp_end, of W = 1e-4.
SITES = [
    SiteLaw(0x1000, lambda p, n: 1, lambda p, n: 3e-9 * n**2 / p),
    SiteLaw(0x2000, log2p, lambda p, n: 2e-8 * n / p + 1e-6, lambda p, n: round(n / math.sqrt(p))),
    SiteLaw(0x3000, lambda p, n: 1, lambda p, n: 1e-4, end="bsp_end"),
]
# each site's law of W, h and S as (n exponent, p exponent, log2 p exponent); None: constant
W_LAWS = [(2.0, -1.0, 0), (1.0, -1.0, 0), None]
H_LAW = (1.0, -0.5, 0)
S_LAW = (0.0, 0.0, 1)
# the parameter file's put/alltoall (what a shift falls back to): per-h levels, the smallest
# at h = 1024 (h below it takes its A and B); the g const regression g = 1.1e-9, l = 5e-6
A_SMALL, B_SMALL = 9.0e-6, 3.0e-8
G_CONST, L_CONST = 1.1e-9, 5.0e-6


def law_of(fitted: ps.FittedLaw | None) -> tuple[float, float, int] | None:
    assert fitted is not None
    return None if fitted.law.constant else (fitted.law.a, fitted.law.b, fitted.law.k)


def write_runs(
    tmp: Path,
    ps_: tuple[int, ...],
    ns: tuple[int, ...],
    noise: float = 0.0,
    seed: int = 1,
    sites: list[SiteLaw] = SITES,
    with_cpu: bool = True,
) -> list[str]:
    """One profile per (p, n), as RUN.jsonl@n=VALUE."""
    rng = random.Random(seed)
    out = []
    for p in ps_:
        for n in ns:
            steps = law_steps(p, n, sites, noise, rng)
            if not with_cpu:
                for s in steps:
                    s.cpu = None
            path = write_profile(tmp / f"p{p}_n{n}.jsonl", records(p, steps))
            out.append(f"{path}@n={n}")
    return out


def scale(texts: list[str], p: int, n: float | None) -> ps.Scaling:
    runs, use_cpu, names = ps.read_runs([parse_run_spec(t) for t in texts], addr2line="")
    return ps.scale_runs(runs, use_cpu, names, p, n)


def truth_time(p: int, n: float, model: str) -> float:
    """The synthetic program's time at (p, n) on PARAMS_JSON, by hand."""
    h = round(n / math.sqrt(p))
    comm = A_SMALL + B_SMALL * 1 if model == "g(h,h*)" else G_CONST * h + L_CONST
    return (
        SITES[0].work(p, n)
        + L_EMPTY  # a superstep without communication: the empty sync
        + log2p(p, n) * (SITES[1].work(p, n) + comm)
        + SITES[2].work(p, n)  # bsp_end: no sync
    )


# ------------------------------------------------------------------ the laws


def test_run_specs_with_and_without_a_size() -> None:
    assert parse_run_spec("a/run.jsonl@n=4000") == ps.RunSpec(Path("a/run.jsonl"), "n", 4000.0)
    assert parse_run_spec("run.jsonl@size=1.5e6") == ps.RunSpec(Path("run.jsonl"), "size", 1.5e6)
    assert parse_run_spec("me@host/run.jsonl") == ps.RunSpec(Path("me@host/run.jsonl"))
    for bad in ("run.jsonl@n=abc", "run.jsonl@n=-2", "run.jsonl@n=0"):
        with pytest.raises(ValueError, match="not a positive number"):
            parse_run_spec(bad)


@pytest.mark.parametrize(
    "law,c0,c1",
    [
        ((0.0, 1.0, 0), -1.0, 1.0),  # p - 1 (the inner product's h)
        ((0.0, 0.0, 1), 0.0, 1.0),  # log2 p (a tree's supersteps)
        ((1.0, -0.5, 0), 0.0, 1.0),  # n / sqrt p
        ((2.0, -1.0, 0), 1e-5, 3e-9),  # n^2 / p
        ((1.5, 0.5, 1), 2.0, 0.25),
        ((3.0, -1.0, 1), 0.0, 1e-12),
    ],
)
def test_exact_data_give_their_law_back(law: tuple[float, float, int], c0: float, c1: float) -> None:
    a, b, k = law
    pts = [(p, n) for p in (1, 2, 4, 8) for n in (100.0, 200.0, 400.0)]
    y = [c0 + c1 * n**a * p**b * math.log2(p) ** k for p, n in pts]
    fitted = ps.fit_law([p for p, _ in pts], [n for _, n in pts], y, integer=False)
    assert law_of(fitted) == law
    assert fitted.c0 == pytest.approx(c0, abs=1e-9 * max(abs(v) for v in y))
    assert fitted.c1 == pytest.approx(c1, rel=1e-9)
    assert fitted.cv_error is not None and fitted.cv_error < 1e-9


def test_integer_laws_are_exact_and_the_simplest_wins() -> None:
    p = [1.0, 2.0, 3.0, 4.0]
    h = ps.fit_law(p, [None] * 4, [0, 1, 2, 3], integer=True)
    assert law_of(h) == (0.0, 1.0, 0) and h.exact and h.text() == "p - 1"
    assert h.at(16, None) == 15
    constant = ps.fit_law(p, [None] * 4, [1, 1, 1, 1], integer=True)
    assert constant.law.constant and constant.exact and constant.text() == "1"
    # not integer data: never "exact", even where the law fits it
    assert not ps.fit_law(p, [None] * 4, [0.5, 1.5, 2.5, 3.5], integer=True).exact
    # a law that misses one run is not exact
    assert not ps.fit_law(p, [None] * 4, [0, 1, 2, 4], integer=True).exact


def test_a_program_of_known_laws_at_a_held_out_p(tmp_path: Path) -> None:
    """Runs at p = 1, 4, 16 and n = 1024, 2048: every site's law recovered, S and h exact,
    and the program at p = 64 as the laws make it, its time as computed by hand."""
    runs = write_runs(tmp_path, (1, 4, 16), (1024, 2048))
    sc = scale(runs, 64, 2048)
    assert sc.use_cpu and [s.key[1] for s in sc.sites] == ["bsp_sync", "bsp_sync", "bsp_end"]
    for site, truth, w_law in zip(sc.sites, SITES, W_LAWS, strict=True):
        assert law_of(site.W.law) == w_law
        assert site.W.source == "fitted" and site.W.value == pytest.approx(truth.work(64, 2048), rel=1e-9)
        assert site.S.source == "exact" and site.S.value == truth.S(64, 2048)
    tree = sc.sites[1]
    assert law_of(tree.S.law) == S_LAW and law_of(tree.h.law) == H_LAW
    assert tree.h.source == "exact" and tree.h.value == 256 and tree.count.value == 1
    assert (sc.S, sc.H) == (1 + 6, 6 * 256)
    ps.predict_scaling(sc, Params.from_json(PARAMS_JSON), "P.json")
    assert sc.best_model == "g(h,h*)"
    for model in ("g(h,h*)", "g const"):
        assert sc.models[model] == pytest.approx(truth_time(64, 2048, model), rel=1e-9), model
    # exact laws and noiseless work: the band is the prediction itself
    assert sc.interval_s is not None and sc.predicted_s is not None
    assert sc.interval_s == pytest.approx((sc.predicted_s, sc.predicted_s), rel=1e-9)
    # the machine's compute noise (10 %, log-normal) on the profiles' compute: the band holds
    # the compute's 10-90 % spread, +-12.8 % of its share of the time
    noise = 0.10

    def compute_noise(rng: np.random.Generator) -> float:
        return float(np.exp(rng.normal(0.0, noise)))

    ps.predict_scaling(sc, Params.from_json(PARAMS_JSON), "P.json", compute_noise=compute_noise)
    low, high = sc.interval_s
    compute = sum(truth.work(64, 2048) * truth.S(64, 2048) for truth in SITES)
    share = compute / sc.predicted_s
    assert high / sc.predicted_s - 1 == pytest.approx(share * (np.exp(1.2816 * noise) - 1), rel=0.25)
    assert 1 - low / sc.predicted_s == pytest.approx(share * (1 - np.exp(-1.2816 * noise)), rel=0.25)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_noisy_work_picks_the_right_law(tmp_path: Path, seed: int) -> None:
    """Work with 3 % noise per superstep: the laws of the two sites whose work grows with n
    found all the same, the work at p = 64 within 5 %, a band around the prediction, and the
    leave-one-out error near the noise."""
    runs = write_runs(tmp_path, (1, 2, 4, 8, 16), (1024, 2048, 4096), noise=0.03, seed=seed)
    sc = scale(runs, 64, 4096)
    for site, truth, w_law in zip(sc.sites[:2], SITES[:2], W_LAWS[:2], strict=True):
        assert law_of(site.W.law) == w_law
        assert site.W.value == pytest.approx(truth.work(64, 4096), rel=0.05)
        assert site.W.law is not None and site.W.law.cv_error is not None and 0.003 < site.W.law.cv_error < 0.05
    # S = log2 p is exact; h = n / sqrt(p) is rounded to words at p = 2, 8: fitted, near
    assert sc.sites[1].S.source == "exact" and sc.sites[1].S.value == 6
    assert sc.sites[1].h.source == "fitted" and sc.sites[1].h.value == pytest.approx(4096 / 8, rel=0.01)
    ps.predict_scaling(sc, Params.from_json(PARAMS_JSON), "P.json")
    assert sc.interval_s is not None and sc.predicted_s is not None
    low, high = sc.interval_s
    assert low < high and low <= sc.predicted_s <= high
    assert high / low < 1.2
    assert sc.predicted_s == pytest.approx(truth_time(64, 4096, "g(h,h*)"), rel=0.05)


def test_cpu_time_is_the_work_and_wall_clock_without_it(tmp_path: Path) -> None:
    """The synthetic runs crowd 2 cores: the wall clock's compute is the work times p / 2.
    With cpu_s the law is the work's; a profile without cpu_s falls back to compute_s (whose
    law is another), with a note."""
    sc = scale(write_runs(tmp_path, (1, 4, 16), (1024, 2048)), 64, 2048)
    assert sc.use_cpu and law_of(sc.sites[0].W.law) == (2.0, -1.0, 0)
    older = tmp_path / "older"
    older.mkdir()
    sc = scale(write_runs(older, (1, 4, 16), (1024, 2048), with_cpu=False), 64, 2048)
    assert not sc.use_cpu and law_of(sc.sites[0].W.law) != (2.0, -1.0, 0)
    assert any("no cpu_s" in n for n in sc.notes)


def test_cpu_of_the_superstep_records(tmp_path: Path) -> None:
    """profile.StepStats.cpu: max, mean, min of cpu_s over the processes; None without it."""
    steps = [StepSpec([0.3, 0.4], [0.1, 0.1], cpu=[0.1, 0.2]), StepSpec([0.2, 0.2], [0.0, 0.0], end="bsp_end")]
    a = pf.analyze(pf.read_profile(write_profile(tmp_path / "r.jsonl", records(2, steps))), addr2line="")
    cpu = a.steps[0].cpu
    assert cpu is not None and (cpu.max, cpu.mean, cpu.min) == pytest.approx((0.2, 0.15, 0.1))
    assert a.steps[1].cpu is None
    assert a.to_json()["supersteps"][0]["cpu_s"]["max"] == pytest.approx(0.2)


def test_a_site_missing_from_some_runs_has_no_supersteps_there(tmp_path: Path) -> None:
    """S = log2 p: the site is absent at p = 1 (S = 0); its h is fitted over the runs that have
    it, and its S law counts the run without it."""
    sc = scale(write_runs(tmp_path, (1, 2, 4, 8), (1000,)), 32, None)
    tree = sc.sites[1]
    assert tree.S.law is not None and tree.S.law.points == 4 and tree.S.value == 5
    assert tree.h.law is not None and tree.h.law.points == 3
    assert law_of(tree.h.law) == (0.0, -0.5, 0) and tree.h.value == pytest.approx(1000 / math.sqrt(32), rel=0.01)
    assert tree.h.source == "fitted"  # 1000 / sqrt(p) is rounded in the runs: not exact


def test_a_measured_target_is_taken_as_measured(tmp_path: Path) -> None:
    sc = scale(write_runs(tmp_path, (1, 2, 4), (1000, 2000)), 4, 2000)
    target = sc.measured_at_target()
    assert target is not None and target.p == 4 and target.n == 2000
    for site, truth in zip(sc.sites, SITES, strict=True):
        assert (site.S.source, site.W.source, site.h.source) == ("measured",) * 3
        assert site.W.value == pytest.approx(truth.work(4, 2000), rel=1e-9)


def test_too_few_runs_and_inconsistent_sizes(tmp_path: Path) -> None:
    with pytest.raises(ps.ScalingError, match=r"runs at p = 1, 2: the laws need runs at 3 values of p"):
        scale(write_runs(tmp_path, (1, 2), (100, 200, 400)), 4, 400)
    runs = write_runs(tmp_path, (1, 2, 4), (100, 200))
    with pytest.raises(ps.ScalingError, match="but not for"):
        scale([*runs[:-1], runs[-1].split("@")[0]], 8, 200)
    with pytest.raises(ps.ScalingError, match="several sizes .n = 100, 200.: say which one to predict"):
        scale(runs, 8, None)
    with pytest.raises(ps.ScalingError, match="name their problem size differently"):
        scale([*runs[:-1], runs[-1].replace("@n=", "@size=")], 8, 200)
    bare = [r.split("@")[0] for r in runs if r.endswith("@n=100")]
    with pytest.raises(ps.ScalingError, match="needs runs that give theirs"):
        scale(bare, 8, 100)


# ------------------------------------------------------------------ the command


def test_command_json_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = write_runs(tmp_path, (1, 4, 16), (1024, 2048))
    params = tmp_path / "P.json"
    params.write_text(Params.from_json(PARAMS_JSON).dumps())
    out = tmp_path / "scaling.json"
    rc, stdout, err = bspkit_in_process(
        capsys,
        "profile",
        "--scale",
        *runs,
        "-n",
        "64",
        "--to-size",
        "2048",
        "--params",
        str(params),
        "--json",
        str(out),
    )
    assert rc == 0, err
    d = json.loads(out.read_text())
    assert d["tool"] == "bspkit-profile-scaling" and d["p"] == 64 and d["n"] == 2048 and d["work"] == "cpu_s"
    assert d["predicted_s"] == pytest.approx(truth_time(64, 2048, "g(h,h*)"), rel=1e-9)
    assert d["models"]["g const"] == pytest.approx(truth_time(64, 2048, "g const"), rel=1e-9)
    assert d["best_model"] == "g(h,h*)" and len(d["interval_s"]) == 2 and len(d["runs"]) == 6
    tree = d["supersteps"][1]
    assert tree["S"]["value"] == 6 and tree["S"]["source"] == "exact" and tree["S"]["law"] == "log2(p)"
    assert tree["H"]["value"] == 6 * 256 and tree["H"]["per_superstep"] == 256 and tree["H"]["law"] == "n*p^-0.5"
    assert tree["W"]["source"] == "fitted" and tree["W"]["fit"]["n_exponent"] == 1.0
    assert tree["W"]["error"] == pytest.approx(0.0, abs=1e-9)
    assert "log2(p): exact" in stdout and "<- predicted_s" in stdout
    # --json -: the object alone on stdout; --model chooses predicted_s' model
    rc, stdout, err = bspkit_in_process(
        capsys, "profile", "--scale", *runs, "--to-p", "64", "--to-size", "2048", "--params", str(params),
        "--model", "g const", "--json", "-",
    )  # fmt: skip
    assert rc == 0, err
    d = json.loads(stdout)
    assert d["best_model"] == "g const" and d["predicted_s"] == d["models"]["g const"]
    # --compute-scale: the work twice as long on the target machine
    rc, stdout, err = bspkit_in_process(
        capsys, "profile", "--scale", *runs, "-n", "64", "--to-size", "2048", "--params", str(params),
        "--compute-scale", "2", "--json", "-",
    )  # fmt: skip
    d = json.loads(stdout)
    assert rc == 0 and d["compute_scale"] == 2.0
    assert d["predicted_s"] == pytest.approx(truth_time(64, 2048, "g(h,h*)") + d["W_s"], rel=1e-9)
    # without --params: the laws and the totals at the target, no time
    rc, stdout, err = bspkit_in_process(
        capsys, "profile", "--scale", *runs, "-n", "64", "--to-size", "2048", "--json", "-"
    )
    d = json.loads(stdout)
    assert rc == 0 and d["predicted_s"] is None and d["H"] == 6 * 256 and d["S"] == 7


def test_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = write_runs(tmp_path, (1, 2), (100,))
    rc, _, err = bspkit_in_process(capsys, "profile", "--scale", *runs, "-n", "4")
    assert rc == 1 and "the laws need runs at 3 values of p" in err
    rc, _, err = bspkit_in_process(capsys, "profile", "--scale", *runs)
    assert rc == 2 and "--to-p" in err
    rc, _, err = bspkit_in_process(capsys, "profile", runs[0].split("@")[0], "--to-p", "4")
    assert rc == 2 and "--to-p goes with --scale" in err
    rc, _, err = bspkit_in_process(capsys, "profile")
    assert rc == 2 and "--scale" in err
    rc, _, err = bspkit_in_process(capsys, "profile", "--scale", *runs, "-n", "4", "--model", "g(x)")
    assert rc == 2 and "invalid choice" in err
    rc, _, err = bspkit_in_process(capsys, "profile", "--scale", str(tmp_path / "none.jsonl"), *runs, "-n", "4")
    assert rc == 1 and "none.jsonl: no such file" in err


# ------------------------------------------------------------------ a real program


def profile_inner_product(tmp: Path, exe: Path, p: int, n: int, rep: int) -> Path:
    prof = tmp / f"inprod_p{p}_n{n}_{rep}.jsonl"
    env = {**os.environ, "BSPKIT_PROFILE": str(prof)}
    cmd = [str(built_program("bsprun")), "-b", "threads", "-n", str(p), str(exe), str(n)]
    subprocess.run(cmd, check=True, timeout=120, env=env, capture_output=True)
    return prof


@pytest.mark.slow
@needs_programs("bsprun", "bspcc")
def test_inner_product_scaled_to_p4_against_its_profile_at_p4(tmp_path: Path) -> None:
    """examples/inner_product.c profiled 3 times at each p = 1, 2, 3 and n = 1e6, 2e6 on
    threads (more processes than this machine may have cores: the work is CPU time; the
    repetitions' median is fitted, so a busy moment of a shared machine does not bend the
    laws) and scaled to p = 4: per site the supersteps and the h-relation exactly as its own
    profiles at p = 4 have them (h = p - 1: each process puts its partial sum to every
    other); the work near: the partial inner product's within 50 % (its CPU time per element
    depends on what the other core does with the memory bandwidth), the whole work within a
    factor 2, as the first superstep's is mostly page faults of first-touched memory, whose
    CPU time varies from run to run (and, threads sharing one address space, does not fall
    as 1/p)."""
    exe = tmp_path / "inprod"
    subprocess.run(
        [str(built_program("bspcc")), "-O2", "-g", "-o", str(exe), str(REPO / "examples" / "inner_product.c")],
        check=True,
    )
    sizes = (1_000_000, 2_000_000)
    reps = range(3)
    runs = [f"{profile_inner_product(tmp_path, exe, p, n, i)}@n={n}" for p in (1, 2, 3) for n in sizes for i in reps]
    at4 = [pf.analyze(pf.read_profile(profile_inner_product(tmp_path, exe, 4, sizes[1], i))) for i in reps]
    measured = at4[0]
    out = tmp_path / "scaling.json"
    r = run_bspkit("profile", "--scale", *runs, "--to-p", "4", "--to-size", str(sizes[1]), "--json", str(out))
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["work"] == "cpu_s" and d["p"] == 4
    # the sites in program order: the registration's sync, the puts' sync, bsp_end
    by_site = {s.site: s for s in measured.steps}
    assert [s["site"] for s in d["supersteps"]] == list(by_site)
    for site in d["supersteps"]:
        step = by_site[site["site"]]
        assert (site["S"]["value"], site["S"]["source"]) == (1, "exact")
        if site["end"] == "bsp_sync":
            assert (site["H"]["value"], site["H"]["source"]) == (step.h, "exact")
            assert site["count"]["value"] == step.count
    assert d["H"] == measured.H == 3 and d["S"] == measured.S == 2
    assert d["supersteps"][1]["H"]["law"] == "p - 1"
    measured_cpu = [
        statistics.median(s.cpu.max if s.cpu is not None else math.nan for s in steps)
        for steps in zip(*(a.steps for a in at4), strict=True)
    ]
    assert d["supersteps"][1]["W"]["value"] == pytest.approx(measured_cpu[1], rel=0.5)
    assert 0.5 < d["W_s"] / sum(measured_cpu) < 2.0
    # the two supersteps that touch the vectors: their work grows with n and falls with p
    for site in d["supersteps"][:2]:
        fit = site["W"]["fit"]
        assert fit["n_exponent"] >= 0.5 and fit["p_exponent"] <= -0.5, site["W"]


def test_processes_beyond_the_cores_take_turns_at_all_the_work() -> None:
    """On fewer cores than processes a superstep computes max(the largest process's work, all
    the work over the cores): a wavefront's superstep with one busy process costs its work, one
    with every process busy costs the sum over the cores."""
    from bspkit.model.params import Params
    from bspkit.model.profile_scaling import Estimate, SiteScaling, _site_time
    from bspkit.model.supersteps import empty_sync_s

    from synth import PARAMS_JSON

    params = Params.from_json(PARAMS_JSON)
    l_empty = empty_sync_s(params)
    one = Estimate(1.0, "exact", None)
    zero = Estimate(0.0, "exact", None)
    site = SiteScaling((None, "bsp_sync", ()), "x", one, one, zero, zero, None, None, Estimate(8.0, "fitted", None))
    alone = _site_time(site, params, "g const", 1.0, 2, 1.0, 0, 0)
    shared = _site_time(site, params, "g const", 1.0, 2, 1.0, 0, 0, cores=2, W_all=8.0)
    one_busy = _site_time(site, params, "g const", 1.0, 2, 1.0, 0, 0, cores=2, W_all=1.0)
    assert alone == pytest.approx(2 * (1.0 + l_empty))
    assert shared == pytest.approx(2 * (4.0 + l_empty))
    assert one_busy == pytest.approx(alone)
