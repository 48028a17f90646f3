#!/usr/bin/env python3
"""ckpt_test.py - the checkpoint and restart tests (tests/checkpoint/CMakeLists.txt runs them).

    ckpt_test.py kill_restart  BSPRUN BACKEND P WORK CKPT_STATE MODE[,MODE] [BSPRUN_OPTION...]
    ckpt_test.py damaged       BSPRUN BACKEND P WORK CKPT_STATE KIND[,KIND...]|all [BSPRUN_OPTION...]
    ckpt_test.py disk_full     BSPRUN BACKEND P WORK CKPT_STATE [BSPRUN_OPTION...]
    ckpt_test.py error         BSPRUN BACKEND P WORK CKPT_ERRORS CASE REPS [BSPRUN_OPTION...]
    ckpt_test.py bsprun        BSPRUN BACKENDS WORK CKPT_STATE
    ckpt_test.py mtbf          BSPRUN BACKENDS WORK CKPT_STATE

kill_restart: ckpt_state in each MODE (default: it registers before bspk_checkpoint_resume;
  register-after: it leaves the registrations to the restart; scratch: an area that the
  checkpoints skip, which the restart must leave as the program set it) killed by
  BSPKIT_KILL_AT=PID:SUPERSTEP at a random process and superstep, restarted with --restart and
  killed again at a later superstep, then restarted to the end; the killed runs must end as a
  SIGKILL ends them (threads: status 137, the whole program; MPI: status 1 and bsprun's
  line; procs: status 1 and process 0's line, or bsprun's when process 0 was killed) and leave the checkpoint before the kill, each restart must go on from the newest
  complete checkpoint, and the last run must print the digest of an uninterrupted run (on
  threads: the digest is the same bits on every back end). The seed is random and printed;
  BSPKIT_TEST_SEED=N replays it.
damaged: an uninterrupted run leaves its checkpoints; the newest is damaged as each KIND
  says (DAMAGES), and the restart must take the one before it, say why in one warning and
  name the one it took in another, and print the same digest; all_damaged / all_incomplete
  damage every one: status 1 and the one error line that no intact (complete) checkpoint is
  there (and after all_incomplete, a fresh run into the directory removes those and works).
disk_full: the checkpoint directory is a tmpfs (in a mount namespace of the test's own,
  unshare -m) that holds two generations but not a third: the run must go on (status 0, the
  digest), warn, keep the older complete generations, and a restart from there must work.
  Exit status 77 (skipped) where unshare or mount is not allowed.
error: the case of ckpt_errors, set up as it says (ckpt_errors --expect CASE), REPS times
  (BSPKIT_TEST_REPS=N: N times, for a longer search for a race): status 1 and exactly one
  line `bspkit: ...` on stderr, the case's, within 10 s.
bsprun: bsprun's checkpoint options: --help, --dry-run on each back end of BACKENDS, and the
  usage errors (status 2).
mtbf: the interval chosen from a mean time between failures (bsprun --checkpoint-mtbf,
  BSPKIT_CHECKPOINT_MTBF): on each back end of BACKENDS, one line on stderr (process 0's)
  whose interval is sqrt(2 C MTBF) of the C and MTBF it prints, the first checkpoint saved
  and none after it within the interval, the digest of a run without checkpoints; on the
  first back end, the bad values (status 1, one line), the interval given as well (status 1),
  and bsprun's usage errors (status 2).

WORK is the test's own directory (emptied first, removed when the test passed). Exit status
0: passed, 1: failed (what happened is printed), 77: skipped, 2: bad usage.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

SKIP = 77
RUN_LIMIT_S = 60.0
ERROR_LIMIT_S = 10.0
GENERATION = re.compile(r"^superstep-(\d{12})$")
SANITIZER_REPORT = re.compile(r"^(==\d+==ERROR: \w+Sanitizer|WARNING: ThreadSanitizer|.*: runtime error: )", re.M)
DIGEST = re.compile(r"^digest ([0-9a-f]{16}) after (\d+) iterations, superstep (\d+)$", re.M)


class Failure(Exception):
    """A check that did not hold: the test fails with this message."""


@dataclass
class Result:
    cmd: list[str]
    env: dict[str, str]
    status: int
    out: str
    err: str
    seconds: float

    def show(self) -> str:
        env = " ".join(f"{k}={v}" for k, v in self.env.items())
        return (
            f"  command: {env + ' ' if env else ''}{' '.join(self.cmd)}\n"
            f"  status {self.status} after {self.seconds:.2f} s\n"
            f"  ---- stdout ----\n{indent(self.out)}  ---- stderr ----\n{indent(self.err)}"
        )

    def bspkit_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("bspkit: ")]


def indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines()[-60:])


def say(text: str) -> None:
    print(text, flush=True)


def run(cmd: Sequence[str], env: dict[str, str] | None = None, limit: float = RUN_LIMIT_S) -> Result:
    """Runs cmd in a session of its own (so that a time-out ends mpirun and its ranks too)."""
    extra = env or {}
    start = time.monotonic()
    proc = subprocess.Popen(
        list(cmd),
        env={**os.environ, **extra},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            time.sleep(2 if sig == signal.SIGTERM else 0)
        out, err = proc.communicate()
        result = Result(list(cmd), extra, -1, out, err, time.monotonic() - start)
        raise Failure(f"did not end within {limit:.0f} s\n{result.show()}") from None
    # A shell's status: 128 + N for a process that a signal N ended.
    status = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    result = Result(list(cmd), extra, status, out, err, time.monotonic() - start)
    # In a sanitizer build: a report fails the test, whatever the status.
    check(SANITIZER_REPORT.search(err) is None, "a sanitizer reported a problem", result)
    return result


def check(cond: bool, what: str, result: Result | None = None) -> None:
    if not cond:
        raise Failure(what + ("\n" + result.show() if result else ""))


def bsprun_usage_error(path: str, backend: str, options: Sequence[str], regex: str, program: Sequence[str]) -> Result:
    """bsprun -b BACKEND -n 2 OPTIONS PROGRAM ends with status 2 and "bsprun: error: " + regex."""
    result = run([path, "-b", backend, "-n", "2", *options, *program])
    check(
        result.status == 2 and re.search("^bsprun: error: " + regex, result.err, re.M) is not None,
        f"{backend}: bsprun {' '.join(options)}: expected status 2 and /{regex}/",
        result,
    )
    return result


def is_mpi(backend: str) -> bool:
    return backend not in ("threads", "procs")


@dataclass
class Bsprun:
    """bsprun on one back end, with the options (an emulated cluster's --hostfile) given."""

    path: str
    backend: str
    options: list[str]

    def cmd(self, nprocs: int, program: Sequence[str], ckpt: Sequence[str] = ()) -> list[str]:
        return [self.path, "-b", self.backend, *self.options, "-n", str(nprocs), *ckpt, *program]

    def threads(self) -> Bsprun:
        return Bsprun(self.path, "threads", [])


# ---- ckpt_state: digests and generations ---------------------------------------------------


def digest_of(result: Result) -> str:
    check(result.status == 0, "the run failed", result)
    found = DIGEST.findall(result.out)
    check(len(found) == 1, "the run printed no digest line (or several)", result)
    return found[0][0]


@dataclass
class Reference:
    """An uninterrupted run of ckpt_state: its digest and superstep numbers."""

    digest: str
    iterations: int
    first_call: int  # the superstep of the first bspk_checkpoint call
    last_call: int  # ... and of the last


def reference(bsprun: Bsprun, nprocs: int, program: list[str], iterations: int) -> Reference:
    result = run(bsprun.threads().cmd(nprocs, program))
    digest = digest_of(result)
    _, iters, final = DIGEST.findall(result.out)[0]
    # The loop's last bspk_checkpoint is followed by two syncs before the digest is printed.
    last = int(final) - 3
    check(int(iters) == iterations and last - iterations + 1 >= 0, "unexpected digest line", result)
    return Reference(digest, iterations, last - iterations + 1, last)


def generations(directory: Path) -> dict[int, bool]:
    """The generations in directory: superstep -> complete (has a MANIFEST)."""
    found = {}
    for entry in directory.iterdir() if directory.is_dir() else []:
        m = GENERATION.match(entry.name)
        if m:
            found[int(m.group(1))] = (entry / "MANIFEST").is_file()
    return found


def gen_dir(directory: Path, superstep: int) -> Path:
    return directory / f"superstep-{superstep:012d}"


def expect_killed(bsprun: Bsprun, result: Result) -> None:
    """The run that BSPKIT_KILL_AT ended: as a SIGKILL ends it on this back end."""
    check(DIGEST.search(result.out) is None, "the killed run printed a digest", result)
    if bsprun.backend == "procs":
        lines = [line for line in result.bspkit_lines() if not line.startswith("bspkit: warning: ")]
        lines += [line for line in result.err.splitlines() if line.startswith("bsprun: ")]
        killed = re.compile(r"^(bspkit: error on process [1-9][0-9]*: killed by signal 9 |bsprun: process 0 of the procs run ended by signal 9 )")
        check(
            result.status == 1 and len(lines) == 1 and killed.match(lines[0]) is not None,
            "the killed procs run should end with status 1 and one line naming signal 9",
            result,
        )
    elif is_mpi(bsprun.backend):
        check(
            result.status == 1 and "bsprun: the MPI job ended by signal 9" in result.err,
            "the killed MPI run should end with status 1 and bsprun's line about signal 9",
            result,
        )
        # (A warning may come before: a restart from the checkpoint before an incomplete one.)
        errors = [line for line in result.bspkit_lines() if not line.startswith("bspkit: warning: ")]
        check(not errors, "the killed MPI run printed a bspkit error", result)
    else:
        check(
            result.status == 128 + signal.SIGKILL,
            "the killed threads run should end with status 137 (the whole program killed)",
            result,
        )


RESTARTED = re.compile(r"^restarted at iteration (\d+)$", re.M)


MODES = {"default": [], "register-after": ["--register-after"], "scratch": ["--scratch"]}


def kill_restart(bsprun: Bsprun, nprocs: int, work: Path, state: str, modes: list[str], rng: random.Random) -> None:
    iterations = 14
    kills = 2  # in a row, before the last, uninterrupted restart
    for mode in (MODES[m] for m in modes):
        program = [state, "--iterations", str(iterations), *mode]
        ref = reference(bsprun, nprocs, program, iterations)
        directory = work / ("ckpt" + "".join(mode).replace("-", "_"))
        say(f"mode {' '.join(mode) or '(default)'}: uninterrupted digest {ref.digest}")
        # A complete checkpoint before the first kill: the kill at superstep S comes after every
        # process ended the call at S - 1, so the checkpoint of the call before that is whole
        # (the call at S - 1 saved one too, but process 0 may be killed before its manifest).
        lowest = ref.first_call + 2
        newest = 0  # the newest complete checkpoint, which a restart must take
        for k in range(kills + 1):
            restart = k > 0
            ckpt = ["--restart" if restart else "--checkpoint-dir", str(directory)]
            env = {}
            if k < kills:
                if lowest > ref.last_call:
                    say(f"  kill {k + 1}: none left to make (superstep {lowest} is past the last checkpoint)")
                    continue
                pid, superstep = rng.randrange(nprocs), rng.randint(lowest, ref.last_call)
                lowest = superstep + 1
                env = {"BSPKIT_KILL_AT": f"{pid}:{superstep}"}
            result = run(bsprun.cmd(nprocs, program, ckpt), env)
            label = (
                f"  {'restart' if restart else 'run'}{' with BSPKIT_KILL_AT=' + env['BSPKIT_KILL_AT'] if env else ''}"
            )
            if restart:
                # The checkpoint at superstep S holds the iterations the calls before S ended.
                m = RESTARTED.search(result.out)
                check(
                    m is not None and int(m.group(1)) == newest - ref.first_call,
                    f"the restart should go on from the newest checkpoint, {newest}, at iteration {newest - ref.first_call}",
                    result,
                )
                label += f": restarted at iteration {m.group(1) if m else '?'}"
            if env:
                expect_killed(bsprun, result)
                # The newest complete generation is the one the call before the kill saved,
                # or, when the kill ended process 0 before its manifest, the one before.
                complete = [s for s, ok in generations(directory).items() if ok]
                check(
                    bool(complete) and max(complete) in (superstep, superstep - 1),
                    f"after a kill at superstep {superstep} the newest complete checkpoint is "
                    f"{max(complete) if complete else 'missing'} (expected {superstep - 1} or {superstep})",
                    result,
                )
                newest = max(complete)
                say(f"{label}: killed (status {result.status}), newest checkpoint {newest}")
            else:
                digest = digest_of(result)
                check(digest == ref.digest, f"digest {digest} after the restarts, {ref.digest} uninterrupted", result)
                say(f"{label}: digest {digest} (the same)")


# ---- damaged generations -------------------------------------------------------------------


def intact(gen: Path, nprocs: int) -> bool:
    """Whether gen has a MANIFEST and every process' file has the size it gives."""
    manifest = gen / "MANIFEST"
    if not manifest.is_file():
        return False
    sizes = dict(re.findall(r"^process (\d+) bytes (\d+) ", manifest.read_text(), re.M))
    return sorted(sizes) == sorted(str(q) for q in range(nprocs)) and all(
        (gen / f"process-{q}.ckpt").is_file() and (gen / f"process-{q}.ckpt").stat().st_size == int(n)
        for q, n in sizes.items()
    )


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


HEADER_BYTES = 64


def meta_bytes(path: Path) -> int:
    """The metadata's size, from the header (magic, pid, nprocs, superstep, meta_bytes)."""
    return int.from_bytes(path.read_bytes()[24:32], "little")


def damage_manifest_crc(gen: Path, rng: random.Random, nprocs: int) -> str:
    manifest = gen / "MANIFEST"
    text = manifest.read_text()
    q = rng.randrange(nprocs)
    m = re.search(rf"^process {q} bytes \d+ meta_crc32 [0-9a-f]+ data_crc32 ([0-9a-f]+)$", text, re.M)
    if not m:
        raise Failure(f"{manifest} has no data CRC of process {q}:\n{text}")
    old = m.group(1)
    new = old[:-1] + ("0" if old[-1] != "0" else "1")
    manifest.write_text(text[: m.start(1)] + new + text[m.end(1) :])
    return f"process {q}'s data CRC in the MANIFEST changed from {old} to {new}"


def damage_manifest_nprocs(gen: Path, rng: random.Random, nprocs: int) -> str:
    manifest = gen / "MANIFEST"
    text = manifest.read_text()
    other = rng.choice([q for q in range(1, nprocs + 3) if q != nprocs])
    new, n = re.subn(r"^nprocs \d+$", f"nprocs {other}", text, flags=re.M)
    if n != 1:
        raise Failure(f"{manifest} has no nprocs line:\n{text}")
    manifest.write_text(new)
    return f"the MANIFEST's nprocs {nprocs} changed to {other}"


def damage_manifest_cut(gen: Path, rng: random.Random, nprocs: int) -> str:
    manifest = gen / "MANIFEST"
    data = manifest.read_bytes()
    cut = rng.randrange(1, len(data) - 1)
    manifest.write_bytes(data[:cut])
    return f"the MANIFEST cut to its first {cut} of {len(data)} bytes"


def damage_file(kind: str) -> Callable[[Path, random.Random, int], str]:
    def damage(gen: Path, rng: random.Random, nprocs: int) -> str:
        q = rng.randrange(nprocs)
        path = gen / f"process-{q}.ckpt"
        size = path.stat().st_size
        if kind == "truncate":
            cut = rng.randrange(HEADER_BYTES, size)
            os.truncate(path, cut)
            return f"process {q}'s file truncated to {cut} of {size} bytes"
        if kind == "delete":
            path.unlink()
            return f"process {q}'s file deleted"
        if kind == "header":
            at = rng.randrange(HEADER_BYTES)
        elif kind == "meta":
            at = HEADER_BYTES + rng.randrange(meta_bytes(path))
        else:
            at = rng.randrange(HEADER_BYTES + meta_bytes(path), size)
        flip(path, at)
        return f"byte {at} of process {q}'s file ({kind}) flipped"

    return damage


def delete_manifest(gen: Path, rng: random.Random, nprocs: int) -> str:
    (gen / "MANIFEST").unlink()
    return "the MANIFEST deleted"


# Damaging the newest generation: how, and whether the restart must call it damaged (a
# generation without a MANIFEST is incomplete, passed over without that warning).
DAMAGES: dict[str, tuple[Callable[[Path, random.Random, int], str], bool]] = {
    "truncate": (damage_file("truncate"), True),
    "flip_data": (damage_file("data"), True),
    "flip_meta": (damage_file("meta"), True),
    "flip_header": (damage_file("header"), True),
    "delete_file": (damage_file("delete"), True),
    "delete_manifest": (delete_manifest, False),
    "manifest_crc": (damage_manifest_crc, True),
    "manifest_nprocs": (damage_manifest_nprocs, True),
    "manifest_cut": (damage_manifest_cut, True),
}
ALL_KINDS = ("all_damaged", "all_incomplete")
# What the warning must say is wrong.
REASONS: dict[str, tuple[str, ...]] = {
    "truncate": ("bytes, its manifest says",),
    "flip_data": ("has damaged data (CRC-32 mismatch)",),
    "flip_meta": ("has damaged metadata (CRC-32 mismatch)",),
    "flip_header": ("has a damaged header",),
    "delete_file": ("cannot be read: No such file or directory",),
    "manifest_crc": ("does not match its manifest (CRC-32s or sizes differ)",),
    "manifest_nprocs": ("its manifest is damaged",),
    # A cut in the last CRC leaves a shorter number there.
    "manifest_cut": ("its manifest is damaged", "does not match its manifest"),
}


def damaged(bsprun: Bsprun, nprocs: int, work: Path, state: str, kinds: list[str], rng: random.Random) -> None:
    iterations = 6
    program = [state, "--iterations", str(iterations)]
    ref = reference(bsprun, nprocs, program, iterations)
    base = work / "written"
    result = run(bsprun.cmd(nprocs, program, ["--checkpoint-dir", str(base)]))
    check(digest_of(result) == ref.digest, "the run that writes the checkpoints printed another digest", result)
    gens = generations(base)
    check(
        sorted(gens) == [ref.last_call, ref.last_call + 1] and all(gens.values()),
        f"the run should leave the two newest checkpoints, {ref.last_call} and {ref.last_call + 1} "
        f"complete; it left {gens}",
    )
    older, newest = sorted(gens)
    for kind in kinds:
        directory = work / kind
        shutil.copytree(base, directory)
        if kind in ALL_KINDS:
            what = []
            for s in (older, newest):
                if kind == "all_incomplete":
                    what.append(f"{s}: {delete_manifest(gen_dir(directory, s), rng, nprocs)}")
                else:
                    what.append(f"{s}: {damage_file('data')(gen_dir(directory, s), rng, nprocs)}")
            say(f"{kind}: {'; '.join(what)}")
            result = run(bsprun.cmd(nprocs, program, ["--restart", str(directory)]), limit=ERROR_LIMIT_S)
            want = (
                r"^bspkit: error in bspk_checkpoint_resume on process \d+: no intact complete checkpoint in "
                + re.escape(str(directory))
                + r" to restart from \(every one is damaged; see the warnings above\)$"
                if kind == "all_damaged"
                else r"^bspkit: error in bspk_checkpoint_resume on process \d+: no complete checkpoint in "
                + re.escape(str(directory))
                + r" to restart from$"
            )
            errors = [line for line in result.bspkit_lines() if line.startswith("bspkit: error")]
            check(result.status == 1, "the restart from damaged checkpoints only should fail with status 1", result)
            check(
                len(errors) == 1 and re.match(want, errors[0]) is not None,
                f"expected exactly one error line matching /{want}/",
                result,
            )
            check(DIGEST.search(result.out) is None, "the failed restart printed a digest", result)
            say(f"  status 1: {errors[0]}")
            if kind == "all_incomplete":
                # What no restart can use is no earlier run's checkpoints: a fresh run into the
                # directory removes it, says so, and goes on.
                result = run(bsprun.cmd(nprocs, program, ["--checkpoint-dir", str(directory)]))
                check(digest_of(result) == ref.digest, "the fresh run printed another digest", result)
                removed = [
                    f"bspkit: warning: removed the incomplete checkpoint at superstep {s} in {directory}, "
                    "an earlier run's (it has no manifest: no restart can use it)"
                    for s in (newest, older)
                ]
                check(result.bspkit_lines() == removed, "the fresh run should say it removed both", result)
                check(all(intact(gen_dir(directory, s), nprocs) for s in (older, newest)), "no new checkpoints")
                say("  a fresh run into the directory: removed both, digest the same")
            continue
        damage, called_damaged = DAMAGES[kind]
        what = damage(gen_dir(directory, newest), rng, nprocs)
        say(f"{kind}: {what}")
        result = run(bsprun.cmd(nprocs, program, ["--restart", str(directory)]))
        digest = digest_of(result)
        check(digest == ref.digest, f"digest {digest} after the restart, {ref.digest} uninterrupted", result)
        m = RESTARTED.search(result.out)
        check(m is not None and int(m.group(1)) == iterations - 1, "not restarted at the older checkpoint", result)
        warnings = [line for line in result.bspkit_lines() if line.startswith("bspkit: warning: ")]
        check(len(warnings) == len(result.bspkit_lines()), "the restart printed an error line", result)
        took = (
            f"bspkit: warning: restarted from the checkpoint at superstep {older} in {directory} "
            "(the newer ones are damaged or incomplete, and are removed)"
        )
        check(took in warnings, f"no warning '{took}'", result)
        bad = [w for w in warnings if w.startswith(f"bspkit: warning: the checkpoint at superstep {newest} in ")]
        if kind in REASONS:
            check(
                any(reason in w for w in bad for reason in REASONS[kind]),
                f"the warning does not say {' or '.join(REASONS[kind])}",
                result,
            )
        if called_damaged:
            check(
                len(bad) == 1
                and bad[0].startswith(
                    f"bspkit: warning: the checkpoint at superstep {newest} in {directory} is damaged: "
                )
                and bad[0].endswith("; trying the one before it"),
                f"expected one warning that the checkpoint at superstep {newest} is damaged",
                result,
            )
        check(len(warnings) == 1 + (1 if called_damaged else 0), "the restart printed other warnings", result)
        # The damaged one was removed, and the restarted run wrote that superstep's again.
        for s in (older, newest):
            check(intact(gen_dir(directory, s), nprocs), f"after the restart, checkpoint {s} is not whole", result)
        say(f"  digest {digest} (the same); {' / '.join(w[len('bspkit: warning: ') :] for w in warnings)}")


# ---- a full disk -------------------------------------------------------------------------


def pages(n: int) -> int:
    return (n + 4095) // 4096


def disk_full(bsprun: Bsprun, nprocs: int, work: Path, state: str, argv0: str, rest: list[str]) -> None:
    mount = work / "tmpfs"
    mount.mkdir()
    # A mount namespace (root), else one in a user namespace of its own (unshare -r).
    unshare: list[str] = []
    why = "unshare (util-linux) is not installed"
    for attempt in (["unshare", "-m"], ["unshare", "-r", "-m"]):
        if shutil.which("unshare") is None:
            break
        probe = run([*attempt, "sh", "-c", 'mount -t tmpfs -o size=1m tmpfs "$0" && umount "$0"', str(mount)])
        if probe.status == 0:
            unshare = attempt
            break
        why = f"{' '.join(attempt)}: {probe.err.strip()}"
    if not unshare:
        say(f"SKIP: cannot mount a tmpfs in a mount namespace of the test's own here ({why})")
        sys.exit(SKIP)
    # The size of one generation, from a run on threads into a directory of the usual kind.
    iterations = 8
    program = [state, "--iterations", str(iterations)]
    ref = reference(bsprun, nprocs, program, iterations)
    sample = work / "sample"
    digest_of(run(bsprun.threads().cmd(nprocs, program, ["--checkpoint-dir", str(sample)])))
    one = gen_dir(sample, max(generations(sample)))
    gen_pages = sum(pages(f.stat().st_size) for f in one.iterdir())
    size = (2 * gen_pages + gen_pages // 2) * 4096
    say(f"one generation takes {gen_pages} pages of 4 KiB; the tmpfs holds {size} bytes (two and a half)")
    inner = run(
        [*unshare, "sh", "-c", f'mount -t tmpfs -o size={size} tmpfs "$0" && exec "$@"', str(mount)]
        + [sys.executable, argv0, "disk_full_inside", str(ref.first_call), ref.digest, *rest],
        limit=3 * RUN_LIMIT_S,
    )
    sys.stdout.write(inner.out)
    check(inner.status == 0, "the test in the mount namespace failed", inner)


def disk_full_inside(bsprun: Bsprun, nprocs: int, work: Path, state: str, first_call: int, digest: str) -> None:
    mount = work / "tmpfs"
    directory = mount / "ckpt"
    iterations = 8
    program = [state, "--iterations", str(iterations)]
    result = run(bsprun.cmd(nprocs, program, ["--checkpoint-dir", str(directory)]))
    check(digest_of(result) == digest, "the run with a full disk printed another digest", result)
    warnings = result.bspkit_lines()
    check(all(w.startswith("bspkit: warning: ") for w in warnings), "the run printed an error line", result)
    # The third checkpoint (superstep first_call + 3) is the first that does not fit.
    third = first_call + 3
    cannot = re.compile(
        rf"^bspkit: warning: process \d+ could not save its part of the checkpoint at superstep {third}: "
        r"cannot write .*: No space left on device; the run goes on$"
    )
    incomplete = f"bspkit: warning: the checkpoint at superstep {third} in {directory} is incomplete (process "
    check(
        any(cannot.match(w) for w in warnings),
        f"no warning that the checkpoint at superstep {third} could not be saved",
        result,
    )
    check(
        any(w.startswith(incomplete) for w in warnings),
        f"no warning that the checkpoint at superstep {third} is incomplete",
        result,
    )
    complete = sorted(s for s, ok in generations(directory).items() if ok)
    check(
        complete == [first_call + 1, first_call + 2],
        f"the complete checkpoints should be the first two ({first_call + 1}, {first_call + 2}); they are {complete}",
        result,
    )
    leftovers = [f for f in directory.rglob("*") if f.name.endswith(".tmp")]
    check(not leftovers, f"temporary files left behind: {leftovers}", result)
    say(f"run: digest {digest} (the same), {len(warnings)} warnings, e.g.\n  {warnings[0]}")
    say(f"  complete checkpoints kept: {complete}")
    result = run(bsprun.cmd(nprocs, program, ["--restart", str(directory)]))
    check(digest_of(result) == digest, "the restart printed another digest", result)
    m = RESTARTED.search(result.out)
    check(m is not None and int(m.group(1)) == 2, "the restart did not take the second checkpoint", result)
    took = f"bspkit: warning: restarted from the checkpoint at superstep {first_call + 2} in {directory} "
    check(any(w.startswith(took) for w in result.bspkit_lines()), f"no warning '{took}...'", result)
    say(f"restart: at iteration 2, digest {digest} (the same)")


# ---- error cases ---------------------------------------------------------------------------


def error_case(bsprun: Bsprun, nprocs: int, work: Path, program: str, case: str, reps: int) -> None:
    expect = run([program, "--expect", case])
    check(expect.status == 0, f"{program} --expect {case} failed", expect)
    setup, env_text, pattern = expect.out.splitlines()
    pattern = pattern.replace("{P+1}", str(nprocs + 1)).replace("{P}", str(nprocs))
    variants = env_text.split("|")
    say(f"case {case}: setup {setup}, environment {env_text}; expected on stderr: {pattern}")
    for rep in range(1, reps + 1):
        variant = variants[(rep - 1) % len(variants)]
        env = dict([variant.split("=", 1)]) if variant != "-" else {}
        regex = pattern.replace("{VALUE}", re.escape(next(iter(env.values()), "")))
        directory = work / f"ckpt{rep}"
        ckpt: list[str] = []
        if setup != "none":
            ckpt = ["--checkpoint-dir", str(directory)]
        if setup in ("earlier", "restart", "restart+1"):
            writer_procs = nprocs + 1 if setup == "restart+1" else nprocs
            written = run(bsprun.threads().cmd(writer_procs, [program, "writer"], ckpt))
            check(written.status == 0 and generations(directory), "the writer did not leave checkpoints", written)
        if setup.startswith("restart"):
            ckpt = ["--restart", str(directory)]
        result = run(bsprun.cmd(nprocs, [program, case], ckpt), env, limit=ERROR_LIMIT_S)
        lines = result.bspkit_lines()
        check(result.status == 1, f"repetition {rep}: status {result.status}, not 1", result)
        check(len(lines) == 1, f"repetition {rep}: {len(lines)} lines start with 'bspkit: ', not one", result)
        check(re.search(regex, lines[0]) is not None, f"repetition {rep}: the line does not match /{regex}/", result)
        say(f"repetition {rep}: status 1 in {result.seconds:.2f} s: {lines[0]}")


# ---- bsprun's options ----------------------------------------------------------------------


def bsprun_options(path: str, backends: list[str], work: Path, state: str) -> None:
    helped = run([path, "--help"])
    check(helped.status == 0, "bsprun --help failed", helped)
    for word in (
        "--checkpoint-dir DIR",
        "--checkpoint-every T",
        "--restart DIR",
        "BSPKIT_CHECKPOINT_DIR",
        "bspk_checkpoint",
    ):
        check(word in helped.out, f"bsprun --help does not mention {word}", helped)
    say("ok: --help mentions --checkpoint-dir, --checkpoint-every, --restart")

    d = work / "dir"
    d.mkdir()
    relative = os.path.relpath(d)
    expect_env = {
        ("--checkpoint-dir", relative): f"BSPKIT_CHECKPOINT_DIR={d}",
        (
            "--checkpoint-dir",
            str(d),
            "--checkpoint-every",
            "5m",
        ): f"BSPKIT_CHECKPOINT_DIR={d} BSPKIT_CHECKPOINT_EVERY=300",
        (
            "--checkpoint-dir=" + str(d),
            "--checkpoint-every=1.5",
        ): f"BSPKIT_CHECKPOINT_DIR={d} BSPKIT_CHECKPOINT_EVERY=1.5",
        (
            "--checkpoint-every",
            "2h",
            "--restart",
            str(d),
        ): f"BSPKIT_CHECKPOINT_DIR={d} BSPKIT_CHECKPOINT_EVERY=7200 BSPKIT_RESTART=1",
        ("--restart=" + relative, "--checkpoint-dir", str(d)): f"BSPKIT_CHECKPOINT_DIR={d} BSPKIT_RESTART=1",
        (
            "--checkpoint-dir",
            str(d / "new"),
            "--checkpoint-every",
            "60s",
        ): f"BSPKIT_CHECKPOINT_DIR={d / 'new'} BSPKIT_CHECKPOINT_EVERY=60",
    }
    for backend in backends:
        for options, env in expect_env.items():
            result = run([path, "--dry-run", "-b", backend, "-n", "2", *options, state, "--iterations", "3"])
            line = result.out.strip()
            check(
                result.status == 0 and line.count("\n") == 0, f"{backend}: bsprun --dry-run {' '.join(options)}", result
            )
            if backend in ("threads", "procs"):
                want = f"BSPKIT_BACKEND={backend} BSPKIT_NPROCS=2 {env} {state} --iterations 3"
                check(line == want, f"threads: --dry-run {' '.join(options)} printed\n  {line}\nnot\n  {want}", result)
            else:
                check(line.startswith(f"BSPKIT_BACKEND={backend} BSPKIT_NPROCS=2 "), f"{backend}: --dry-run", result)
                check(f" {env} " in line, f"{backend}: --dry-run {' '.join(options)} does not set {env}", result)
                for word in env.split():
                    check(
                        f"-x {word} " in line or f"-genv {word.replace('=', ' ', 1)} " in line,
                        f"{backend}: --dry-run {' '.join(options)}: mpirun does not pass {word} on",
                        result,
                    )
            say(f"ok: {backend}: --dry-run {' '.join(options)} sets {env}")
        plain = run([path, "--dry-run", "-b", backend, "-n", "2", state])
        check(
            "BSPKIT_CHECKPOINT" not in plain.out and "BSPKIT_RESTART" not in plain.out,
            f"{backend}: --dry-run without checkpoint options",
            plain,
        )

    # The interval, in real runs: 1h saves nothing in a short run (on each back end: the
    # ranks get it), 0 at every call (the two newest kept).
    runs = [("threads", "0", 2), ("threads", "0.0s", 2)] + [(backend, "1h", 0) for backend in backends]
    for backend, every, want in runs:
        directory = work / f"every-{backend}-{every}"
        ckpt = ["--checkpoint-dir", str(directory), "--checkpoint-every", every]
        result = run([path, "-b", backend, "-n", "2", *ckpt, state, "--iterations", "4"])
        digest_of(result)
        left = len(generations(directory))
        check(left == want, f"{backend}: --checkpoint-every {every}: {left} checkpoints left, not {want}", result)
        say(f"ok: {backend}: --checkpoint-every {every} in a run of 4 iterations leaves {want} checkpoints")

    blank = work / "a b"
    blank.mkdir()
    usage = [
        (["--checkpoint-every", "5"], r"--checkpoint-every needs --checkpoint-dir DIR \(or --restart DIR\)"),
        (["--checkpoint-dir", str(d), "--checkpoint-every", "5x"], r"--checkpoint-every 5x is not a time"),
        (["--checkpoint-dir", str(d), "--checkpoint-every", "-1"], r"--checkpoint-every -1 is not a time"),
        (["--checkpoint-dir", str(d), "--checkpoint-every", "1.2.3s"], r"--checkpoint-every 1.2.3s is not a time"),
        (["--checkpoint-dir", str(d), "--checkpoint-every", "m"], r"--checkpoint-every m is not a time"),
        (["--restart", str(work / "missing")], r"--restart .*/missing: no such directory"),
        (
            ["--restart", str(d), "--checkpoint-dir", str(work / "other")],
            r"--restart .* and --checkpoint-dir .* differ",
        ),
        (
            ["--checkpoint-dir", str(work / "no" / "such")],
            r"--checkpoint-dir .*/no/such: the directory .*/no does not exist",
        ),
        (["--checkpoint-dir", str(blank)], r".*: a checkpoint directory's path may not contain blanks"),
        (["--checkpoint-dir"], r"option --checkpoint-dir needs a value"),
        (["--restart"], r"option --restart needs a value"),
    ]
    for backend in backends:
        for options, regex in usage:
            program = [state] if options[-1] not in ("--checkpoint-dir", "--restart") else []
            result = bsprun_usage_error(path, backend, options, regex, program)
            check(DIGEST.search(result.out) is None and not (work / "other").exists(), "the program ran", result)
            say(f"ok: {backend}: {' '.join(options)}: status 2, {result.err.splitlines()[0]}")


# ---- the interval from a mean time between failures ----------------------------------------

CHOSEN = re.compile(
    r"^bspkit: checkpoint interval (\S+) s = sqrt\(2 C MTBF\), with C = (\S+) s \(the first checkpoint's "
    r"time, measured\) and MTBF = (\S+) s \(BSPKIT_CHECKPOINT_MTBF\)$"
)


def mtbf(path: str, backends: list[str], work: Path, state: str) -> None:
    iterations = 8
    program = [state, "--iterations", str(iterations)]
    for backend in backends:
        bsprun = Bsprun(path, backend, [])
        ref = reference(bsprun, 2, program, iterations)
        directory = work / f"mtbf-{backend}"
        # An MTBF of 100 h: the interval is minutes, so only the first checkpoint is saved.
        result = run(bsprun.cmd(2, program, ["--checkpoint-dir", str(directory), "--checkpoint-mtbf", "100h"]))
        check(digest_of(result) == ref.digest, f"{backend}: the run with --checkpoint-mtbf printed another digest", result)
        lines = result.bspkit_lines()
        m = CHOSEN.match(lines[0]) if len(lines) == 1 else None
        check(m is not None, f"{backend}: expected one line on stderr matching /{CHOSEN.pattern}/", result)
        assert m is not None
        interval, cost, mtbf_s = (float(x) for x in m.groups())
        want = (2 * cost * mtbf_s) ** 0.5
        check(mtbf_s == 360000, f"{backend}: MTBF {mtbf_s} s printed for 100h", result)
        check(abs(interval - want) <= 1e-5 * want, f"{backend}: interval {interval} s is not sqrt(2 C MTBF) = {want}", result)
        check(cost > 0 and interval > 1, f"{backend}: C {cost} s, interval {interval} s", result)
        gens = generations(directory)
        check(
            sorted(gens) == [ref.first_call + 1] and all(gens.values()),
            f"{backend}: expected the first checkpoint alone ({ref.first_call + 1}), complete; found {gens}",
            result,
        )
        say(f"ok: {backend}: --checkpoint-mtbf 100h: {lines[0]}; one checkpoint saved")
    backend = backends[0]
    bsprun = Bsprun(path, backend, [])
    ckpt = ["--checkpoint-dir", str(work / "bad")]
    wrong = r"^bspkit: error in bspk_checkpoint(_resume)? on process \d+: "
    cases = [
        ({"BSPKIT_CHECKPOINT_MTBF": v}, wrong + f"BSPKIT_CHECKPOINT_MTBF='{re.escape(v)}' is not a number of seconds > 0$")
        for v in ("0", "-60", "1h", "nan", "inf", "1e999")
    ]
    cases.append(
        (
            {"BSPKIT_CHECKPOINT_MTBF": "3600", "BSPKIT_CHECKPOINT_EVERY": "60"},
            wrong + "BSPKIT_CHECKPOINT_EVERY and BSPKIT_CHECKPOINT_MTBF are both set: give the interval or the mean "
            "time between failures it is chosen from, not both$",
        )
    )
    for env, want in cases:
        result = run(bsprun.cmd(2, program, ckpt), env, limit=ERROR_LIMIT_S)
        lines = result.bspkit_lines()
        check(
            result.status == 1 and len(lines) == 1 and re.match(want, lines[0]) is not None,
            f"{backend}: {env}: expected status 1 and one line /{want}/",
            result,
        )
        say(f"ok: {backend}: {' '.join(f'{k}={v}' for k, v in env.items())}: status 1, {lines[0]}")
    d = work / "dir"
    d.mkdir()
    usage = [
        (["--checkpoint-mtbf", "1h"], r"--checkpoint-mtbf needs --checkpoint-dir DIR \(or --restart DIR\)"),
        (["--checkpoint-dir", str(d), "--checkpoint-mtbf", "0"], r"--checkpoint-mtbf 0 is not a time > 0"),
        (["--checkpoint-dir", str(d), "--checkpoint-mtbf", "1d"], r"--checkpoint-mtbf 1d is not a time"),
        (
            ["--checkpoint-dir", str(d), "--checkpoint-every", "60", "--checkpoint-mtbf", "1h"],
            r"--checkpoint-every and --checkpoint-mtbf exclude each other",
        ),
    ]
    for options, regex in usage:
        result = bsprun_usage_error(path, backend, options, regex, [state])
        say(f"ok: bsprun {' '.join(options)}: status 2, {result.err.splitlines()[0]}")
    dry = run([path, "--dry-run", "-b", "threads", "-n", "2", "--checkpoint-dir", str(d), "--checkpoint-mtbf", "90m", state])
    check(f"BSPKIT_CHECKPOINT_MTBF=5400 {state}" in dry.out, "--dry-run --checkpoint-mtbf 90m", dry)


# ---- main ----------------------------------------------------------------------------------


def seeded() -> random.Random:
    text = os.environ.get("BSPKIT_TEST_SEED", "")
    seed = int(text) if text.isdigit() else random.SystemRandom().randrange(1, 10**9)
    say(f"seed {seed} (replay the same kills and damage with BSPKIT_TEST_SEED={seed})")
    return random.Random(seed)


def fresh(work: Path) -> None:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)


def main(argv: list[str]) -> int:
    usage = __doc__.split("\n\n")[1] if __doc__ else ""
    if len(argv) < 2:
        print(f"usage:\n{usage}", file=sys.stderr)
        return 2
    action, args = argv[1], argv[2:]
    try:
        if action in ("bsprun", "mtbf") and len(args) == 4:
            path, backends, work, state = args
            fresh(Path(work))
            (bsprun_options if action == "bsprun" else mtbf)(path, backends.split(), Path(work), state)
        elif action == "disk_full_inside":
            first_call, digest, path, backend, nprocs, work, state, *options = args
            disk_full_inside(Bsprun(path, backend, options), int(nprocs), Path(work), state, int(first_call), digest)
            return 0
        elif action in ("kill_restart", "damaged", "disk_full", "error") and len(args) >= 5:
            path, backend, nprocs_text, work_text, program, *rest = args
            nprocs, work = int(nprocs_text), Path(work_text).absolute()
            fresh(work)
            if action == "kill_restart":
                modes_text, *options = rest
                modes = modes_text.split(",")
                if not set(modes) <= set(MODES):
                    print(f"ckpt_test.py: modes are {', '.join(MODES)}, not {modes_text}", file=sys.stderr)
                    return 2
                kill_restart(Bsprun(path, backend, options), nprocs, work, program, modes, seeded())
            elif action == "damaged":
                kinds_text, *options = rest
                kinds = [*DAMAGES, *ALL_KINDS] if kinds_text == "all" else kinds_text.split(",")
                unknown = [k for k in kinds if k not in DAMAGES and k not in ALL_KINDS]
                if unknown:
                    print(
                        f"ckpt_test.py: no damage {unknown} (of {', '.join([*DAMAGES, *ALL_KINDS])}, all)",
                        file=sys.stderr,
                    )
                    return 2
                damaged(Bsprun(path, backend, options), nprocs, work, program, kinds, seeded())
            elif action == "disk_full":
                rest_args = [path, backend, nprocs_text, str(work), program, *rest]
                disk_full(Bsprun(path, backend, rest), nprocs, work, program, argv[0], rest_args)
            else:
                case, reps, *options = rest
                reps = os.environ.get("BSPKIT_TEST_REPS", reps)
                error_case(Bsprun(path, backend, options), nprocs, work, program, case, int(reps))
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"usage:\n{usage}", file=sys.stderr)
            return 2
    except Failure as failure:
        say(f"FAIL: {failure}")
        return 1
    say("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
