"""bspkit.model.profile and `bspkit profile`: the BSP cost of a superstep profile
(docs/profile-format.md) written from known per-superstep values (synth_profile), the
prediction of the run from a parameter file against hand computations, the sync sites
resolved by addr2line on real programs (PIE and fixed-address), the command's errors, and
the HTML report."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from synth_profile import StepSpec, records, write_profile

from bspkit.measure import sites as st
from bspkit.model import profile as pf
from bspkit.model.comm_models import NAMES as MODELS
from bspkit.model.params import Params
from bspkit.units import quantity

from conftest import (
    assert_self_contained,
    bspkit_in_process,
    built_program,
    missing_dependency,
    needs_programs,
    report_pngs,
    run_bspkit,
)
from synth import L_EMPTY, PARAMS_JSON

# Three processes, four supersteps:
#  0: puts. 0 -> 1: 2 messages, 10 words; 0 -> 2: 1, 5; 1 -> 2: 3, 30.
#     sent (15, 30, 0), received (0, 10, 35): h = 35; messages (3, 3, 0): count 3; h* = 45 / 6
#  1: gets. 0 gets 40 words from 1 in 4 messages, 2 gets 8 from 1 in 1; 1 puts 2 words to 0.
#     The owner sends what is got: sent (0, 50, 0), received (42, 0, 8): h = 50, count 6
#  2: no communication (l only)
#  3: local work, ended by bsp_end
STEPS = [
    StepSpec([1.0, 2.0, 3.0], [0.5, 0.5, 0.5], out={0: [(1, 2, 10), (2, 1, 5)], 1: [(2, 3, 30)]}),
    StepSpec(
        [0.4, 0.2, 0.2],
        [0.1, 0.1, 0.1],
        wait=[0.0, 0.05, 0.02],
        in_get={0: [(1, 4, 40)], 2: [(1, 1, 8)]},
        out={1: [(0, 1, 2)]},
        self_words={1: 7},
    ),
    StepSpec([0.1, 0.1, 0.1], [0.01, 0.01, 0.01], push_reg=1, site=(0, 0x2000)),
    StepSpec([0.2, 0.3, 0.1], [0.001, 0.001, 0.001], end="bsp_end", site=None),
]
W = 3.0 + 0.4 + 0.1 + 0.3


def write(tmp_path: Path, steps: list[StepSpec] = STEPS, name: str = "run.jsonl", **kw: Any) -> Path:
    return write_profile(tmp_path / name, records(3, steps, **kw))


@pytest.fixture
def analysis(tmp_path: Path) -> pf.Analysis:
    return pf.analyze(pf.read_profile(write(tmp_path)), addr2line="")


# ------------------------------------------------------------------ the BSP cost


def test_communication_pattern_from_the_traffic() -> None:
    """The probe's patterns (docs/probe-format.md) read off who sends to whom: a process with
    two partners is the probe's all-to-all with c = 2 (requests to different processes), even
    where a driver calls its superstep a permutation (Cannon's two shifts)."""
    p = 4
    assert pf.communication_pattern([], p) is None
    assert pf.communication_pattern([(q, (q + 1) % p) for q in range(p)], p) == "shift"
    assert pf.communication_pattern([(0, 2), (2, 0), (1, 3), (3, 1)], p) == "shift"  # by 2
    assert pf.communication_pattern([(0, 1), (1, 0), (2, 3), (3, 2)], p) == "permutation"
    assert pf.communication_pattern([(0, 1), (1, 0), (2, 3)], p) == "permutation"
    assert pf.communication_pattern([(0, 1), (0, 2)], p) == "alltoall"  # one sends to two
    assert pf.communication_pattern([(0, 3), (1, 3)], p) == "alltoall"  # one receives from two


def test_h_relation_counts_and_totals(analysis: pf.Analysis) -> None:
    a = analysis
    assert a.p == 3 and len(a.steps) == 4
    s0, s1, s2, s3 = a.steps
    assert (s0.sent, s0.received, s0.messages) == ([15, 30, 0], [0, 10, 35], [3, 3, 0])
    assert (s0.h, s0.count, s0.words, s0.msg_words, s0.primitive) == (35, 3, 45, 7.5, "put")
    assert s0.h_inout == 40  # thesis eq. 2.2: process 1 sends 30 and receives 10
    # gets: the owner (1) sends the data it is asked for
    assert (s1.sent, s1.received, s1.messages) == ([0, 50, 0], [42, 0, 8], [0, 6, 0])
    # c: the requests each process issued, the gets counted for their callers (the drivers'
    # and the probe's count), not the messages the owner sends back
    assert s0.issued == [3, 3, 0] and s1.issued == [4, 1, 1]
    assert (s1.h, s1.count, s1.words, s1.primitive) == (50, 4, 50, "get")
    assert s1.msg_words == pytest.approx(50 / 6)
    assert s1.self_words == 7  # to itself: not communication
    assert (s2.h, s2.count, s2.msg_words, s2.primitive, s2.push_reg) == (0, 0, 0.0, None, 1)
    assert [s.end for s in a.steps] == ["bsp_sync"] * 3 + ["bsp_end"]
    assert (a.S, a.H) == (3, 85)
    assert a.W_s == pytest.approx(W, rel=1e-12)
    # per process over the run
    assert [ps.sent_words for ps in a.processes] == [15, 80, 0]
    assert [ps.received_words for ps in a.processes] == [42, 10, 43]
    assert a.measured_s == pytest.approx(max(ps.total_s for ps in a.processes))
    assert a.processes[2].compute_s == pytest.approx(3.0 + 0.2 + 0.1 + 0.1)


def test_compute_spread_imbalance_wait_and_cost(analysis: pf.Analysis) -> None:
    s0, s1, s2, s3 = analysis.steps
    assert (s0.compute.max, s0.compute.mean, s0.compute.min) == pytest.approx((3.0, 2.0, 1.0))
    assert s0.imbalance == pytest.approx(1.5)
    assert s1.imbalance == pytest.approx(0.4 / (0.8 / 3))
    assert s2.imbalance == pytest.approx(1.0)
    assert (s1.wait.max, s1.wait.mean, s1.wait.min) == pytest.approx((0.05, 0.07 / 3, 0.0))
    assert s0.time_s == pytest.approx(3.5)  # max over processes of compute + sync
    assert [s.step for s in analysis.costliest(2)] == [0, 1]
    assert analysis.wait_s == pytest.approx(0.25 + 0.05 + 0.005 + 0.0005)
    # the supersteps' starts on the shared clock: process 0 began first (t0 1000.000)
    assert s0.start_s == 0.0
    assert s1.start_s == pytest.approx(1.5)
    assert pf.process_origins(analysis.profile) == pytest.approx([0.0, 0.001, 0.002])


def test_clocks_of_several_hosts_are_not_compared(tmp_path: Path) -> None:
    # bsp_begins hours apart: monotonic clocks of different hosts, each from its own boot
    prof = pf.read_profile(write(tmp_path, t0=[1000.0, 9000.0, 5000.0]))
    assert pf.process_origins(prof) == [0.0, 0.0, 0.0]


def test_by_site_groups_supersteps(analysis: pf.Analysis) -> None:
    rows = {r["site"]: r for r in analysis.by_site()}
    # no addr2line here: the fallback names the object and the offset
    assert set(rows) == {"synth+0x1234", "synth+0x2000", "unknown"}
    assert rows["synth+0x1234"]["supersteps"] == 2 and rows["synth+0x1234"]["H"] == 85


def test_phases_group_supersteps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    phases = ["setup", "rep 1", "rep 1", "check"]
    steps = [dataclasses.replace(s, phase=ph) for s, ph in zip(STEPS, phases, strict=True)]
    a = pf.analyze(pf.read_profile(write(tmp_path, steps)), addr2line="")
    assert [s.phase for s in a.steps] == phases
    rows = a.by_phase()
    assert [(r["phase"], r["supersteps"], r["first_step"], r["H"]) for r in rows] == [
        ("setup", 1, 0, 35),
        ("rep 1", 2, 1, 50),
        ("check", 1, 3, 0),
    ]
    assert rows[1]["compute_max_s"] == pytest.approx(0.5)
    assert not analysis_of(tmp_path).has_phases and analysis_of(tmp_path).by_phase() == []
    rc, out, err = bspkit_in_process(capsys, "profile", str(tmp_path / "run.jsonl"))
    assert rc == 0 and re.search(r"rep 1\s+2\s+", out), out
    # one phase alone: its supersteps, timed from the first one's start to the last one's end
    rep = pf.analyze(a.profile, addr2line="", phase="rep 1")
    assert [s.step for s in rep.steps] == [1, 2] and (rep.S, rep.H, rep.phase) == (2, 50, "rep 1")
    assert rep.W_s == pytest.approx(0.4 + 0.1)
    # process 2 began 2 ms after process 0 and ended the phase last: 3.5 + 0.3 + 0.11 s after its start
    assert rep.measured_s == pytest.approx(0.002 + 3.91 - 1.5)
    assert rep.processes[0].total_s == pytest.approx(0.5 + 0.11)
    with pytest.raises(pf.ProfileError, match=r"no superstep of phase 'rep 2' \(its phases: setup, rep 1, check\)"):
        pf.analyze(a.profile, phase="rep 2")
    rc, out, err = bspkit_in_process(capsys, "profile", str(tmp_path / "run.jsonl"), "--phase", "nope")
    assert rc == 1 and "no superstep of phase 'nope'" in err
    rc, out, err = bspkit_in_process(capsys, "profile", str(tmp_path / "run.jsonl"), "--phase", "rep 1")
    assert rc == 0 and "(phase 'rep 1')" in out and "S = 2 supersteps;" in out


def analysis_of(tmp_path: Path) -> pf.Analysis:
    return pf.analyze(pf.read_profile(write(tmp_path, name="plain.jsonl")), addr2line="")


def test_dominant_primitive_by_bytes_then_calls() -> None:
    assert pf.dominant_primitive({"put": [10, 80], "hpget": [1, 800]}) == "hpget"
    assert pf.dominant_primitive({"put": [10, 80], "send": [2, 80]}) == "put"
    assert pf.dominant_primitive({}) is None and pf.dominant_primitive({"put": [0, 0]}) is None


def test_json_of_the_analysis(tmp_path: Path) -> None:
    path = write(tmp_path)
    out = tmp_path / "a.json"
    r = run_bspkit("profile", str(path), "--json", str(out), "--top", "2")
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["tool"] == "bspkit-profile-analysis" and d["p"] == 3 and d["S"] == 3 and d["H"] == 85
    assert d["W_s"] == pytest.approx(W)
    assert [s["h"] for s in d["supersteps"]] == [35, 50, 0, 0]
    assert [s["count"] for s in d["supersteps"]] == [3, 4, 0, 0]
    assert d["costliest"] == [0, 1]
    assert "prediction" not in d
    # --json -: the object alone on stdout, the summary on stderr
    r = run_bspkit("profile", str(path), "--json", "-")
    assert r.returncode == 0 and json.loads(r.stdout)["H"] == 85 and "S = 3 supersteps" in r.stderr


# ------------------------------------------------------------------ prediction

# the parameter file of test_predict: put/alltoall with per-h levels, get/permutation with
# global fits only; l empty L_EMPTY
A_SMALL, B_SMALL = 9.0e-6, 3.0e-8  # the smallest level (h = 1024): h below it takes it
COMM = {  # per superstep 0 (put, h 35, 3 messages), 1 (get, h 50, 6 messages), 2 (empty)
    "g const": [1.1e-9 * 35 + 5.0e-6, 2.5e-9 * 50 + L_EMPTY, L_EMPTY],
    "g(h)": [A_SMALL, 3.0e-9 * (50 + 800.0), L_EMPTY],
    "g(h,h*)": [A_SMALL + B_SMALL * 3, 3.0e-9 * (50 + 800.0 + 0.0 * 6), L_EMPTY],
    # the seeds': the global fits plus l0; the all-to-all g_inf plus l after an all-to-all
    # (4 us) in every superstep; g(h,h*) at h_inout / 2 (h_inout 40 and 50: 20 and 25 words)
    "g(h,h*)+l0": [1.0e-9 * (35 + 1500.0 + 20.0 * 3) + L_EMPTY, 3.0e-9 * (50 + 800.0) + L_EMPTY, L_EMPTY],
    "thesis g const": [1.0e-9 * 35 + 4.0e-6, 3.0e-9 * 50 + 4.0e-6, 4.0e-6],
    "g(h,h*) [in+out]": [A_SMALL + B_SMALL * 3, 3.0e-9 * (25 + 800.0), L_EMPTY],
}
COMPUTE = [3.0, 0.4, 0.1, 0.3]


def params_with(f: float | None = None, machine: dict[str, Any] | None = None, p: int = 2) -> Params:
    d = copy.deepcopy(PARAMS_JSON)
    d["p"] = p
    if f is not None:
        d["f"] = {"dot_double_naive": f}
    if machine is not None:
        d["machine"] = machine
    return Params.from_json(d)


def test_prediction_per_superstep_and_total(analysis: pf.Analysis) -> None:
    pred = pf.predict_run(analysis, params_with(), "P.json", compute_scale=2.0)
    assert pred.compute_s == pytest.approx(2.0 * W)
    for m in MODELS:
        for k in range(3):
            assert pred.steps[k]["comm_s"][m] == pytest.approx(COMM[m][k], rel=1e-12), (m, k)
            assert pred.steps[k]["time_s"][m] == pytest.approx(2.0 * COMPUTE[k] + COMM[m][k], rel=1e-12), (m, k)
        assert pred.steps[3]["comm_s"][m] == 0.0  # bsp_end: compute only
        assert pred.steps[3]["time_s"][m] == pytest.approx(2.0 * 0.3)
        assert pred.comm[m] == pytest.approx(sum(COMM[m]), rel=1e-12)
        assert pred.total[m] == pytest.approx(2.0 * W + sum(COMM[m]), rel=1e-12)
    assert not pred.same_machine
    # our three models tell this run apart
    assert len({round(pred.comm[m], 15) for m in ("g const", "g(h)", "g(h,h*)")}) == 3


def test_compute_scale_from_the_computing_rates() -> None:
    here = params_with(f=1.0e-9)  # r here 1 Gflop/s
    there = params_with(f=4.0e-9)  # r there 250 Mflop/s: compute takes 4 times as long
    scale, note = pf.rate_scale(there, here)
    assert scale == pytest.approx(4.0)
    assert "r here 1,000 Mflop/s" in note and "r there 250 Mflop/s" in note
    with pytest.raises(pf.pd.PredictionError, match="--params file has no f"):
        pf.rate_scale(params_with(), here)


def test_same_machine_is_host_backend_and_p(analysis: pf.Analysis) -> None:
    here = {"host": "synthhost", "backend": "threads"}
    assert pf.same_machine(analysis, params_with(machine=here, p=3))
    assert not pf.same_machine(analysis, params_with(machine=here, p=2))
    assert not pf.same_machine(analysis, params_with(machine={**here, "backend": "mpi"}, p=3))


def write_params(path: Path, params: Params) -> Path:
    path.write_text(params.dumps())
    return path


def test_command_predicts_with_the_model_of_here(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prof = write(tmp_path)
    there = write_params(tmp_path / "there.json", params_with(f=4.0e-9, machine={"host": "cluster"}))
    here = write_params(
        tmp_path / "here.json", params_with(f=1.0e-9, machine={"host": "synthhost", "backend": "threads"}, p=3)
    )
    js = tmp_path / "a.json"
    rc, out, err = bspkit_in_process(
        capsys, "profile", str(prof), "--params", str(there), "--compute-from", str(here), "--json", str(js)
    )
    assert rc == 0, err
    d = json.loads(js.read_text())
    pred, model_here = d["prediction"], d["model_of_here"]
    assert pred["compute_scale"] == pytest.approx(4.0)
    for m in MODELS:
        assert pred["total_s"][m] == pytest.approx(4.0 * W + sum(COMM[m]), rel=1e-12)
        assert model_here["total_s"][m] == pytest.approx(W + sum(COMM[m]), rel=1e-12)
    assert "model of here" in out and "g(h,h*)" in out
    # --compute-scale: given; the file of another machine has no model of here
    rc, out, err = bspkit_in_process(
        capsys, "profile", str(prof), "--params", str(there), "--compute-scale", "0.5", "--json", str(js)
    )
    assert rc == 0, err
    d = json.loads(js.read_text())
    assert d["prediction"]["total_s"]["g(h)"] == pytest.approx(0.5 * W + sum(COMM["g(h)"]), rel=1e-12)
    assert d["model_of_here"] is None
    # the parameter file of this host, back end and p is its own model of here
    rc, out, err = bspkit_in_process(capsys, "profile", str(prof), "--params", str(here), "--json", str(js))
    d = json.loads(js.read_text())
    assert d["prediction"]["same_machine"] and d["model_of_here"] == d["prediction"]


# ------------------------------------------------------------------ sync sites

SITE_PROGRAM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

/* prints what libbsp records of a bsp_sync call: the object, its load address and the
   return address' offset from it */
__attribute__((noinline)) static void record_site(void) {
  void *ret = __builtin_return_address(0);
  Dl_info info;
  if (!dladdr(ret, &info)) return;
  printf("%lx %lx\n", (unsigned long)(uintptr_t)info.dli_fbase,
         (unsigned long)((uintptr_t)ret - (uintptr_t)info.dli_fbase));
}

int main(void) {
  record_site(); /* the call site */
  return 0;
}
"""
CALL_LINE = next(i for i, ln in enumerate(SITE_PROGRAM.splitlines(), 1) if "the call site" in ln)
needs_toolchain = pytest.mark.skipif(
    not (shutil.which("cc") and st.addr2line_program()),
    reason=missing_dependency("a C compiler", "no cc")
    if not shutil.which("cc")
    else missing_dependency("binutils", "no addr2line"),
)


def compile_site_program(tmp_path: Path, name: str, flags: list[str]) -> tuple[Path, int, int]:
    """The program built with flags and run: (its path, load address, return offset)."""
    src = tmp_path / "site.c"
    src.write_text(SITE_PROGRAM)
    exe = tmp_path / name
    subprocess.run(["cc", "-O0", *flags, "-o", str(exe), str(src)], check=True)
    base, offset = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()
    return exe, int(base, 16), int(offset, 16)


@needs_toolchain
@pytest.mark.parametrize(
    "flags,etype", [(["-g", "-fPIE", "-pie"], st.ET_DYN), (["-g", "-fno-pie", "-no-pie"], st.ET_EXEC)]
)
def test_sites_resolve_to_the_call_line(tmp_path: Path, flags: list[str], etype: int) -> None:
    exe, base, offset = compile_site_program(tmp_path, "prog", flags)
    assert st.elf_type(exe) == etype
    key = st.SiteKey(str(exe), base, offset)
    site = st.resolve([key])[key]
    assert (Path(site.file or "").name, site.line, site.function) == ("site.c", CALL_LINE, "main")
    assert site.short() == f"site.c:{CALL_LINE} (main)"
    # through a profile: every process synced there (the objects listed per process)
    steps = [StepSpec([0.1] * 3, [0.01] * 3, site=(0, offset)), StepSpec([0.1] * 3, [0.0] * 3, end="bsp_end")]
    prof = write_profile(tmp_path / "p.jsonl", records(3, steps, objects=[{"path": str(exe), "base": hex(base)}]))
    a = pf.analyze(pf.read_profile(prof))
    assert a.steps[0].site == f"site.c:{CALL_LINE} (main)"


@needs_toolchain
def test_sites_without_debug_info_or_object(tmp_path: Path) -> None:
    exe, base, offset = compile_site_program(tmp_path, "nodebug", ["-fPIE", "-pie"])
    key = st.SiteKey(str(exe), base, offset)
    # the symbol table still names the function
    assert st.resolve([key])[key].short() == f"nodebug+{offset:#x} (main)"
    gone = st.SiteKey(str(tmp_path / "gone"), base, offset)
    assert st.resolve([gone])[gone].short() == f"gone+{offset:#x}"
    # no addr2line: the object and the offset
    assert st.resolve([key], program="")[key].short() == f"nodebug+{offset:#x}"


def test_site_lookup_address_and_describe() -> None:
    key = st.SiteKey("/x/prog", 0x400000, 0x1A2B)
    assert st.lookup_address(key, st.ET_DYN) == 0x1A2A
    assert st.lookup_address(key, st.ET_EXEC) == 0x401A2A
    other = st.SiteKey("/x/prog", 0x400000, 0x30)
    sites = {k: st.Site(k) for k in (key, other)}
    assert st.describe(sites, [key, key, key]) == "prog+0x1a2b"
    assert st.describe(sites, [other, key, key, None]) == "prog+0x1a2b (2), prog+0x30 (1), unknown (1)"


# ------------------------------------------------------------------ errors


def test_truncated_runs_name_the_processes(tmp_path: Path) -> None:
    only_header = write_profile(tmp_path / "h.jsonl", records(3, STEPS, finished=[]))
    with pytest.raises(
        pf.ProfileError, match=r"did not reach bsp_end on processes 0-2 \(the profile holds only its header\)"
    ):
        pf.read_profile(only_header)
    one_missing = write_profile(tmp_path / "m.jsonl", records(3, STEPS, finished=[0, 2]))
    with pytest.raises(pf.ProfileError, match=r"did not reach bsp_end on processes 1 \(2 of 3 finished\)"):
        pf.read_profile(one_missing)


def test_inconsistent_and_foreign_files(tmp_path: Path) -> None:
    recs = records(3, STEPS)
    # a process with a superstep less than the others
    fewer = [r for r in recs if not (r.get("pid") == 2 and r.get("step") == 3)]
    next(r for r in fewer if r["type"] == "process" and r["pid"] == 2)["supersteps"] = 3
    with pytest.raises(pf.ProfileError, match=r"different numbers of supersteps \(0: 4, 1: 4, 2: 3\)"):
        pf.read_profile(write_profile(tmp_path / "f.jsonl", fewer))
    newer = copy.deepcopy(recs)
    newer[0]["format"] = 2
    with pytest.raises(pf.ProfileError, match="profile format 2 .* is not supported"):
        pf.read_profile(write_profile(tmp_path / "n.jsonl", newer))
    cut = tmp_path / "cut.jsonl"
    cut.write_text((tmp_path / "n.jsonl").read_text().replace('"format": 2', '"format": 1')[:-40])
    with pytest.raises(pf.ProfileError, match="line .*: a record cut short"):
        pf.read_profile(cut)


def test_sections(tmp_path: Path) -> None:
    two = records(3, STEPS) + records(3, STEPS[2:], section=1)
    path = write_profile(tmp_path / "s.jsonl", two, shuffle=False)
    assert len(pf.read_profile(path).steps) == 4
    second = pf.read_profile(path, section=1)
    assert (second.section, second.sections, len(second.steps)) == (1, [0, 1], 2)
    with pytest.raises(pf.ProfileError, match="no section 5"):
        pf.read_profile(path, section=5)


def test_command_errors_and_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = bspkit_in_process(capsys, "profile", str(tmp_path / "missing.jsonl"))
    assert rc == 1 and "missing.jsonl: no such file" in err
    params = tmp_path / "params.json"
    params.write_text(json.dumps(PARAMS_JSON, indent=1))
    rc, out, err = bspkit_in_process(capsys, "profile", str(params))
    assert rc == 1 and "not a bspkit profile" in err
    raw = tmp_path / "raw.jsonl"
    raw.write_text(json.dumps({"type": "header", "tool": "bspprobe", "format": 1}) + "\n")
    rc, out, err = bspkit_in_process(capsys, "profile", str(raw))
    assert rc == 1 and "not a bspkit profile" in err
    (tmp_path / "empty.jsonl").write_text("")
    rc, out, err = bspkit_in_process(capsys, "profile", str(tmp_path / "empty.jsonl"))
    assert rc == 1 and "is empty" in err
    truncated = write_profile(tmp_path / "t.jsonl", records(3, STEPS, finished=[1]))
    rc, out, err = bspkit_in_process(capsys, "profile", str(truncated))
    assert rc == 1 and "did not reach bsp_end on processes 0, 2" in err
    prof = write(tmp_path)
    for args in (["--compute-scale", "2"], ["--compute-scale", "0", "--params", str(params)], ["--top", "0"]):
        rc, out, err = bspkit_in_process(capsys, "profile", str(prof), *args)
        assert rc == 2, (args, err)
    rc, out, err = bspkit_in_process(capsys, "profile")
    assert rc == 2
    rc, out, err = bspkit_in_process(
        capsys, "profile", str(prof), "--params", str(params), "--compute-scale", "2", "--compute-from", str(params)
    )
    assert rc == 2 and "not allowed with" in err
    # a parameter file that cannot be read is a failure, before anything is written
    rc, out, err = bspkit_in_process(
        capsys, "profile", str(prof), "--params", str(prof), "-o", str(tmp_path / "x.html")
    )
    assert rc == 1 and "not JSON" in err and not (tmp_path / "x.html").exists()


# ------------------------------------------------------------------ the HTML report


@pytest.mark.slow
def test_html_report_sections_and_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prof = write(tmp_path)
    there = write_params(tmp_path / "there.json", params_with(machine={"host": "cluster"}))
    page = tmp_path / "profile.html"
    rc, out, err = bspkit_in_process(capsys, "profile", str(prof), "-o", str(page), "--params", str(there))
    assert rc == 0, err
    html = page.read_text()
    assert_self_contained(html)
    assert len(report_pngs(html)) == 3  # timeline, where the time goes, imbalance
    ids = re.findall(r'<h2 id="([^"]+)">', html)
    assert ids == ["summary", "timeline", "breakdown", "costliest", "sites", "imbalance", "supersteps", "prediction"]
    text = re.sub(r"<[^>]+>", " ", html)
    for needle in ("synth -n 100", "p = 3", "3.8 s", "85 words", "35 words", "50 words", "synth+0x1234"):
        assert needle in text, needle
    # the totals under the three models, as the terminal shows them
    for m in MODELS:
        total = quantity(W + sum(COMM[m]), "s")
        assert re.search(rf"{re.escape(m)}\s+{re.escape(total)}", text), m
    assert quantity(COMM["g(h,h*)"][0], "s") in text  # a superstep's comm + sync
    assert "e-0" not in text and "e+0" not in text  # no e-notation
    # without --params, no prediction section
    rc, out, err = bspkit_in_process(capsys, "profile", str(prof), "-o", str(page))
    assert rc == 0 and 'id="prediction"' not in page.read_text()


# ------------------------------------------------------------------ a real run against its driver

DRIVER_RUNS = {
    "inprod": ("bspalg-inprod", 3, ["--size", "1000"]),
    "cannon-put": ("bspalg-cannon", 4, ["--size", "64", "--variant", "put"]),
    "cannon-get": ("bspalg-cannon", 4, ["--size", "64", "--variant", "get"]),
    # uneven gets (a process asks several owners) and sends (tags not counted)
    "matmul-p3": ("bspalg-matmul", 3, ["--size", "48", "--q", "8"]),
    "matmul-static2d-p3": ("bspalg-matmul", 3, ["--size", "48", "--dist", "static2d"]),
}


@needs_programs("bsprun", "bspalg-inprod", "bspalg-cannon", "bspalg-matmul")
@pytest.mark.skipif(
    not st.addr2line_program(), reason=missing_dependency("binutils", "no addr2line to name the drivers' sync sites")
)
@pytest.mark.parametrize("run", list(DRIVER_RUNS))
def test_profile_agrees_with_the_drivers_own_count(tmp_path: Path, run: str) -> None:
    """The profile of a driver's run on threads: per superstep of the last repetition the same
    h, message count and primitive as the driver counts itself (docs/algorithm-output.md)."""
    driver, p, args = DRIVER_RUNS[run]
    reps = 2
    prof, js = tmp_path / "run.jsonl", tmp_path / "run.json"
    cmd = [str(built_program("bsprun")), "-b", "threads", "-n", str(p), str(built_program(driver)), *args]
    cmd += ["-r", str(reps), "--json", str(js)]
    env = {**os.environ, "BSPKIT_PROFILE": str(prof)}
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    driver_run = json.loads(js.read_text())
    counted = [s for s in driver_run["supersteps"] if s["sync"]]
    a = pf.analyze(pf.read_profile(prof))
    assert a.p == p and a.profile.header["backend"] == "threads"
    # the driver names the last repetition's phase (docs/profile-format.md): the supersteps
    # its JSON lists, then an empty sync that closes the repetition outside the timing
    rep = [s for s in a.steps if s.phase == f"rep {reps}"]
    assert len(rep) == len(counted) + 1, [(s.step, s.phase) for s in a.steps]
    last, closing = rep[:-1], rep[-1]
    assert [(s.h, s.count) for s in last] == [(c["h"], c["count"]) for c in counted]
    assert [s.primitive for s in last if s.h] == [c["primitive"] for c in counted if c["h"]]
    assert sum(s.h for s in last) == driver_run["H"]
    assert (closing.h, closing.count) == (0, 0)
    # the algorithm's supersteps end in bspalg_sync's bsp_sync or bspalg_checkpoint_sync's
    # bspk_checkpoint (the symbol table names them)
    syncs = ("bspalg_sync", "bspalg_checkpoint_sync")
    assert all(a.sites[k].function in syncs for s in last for k in s.site_keys if k is not None)


BSP_PROGRAM = """#include <bsp.h>

static void spmd(void) {
  bsp_begin(bsp_nprocs());
  int x = bsp_pid();
  bsp_push_reg(&x, sizeof x);
  bsp_sync(); /* registration */
  bsp_put((bsp_pid() + 1) % bsp_nprocs(), &x, &x, 0, sizeof x);
  bsp_sync(); /* the put */
  bsp_end();
}

int main(int argc, char **argv) {
  bsp_init(spmd, argc, argv);
  spmd();
  return 0;
}
"""


@needs_programs("bsprun", "bspcc")
@pytest.mark.skipif(not st.addr2line_program(), reason=missing_dependency("binutils", "no addr2line"))
@pytest.mark.parametrize("flags", [[], ["-no-pie"]], ids=["pie", "no-pie"])
def test_profile_of_a_bsplib_program_names_its_sync_lines(tmp_path: Path, flags: list[str]) -> None:
    """A BSPlib program built with bspcc -g: each superstep's site is the line of its bsp_sync
    (and of bsp_end for the last), whether the executable is position-independent or not."""
    src = tmp_path / "hello.c"
    src.write_text(BSP_PROGRAM)
    exe = tmp_path / "hello"
    subprocess.run([str(built_program("bspcc")), "-g", "-O0", *flags, "-o", str(exe), str(src)], check=True)
    prof = tmp_path / "hello.jsonl"
    env = {**os.environ, "BSPKIT_PROFILE": str(prof)}
    subprocess.run([str(built_program("bsprun")), "-n", "2", str(exe)], check=True, timeout=60, env=env)
    a = pf.analyze(pf.read_profile(prof))
    lines = BSP_PROGRAM.splitlines()
    expect = [
        next(i for i, ln in enumerate(lines, 1) if marker in ln) for marker in ("registration", "the put", "bsp_end")
    ]
    assert [s.site for s in a.steps] == [f"hello.c:{n} (spmd)" for n in expect]
    assert [(s.h, s.count, s.push_reg) for s in a.steps] == [(0, 0, 1), (1, 1, 0), (0, 0, 0)]
    assert [s.end for s in a.steps] == ["bsp_sync", "bsp_sync", "bsp_end"]


def test_timeline_merges_supersteps_where_there_are_many(
    analysis: pf.Analysis, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bspkit.pages import profile_report

    whole = profile_report.timeline_png(analysis)
    monkeypatch.setattr(profile_report, "MAX_TIMELINE_BARS", 2)  # 4 supersteps: a bar per 2
    merged = profile_report.timeline_png(analysis)
    assert merged[:8] == b"\x89PNG\r\n\x1a\n" and merged != whole
