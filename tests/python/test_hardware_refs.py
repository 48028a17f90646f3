"""bspkit.measure.hardware on synthetic runs: the parameter file's `hardware` object (l(empty)
against the raw barrier and the round trip, g(h) against memcpy_h(h) at matching h), its
sentence, and the report's memcpy section that shows them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bspkit.measure.hardware import hardware_of, hardware_sentence, ratio_columns
from bspkit.measure.rawdata import load_raw
from bspkit.model.fit import fit_run
from bspkit.model.params import Params
from bspkit.pages.report import memcpy_section

from synth import HwTruth, SynthSpec, model_time, write_synthetic


def fitted(tmp_path: Path, spec: SynthSpec) -> tuple[Path, Params]:
    path = write_synthetic(tmp_path / "raw.jsonl", spec)
    return path, fit_run(load_raw(path))


def test_ratios_of_a_noise_free_run(tmp_path: Path) -> None:
    """Without noise every ratio is the truth's: l(empty) / barrier, l(empty) / round trip, and
    per surface and h the g point with the fewest messages against memcpy_h."""
    spec = SynthSpec(noise=0.0, hardware=HwTruth())
    _path, params = fitted(tmp_path, spec)
    hw = params.hardware
    l_empty = spec.l["empty"]
    assert hw["l_empty_s"] == pytest.approx(l_empty)
    assert hw["barrier"]["median_s"] == pytest.approx(0.25e-6) and hw["barrier"]["cpus"] == [0, 1]
    assert hw["pingpong"]["median_s"] == pytest.approx(0.1e-6) and hw["pingpong"]["between"] == "processes 0 and 1"
    assert hw["sync_over_barrier"] == pytest.approx(l_empty / 0.25e-6)
    assert hw["sync_over_pingpong"] == pytest.approx(l_empty / 0.1e-6)
    grid_h = sorted({m * c for m in spec.msg_words for c in spec.counts})
    assert [r["h"] for r in hw["memcpy_h"]] == grid_h
    assert all(r["s_per_word"] == pytest.approx(0.25e-9) for r in hw["memcpy_h"])
    assert set(hw["g_over_memcpy"]) == set(spec.g)
    for key, truth in spec.g.items():
        rows = hw["g_over_memcpy"][key]
        assert [r["h"] for r in rows] == grid_h
        for r in rows:
            fewest = min(c for m in spec.msg_words for c in spec.counts if m * c == r["h"])
            assert r["count"] == fewest and r["msg_words"] * r["count"] == r["h"], r
            g = model_time(truth, r["h"], fewest) / r["h"]
            assert r["g_s_per_word"] == pytest.approx(g) and r["ratio"] == pytest.approx(g / 0.25e-9), r
    assert "problems" not in hw
    # the file holds it as written, and reads back the same
    back = Params.from_json(json.loads(params.dumps()))
    assert back.hardware == params.hardware and "hardware" not in back.extra


def test_sentence_names_the_ratios(tmp_path: Path) -> None:
    spec = SynthSpec(noise=0.0, hardware=HwTruth())
    _path, params = fitted(tmp_path, spec)
    s = hardware_sentence(params)
    assert s is not None
    assert s.startswith("sync = 4x the raw barrier (250 ns), 10x a cache-line round trip (100 ns); "), s
    # put/alltoall and get/permutation at the largest h (one message of 4096 x 128 words: c = 1
    # is not on the grid, so c = 128 with h* = 4096)
    h = max(m * c for m in spec.msg_words for c in spec.counts)
    put = model_time(spec.g["put/alltoall"], h, 128) / h / 0.25e-9
    get = model_time(spec.g["get/permutation"], h, 128) / h / 0.25e-9
    m = re.search(r"put = ([0-9.]+)x, get = ([0-9.]+)x memcpy at h = ([0-9,]+) words$", s)
    assert m, s
    assert float(m[1]) == pytest.approx(put, rel=0.05) and float(m[2]) == pytest.approx(get, rel=0.05)
    assert int(m[3].replace(",", "")) == h
    assert hardware_sentence(params.to_json()) == s  # the file's object says the same


def test_a_run_without_hw_records_has_no_hardware(tmp_path: Path) -> None:
    path, params = fitted(tmp_path, SynthSpec())
    assert load_raw(path).hardware == []
    assert params.hardware == {} and hardware_sentence(params) is None
    html = "\n".join(memcpy_section(load_raw(path), params, "").parts)
    assert "no hardware references" in html and "The library against the hardware" not in html


def test_skipped_references_are_said_not_measured(tmp_path: Path) -> None:
    """A barrier the probe skipped (mpi) gives no ratio; the round trip still does."""
    why = "the processes do not share memory (back end not threads): no spin barrier among them"
    spec = SynthSpec(noise=0.0, hardware=HwTruth(barrier_skipped=why))
    path, params = fitted(tmp_path, spec)
    hw = params.hardware
    assert hw["barrier"] == {"skipped": why} and hw["sync_over_barrier"] is None
    assert hw["sync_over_pingpong"] == pytest.approx(10.0)
    s = hardware_sentence(params)
    assert s is not None and s.startswith("sync = 10x a cache-line round trip (100 ns); put = ") and "barrier" not in s
    html = "\n".join(memcpy_section(load_raw(path), params, "").parts)
    assert "not measured" in html and "do not share memory" in html


def test_unreadable_records_are_left_out_and_named(tmp_path: Path) -> None:
    """A memcpy_h with a non-positive sample and a ping-pong without samples are named with
    their line in `problems`; the other records are used."""
    path = write_synthetic(tmp_path / "raw.jsonl", SynthSpec(noise=0.0, hardware=HwTruth()))
    lines = path.read_text().splitlines()
    bad_memcpy = next(i for i, ln in enumerate(lines) if '"memcpy_h"' in ln and '"h": 1,' in ln)
    rec = json.loads(lines[bad_memcpy])
    rec["samples_s"][0] = 0.0
    lines[bad_memcpy] = json.dumps(rec)
    bad_pp = next(i for i, ln in enumerate(lines) if '"hw_pingpong"' in ln)
    lines[bad_pp] = json.dumps({"type": "hw_pingpong", "procs": 2, "samples_s": []})
    path.write_text("\n".join(lines) + "\n")
    run = load_raw(path)
    assert all(r["_where"].startswith(f"{path}:") for r in run.hardware)
    hw = hardware_of(run, 1e-6)
    assert 1 not in [r["h"] for r in hw["memcpy_h"]] and 2 in [r["h"] for r in hw["memcpy_h"]]
    assert "pingpong" not in hw and hw["sync_over_pingpong"] is None
    assert hw["sync_over_barrier"] == pytest.approx(4.0)
    # the latency references are read first, then memcpy_h
    assert hw.get("problems") == [
        f"{path}:{bad_pp + 1}: hw_pingpong without positive samples_s (left out)",
        f"{path}:{bad_memcpy + 1}: memcpy_h without a positive integer h and positive samples_s (left out)",
    ]


def test_report_section_shows_sentence_and_tables(tmp_path: Path) -> None:
    spec = SynthSpec(noise=0.0, hardware=HwTruth())
    path, params = fitted(tmp_path, spec)
    html = "\n".join(memcpy_section(load_raw(path), params, "").parts)
    sentence = hardware_sentence(params)
    assert sentence and sentence.replace("'", "&#x27;") in html
    assert "spin barrier among the p processes" in html and "cache-line round trip between two cores" in html
    assert '<td class="">4x</td>' in html and '<td class="">10x</td>' in html
    # the ratio table: memcpy_h per word and one row per surface, at most 6 values of h
    cols = ratio_columns(params.hardware)
    assert len(cols) == 6 and cols[-1] == max(r["h"] for r in params.hardware["memcpy_h"])
    assert "memcpy_h per word" in html and "put/alltoall" in html and "get/permutation" in html
    assert "Is put's time per word at most" not in html  # the old comparison is gone


def test_ratio_columns_keep_every_h_when_few() -> None:
    hw = {"g_over_memcpy": {"put/alltoall": [{"h": 8}, {"h": 64}], "get/shift": [{"h": 512}]}}
    assert ratio_columns(hw) == [8, 64, 512]
    assert ratio_columns({}) == []


def _ratio_row(h: int, ratio: float, g_spread: float, memcpy_spread: float) -> dict[str, float]:
    return {
        "h": h,
        "msg_words": h,
        "count": 1,
        "g_s_per_word": ratio * 1e-10,
        "memcpy_s_per_word": 1e-10,
        "ratio": ratio,
        "g_spread": g_spread,
        "memcpy_spread": memcpy_spread,
    }


def test_sentence_skips_a_scattered_largest_h() -> None:
    """The headline ratio comes from the largest h where both medians are steady (a VM's memory
    bandwidth swings at the largest h: there hpput read 2.3x memcpy against 0.97x one step
    below, in one run); a surface with no steady h says its scatter."""
    hw = {
        "g_over_memcpy": {
            "hpput/alltoall": [_ratio_row(2**19, 0.97, 0.05, 0.10), _ratio_row(2**20, 2.31, 0.04, 0.35)],
            "put/alltoall": [_ratio_row(2**19, 2.2, 0.30, 0.10), _ratio_row(2**20, 7.4, 0.05, 0.35)],
        }
    }
    s = hardware_sentence({"hardware": hw})
    assert (
        s
        == "put = 7.4x (spread 0.35) memcpy at h = 1,048,576 words, hpput = 0.97x memcpy at h = 524,288 words (all-to-all; memcpy of h words by every process at once, hot)"
    ), s
    # files written before the spreads were kept: the largest h, as before
    old = {
        k: [{f: v for f, v in r.items() if "spread" not in f} for r in rows] for k, rows in hw["g_over_memcpy"].items()
    }
    assert hardware_sentence({"hardware": {"g_over_memcpy": old}}) == (
        "put = 7.4x, hpput = 2.3x memcpy at h = 1,048,576 words (all-to-all; memcpy of h words by every process at once, hot)"
    )
