"""Running bspkit's drivers on another BSPlib (issue 30): the portable build (the drivers and
bspprobe on bsp.h alone), `bspkit run`/`validate` with --bspcc/--cc/--launcher/--peer, and the
libraries' table of `bspkit compare` (thesis Table 6.1 with algorithm rows).

"Another library" here is bspkit itself seen through bsp.h alone: a plain compiler, an include
directory holding nothing but bsp.h, and libbsp's link line, so that a driver that still needed
bspkit.h would not compile. Peers (BSPonMPI, MulticoreBSP, LPF) are built from a user's
checkout (scripts/build-peer.sh, docs/peers.md) and are not needed here.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bspkit.measure.libraries import PEER_FILE, Library, LibraryError, build_dir, default_name, library_from
from bspkit.pages import library_table as lt

from conftest import BUILD, REPO, needs_programs, run_bspkit

DRIVERS = ("inprod", "matmul", "cannon", "llcs", "rdxsort", "lu", "oocmm")
# small problems: the test is that each runs and checks, not how fast
DRIVER_ARGS = {"rdxsort": ["--size", "1000000"], "llcs": ["--size", "20000"], "lu": ["--size", "400"]}


def bsp_h_alone(tmp: Path) -> tuple[str, str]:
    """(cflags, libs) that build against bspkit's libbsp with only bsp.h on the include path."""
    inc = tmp / "include"
    inc.mkdir()
    shutil.copy(REPO / "include" / "bsp.h", inc / "bsp.h")
    assert BUILD is not None
    link = subprocess.run(
        [str(BUILD / "bin" / "bspcc"), "--showme:link"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return f"-I{inc}", link


def backend_built(backend: str) -> bool:
    assert BUILD is not None
    proc = subprocess.run(
        [str(BUILD / "bin" / "bsprun"), "--dry-run", "-b", backend, "-n", "1", "true"], capture_output=True
    )
    return proc.returncode == 0


# ------------------------------------------------------------------ the options


def test_library_from_none_without_options() -> None:
    assert library_from() is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bspcc": "cc", "cc": "cc", "launcher": ""}, "--bspcc and --cc exclude each other"),
        ({"cflags": "-I/x"}, "--cflags and --libs go with --cc"),
        ({"launcher": "mpirun -n {p}"}, "describe another BSPlib: give --bspcc, --cc or --peer"),
        ({"bspcc": "no-such-bspcc-here", "launcher": ""}, "the compiler 'no-such-bspcc-here' is not there"),
        ({"bspcc": "cc"}, "another BSPlib needs --launcher"),
        ({"bspcc": "cc", "launcher": "mpirun -n 4"}, "has no {p}"),
        ({"bspcc": "cc", "launcher": "", "name": "my lib"}, "letters, digits and ._+- only"),
    ],
)
def test_library_from_refuses(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(LibraryError, match=re.escape(message)):
        library_from(**kwargs)


def test_library_label_command_and_environment(tmp_path: Path) -> None:
    lib = library_from(bspcc="cc", launcher="mpirun --oversubscribe -n {p}", name="bsponmpi", version="1.1")
    assert lib is not None and lib.label == "bsponmpi@1.1" and lib.wrapper
    assert lib.command(tmp_path / "a.out", 4, ["--reps", "1"]) == [
        "mpirun",
        "--oversubscribe",
        "-n",
        "4",
        str(tmp_path / "a.out"),
        "--reps",
        "1",
    ]
    own = library_from(cc="cc", cflags="-I/opt/x/include", libs="-L/opt/x/lib -lx", launcher="")
    assert own is not None and not own.wrapper and own.label == "cc"  # no version: the name alone
    # an empty launcher: the program starts its own processes and takes P on its command line
    assert own.command(Path("/bin/prog"), 3, ["--json", "o"]) == ["/bin/prog", "-n", "3", "--json", "o"]
    assert own.environment(3) == {"BSPKIT_NPROCS": "3", "BSP_NPROCS": "3"}


def test_default_name_of_a_generic_wrapper() -> None:
    assert default_name("/opt/bsponmpi/bin/bspcc") == "bsponmpi"
    assert default_name("/opt/mcbsp/tools/bspcc") == "bspcc"
    assert default_name("/usr/bin/lpfcc") == "lpfcc"


def test_peer_file_and_overrides(tmp_path: Path) -> None:
    (tmp_path / PEER_FILE).write_text(
        json.dumps(
            {"name": "lpf", "version": "abc123", "compiler": "cc", "cflags": "-DX", "launcher": "lpfrun -np {p}"}
        )
    )
    lib = library_from(peer=str(tmp_path))
    assert lib is not None and (lib.label, lib.cflags, lib.launcher) == ("lpf@abc123", "-DX", "lpfrun -np {p}")
    lib = library_from(peer=str(tmp_path), launcher="", version="2")
    assert lib is not None and (lib.launcher, lib.label) == ("", "lpf@2")
    with pytest.raises(LibraryError, match=f"no {PEER_FILE} there"):
        library_from(peer=str(tmp_path / "missing"))
    (tmp_path / PEER_FILE).write_text("{}")
    with pytest.raises(LibraryError, match="not a peer description"):
        library_from(peer=str(tmp_path))


def test_cache_keyed_by_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BSPKIT_CACHE_DIR", str(tmp_path))
    a = Library("a", "1", "cc", "", "", "", True)
    dirs = {
        build_dir(x, REPO)
        for x in (a, Library("a", "2", "cc", "", "", "", True), Library("b", "1", "cc", "", "", "", True))
    }
    assert len(dirs) == 3 and all(d.parent == tmp_path / "portable" for d in dirs)
    assert build_dir(a, REPO) == build_dir(Library("a", "1", "cc", "", "", "", True), REPO)


@pytest.mark.parametrize("cmd", ["run", "validate"])
def test_hostfile_is_bspruns(cmd: str, tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost\n")
    r = run_bspkit(cmd, "inprod", "-b", "mpi", "--hostfile", str(hosts), "--bspcc", "cc", "--launcher", "")
    assert r.returncode == 2 and "--hostfile is bsprun's" in r.stderr


# ------------------------------------------------------------------ the portable build


@pytest.mark.slow
@needs_programs("bspcc", "bsprun")
def test_portable_build_runs_and_checks_on_every_backend(tmp_path: Path) -> None:
    """Every driver and bspprobe built with -DBSPKIT_PORTABLE against bsp.h alone; each driver
    runs, checks its result and says it is a portable build, on every back end (p = 2; threads
    also p = 1)."""
    assert BUILD is not None
    cflags, libs = bsp_h_alone(tmp_path)
    out = tmp_path / "portable"
    subprocess.run(
        [
            "cmake",
            "-S",
            str(REPO),
            "-B",
            str(out),
            "-G",
            "Ninja",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DBSPKIT_PORTABLE=ON",
            "-DCMAKE_C_COMPILER=cc",
            f"-DBSPKIT_PORTABLE_CFLAGS={cflags}",
            f"-DBSPKIT_PORTABLE_LIBS={libs}",
            "-DBSPKIT_PORTABLE_LIBRARY=bsp.h-alone",
        ],
        check=True,
        capture_output=True,
    )
    build = subprocess.run(["cmake", "--build", str(out)], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "bspkit.h" not in build.stdout + build.stderr
    assert (out / "probe" / "bspprobe").is_file()
    backends = [b for b in ("threads", "mpi", "mpi-rma") if backend_built(b)]
    assert "threads" in backends
    for backend in backends:
        for p in (1, 2) if backend == "threads" else (2,):  # p = 1 on mpi: one rank, nothing to send
            for name in DRIVERS:
                exe = out / "bin" / f"bspalg-{name}"
                if not exe.is_file():  # matmul, cannon, lu, oocmm need CBLAS, as in bspkit's build
                    assert not (BUILD / "bin" / exe.name).is_file(), f"{exe.name} is missing from the portable build"
                    continue
                js = tmp_path / f"{name}-{backend}-{p}.json"
                r = subprocess.run(
                    [
                        str(BUILD / "bin" / "bsprun"),
                        "-b",
                        backend,
                        "-n",
                        str(p),
                        str(exe),
                        "--reps",
                        "1",
                        *DRIVER_ARGS.get(name, []),
                        "--json",
                        str(js),
                    ],
                    capture_output=True,
                    text=True,
                    timeout=180,
                )
                where = f"{name} on {backend}, p = {p}: {r.stdout}{r.stderr}"
                assert r.returncode == 0, where
                assert "check: passed (portable build, library bsp.h-alone)" in r.stdout, where
                d = json.loads(js.read_text())
                assert (d["build"], d["library"], d["backend"], d["p"], d["verified"]) == (
                    "portable",
                    "bsp.h-alone",
                    "bsp.h-alone",
                    p,
                    True,
                ), where
                assert d["restarted"] is False and d["checkpoints"]["saved"] == 0, where
    # no checkpoints in a portable build: the drivers' --checkpoint-every is a usage error
    r = subprocess.run(
        [str(BUILD / "bin" / "bsprun"), "-n", "2", str(out / "bin" / "bspalg-rdxsort"), "--checkpoint-every", "5s"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "--checkpoint-every: a portable build takes no checkpoints" in r.stderr, r.stderr
    # bspprobe built the same way measures l on bspkit's threads
    raw = tmp_path / "l.jsonl"
    r = subprocess.run(
        [
            str(BUILD / "bin" / "bsprun"),
            "-n",
            "2",
            str(out / "probe" / "bspprobe"),
            "--quick",
            "--only",
            "l",
            "--output",
            str(raw),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    header = json.loads(raw.read_text().splitlines()[0])
    assert header["library"] == "unknown" and header["p"] == 2


@pytest.mark.slow
@needs_programs("bspcc", "bsprun")
def test_run_on_another_library(tmp_path: Path) -> None:
    """`bspkit run` builds the driver into the library's cache and starts it through the
    launcher, or (--launcher '') directly with -n P; the result names the library."""
    assert BUILD is not None
    cflags, libs = bsp_h_alone(tmp_path)
    env = {"BSPKIT_CACHE_DIR": str(tmp_path / "cache")}
    js = tmp_path / "run.json"
    launcher = f"{BUILD / 'bin' / 'bsprun'} -b mpi -n {{p}}" if backend_built("mpi") else ""
    r = run_bspkit(
        "run",
        "inprod",
        "-n",
        "2",
        "--cc",
        "cc",
        f"--cflags={cflags}",
        f"--libs={libs}",
        "--launcher",
        launcher,
        "--library-name",
        "mine",
        "--library-version",
        "0.9",
        "--json",
        str(js),
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "check: passed (portable build, library mine@0.9)" in r.stdout
    d = json.loads(js.read_text())
    assert d["library"] == "mine@0.9" and d["library_info"]["launcher"] == launcher and d["p"] == 2
    assert len(list((tmp_path / "cache" / "portable").glob("mine-*"))) == 1
    # the peer file of scripts/build-peer.sh, with the launcher '' (the driver gets -n P)
    prefix = tmp_path / "peer"
    prefix.mkdir()
    (prefix / PEER_FILE).write_text(
        json.dumps({"name": "peer", "version": "1", "compiler": str(BUILD / "bin" / "bspcc"), "launcher": ""})
    )
    r = run_bspkit(
        "run", "llcs-bitpar", "-n", "2", "--peer", str(prefix), "--", "--size", "20000", env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr
    assert "llcs-bitpar on 2 processes" in r.stdout and "(portable build, library peer@1)" in r.stdout
    # the probe takes the same peer file: built with its compiler, run with -n P, filed under its name
    r = run_bspkit(
        "probe",
        "-n",
        "2",
        "--peer",
        str(prefix),
        "--output-dir",
        str(tmp_path / "pp"),
        "--",
        "--quick",
        "--only",
        "l,g",
        "--max-words",
        "256",
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    header = json.loads((tmp_path / "pp" / "raw.jsonl").read_text().splitlines()[0])
    assert (header["library"], header["p"]) == ("peer", 2)
    # a driver that fails to build says so, with the log's end
    r = run_bspkit(
        "run",
        "inprod",
        "--cc",
        "cc",
        "--cflags=-I/nonexistent",
        "--launcher",
        "",
        "--library-name",
        "broken",
        env=env,
        timeout=300,
    )
    assert r.returncode == 1 and "building bspalg-inprod against broken failed" in r.stderr
    assert "bsp.h" in r.stderr


# ------------------------------------------------------------------ the peers' own wrappers

# Like BSPonMPI 1.1's installed bspcc (its bspcc.in): a word that is no option is an input (an
# object when it ends in .o), except the one after -o; -l* and -Wl,* are link flags; with -c it
# calls the compiler once with flags, sources, objects, link flags and -o in that order,
# without it compiles each source into a temporary object and links. So the target after
# CMake's -MT becomes an input ("input file ... is the same as output file"), and an archive
# of a link line a source that is "compiled" into nothing.
FAKE_BSPONMPI_BSPCC = r"""#!/usr/bin/env bash
cc_=(@CC@); lib=(@LIBS@)
linking=yes; next_out=no; sources=(); objects=(); cflags=(); lflags=(); out=()
for a in "$@"; do
  case $a in
    -c) linking=no; cflags+=("$a") ;;
    -o) next_out=yes ;;
    -l* | -Wl,*) lflags+=("$a") ;;
    -*) if [ $next_out = yes ]; then out=(-o "$a"); next_out=no; else cflags+=("$a"); fi ;;
    *) if [ $next_out = yes ]; then out=(-o "$a"); next_out=no
       else case $a in *.o) objects+=("$a") ;; *) sources+=("$a") ;; esac; fi ;;
  esac
done
if [ $linking = no ]; then
  exec "${cc_[@]}" "${cflags[@]}" "${sources[@]}" "${objects[@]}" "${lflags[@]}" "${out[@]}"
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; n=0; tobj=()
for s in "${sources[@]}"; do
  n=$((n + 1)); "${cc_[@]}" "${cflags[@]}" "$s" -c -o "$tmp/$n.o" || exit $?; tobj+=("$tmp/$n.o")
done
"${cc_[@]}" "${cflags[@]}" "${tobj[@]}" "${objects[@]}" "${lflags[@]}" "${lib[@]}" "${out[@]}"
"""

# Like LPF 1.0's lpfcc (its lpfcc.in): -engine E, -lbsplib (bsp.h on the include path and the
# BSPlib layer linked), -c, -o OUT; -MT and -MQ go to the compiler twice (its loop shifts
# without effect) and the target after them is then sorted as an object; *.c are sources,
# *.o objects, anything else an option. Each source is compiled into a temporary object that
# is then moved to OUT, or linked.
FAKE_LPFCC = r"""#!/usr/bin/env bash
engine=imp; link=yes; state=; bsplib=no; sources=(); objects=(); other=(); out=
for a in "$@"; do
  case $a in
    -engine) state=engine ;;
    -lbsplib) bsplib=yes ;;
    -o) state=output ;;
    -c) link=no ;;
    -MT | -MQ) other+=("$a" "$a") ;;
    *) case $state in
         engine) engine=$a; state= ;;
         output) out=$a; state= ;;
         *) case $a in *.c) sources+=("$a") ;; *.o) objects+=("$a") ;; *) other+=("$a") ;; esac ;;
       esac ;;
  esac
done
[ "$engine" = pthread ] || { echo "lpfcc: no engine $engine here" >&2; exit 1; }
cflags=(); [ $bsplib = yes ] && cflags=(@BSPLIB_CFLAGS@)
tobj=()
for s in "${sources[@]}"; do
  t=$(mktemp -u).o; @CC@ "${other[@]}" "${cflags[@]}" -c "$s" -o "$t" || exit $?; tobj+=("$t")
done
if [ $link = yes ]; then
  @CC@ "${tobj[@]}" "${objects[@]}" "${other[@]}" @LIBS@ ${out:+-o "$out"}
  rc=$?; rm -f "${tobj[@]}"; exit $rc
fi
mv "${tobj[0]}" "${out:-$(basename "${sources[0]}" .c).o}"
"""


def fake_wrappers(tmp: Path, cflags: str = "", libs: str = "") -> dict[str, Path]:
    """The fake BSPonMPI bspcc (cc with cflags, linking libs), the fake lpfcc and the
    compiler command scripts/build-peer.sh writes for LPF (lpfcc -engine pthread ... -lbsplib)."""
    bin_dir = tmp / "peer-bin"
    bin_dir.mkdir()
    scripts = {
        "bspcc": FAKE_BSPONMPI_BSPCC.replace("@CC@", f"cc {cflags}").replace("@LIBS@", libs),
        "lpfcc": FAKE_LPFCC.replace("@CC@", "cc").replace("@BSPLIB_CFLAGS@", cflags).replace("@LIBS@", libs),
        "bspcc-pthread": f'#!/usr/bin/env bash\nexec {bin_dir / "lpfcc"} -engine pthread "$@" -lbsplib\n',
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return {name: bin_dir / name for name in scripts}


def cmake_like_build(compiler: list[str], work: Path) -> subprocess.CompletedProcess[str]:
    """A source compiled and an archive linked as CMake's Ninja build does: -MD -MT -MF, a
    separate -include, -c; then the object and a static library into a program."""
    (work / "two.h").write_text("#define TWO 2\n")
    (work / "lib.c").write_text("int two(void) { return TWO; }\n")
    (work / "main.c").write_text("int two(void);\nint main(void) { return two() == TWO ? 0 : 1; }\n")
    script = [
        *(
            [*compiler, "-include", str(work / "two.h"), "-O2", "-MD", "-MT", f"{n}.c.o", "-MF", f"{n}.c.o.d"]
            + ["-o", f"{n}.c.o", "-c", str(work / f"{n}.c")]
            for n in ("lib", "main")
        ),
        ["ar", "qc", "liblib.a", "lib.c.o"],
        [*compiler, "-O2", "main.c.o", "-o", "prog", "liblib.a"],
        ["./prog"],
    ]
    for cmd in script:
        done = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        if done.returncode != 0:
            return done
    return done


WRAPPER_CC = REPO / "cmake" / "portable" / "wrapper-cc.sh"


@pytest.mark.parametrize("wrapper", ["bspcc", "bspcc-pthread"])
def test_peer_wrappers_build_through_wrapper_cc(wrapper: str, tmp_path: Path) -> None:
    """BSPonMPI's bspcc fails on CMake's command lines (issue 38): the fake one does too, and
    through cmake/portable/wrapper-cc.sh both it and LPF's compile, link an archive and keep
    the depfile (the object's headers, for ninja)."""
    cc = fake_wrappers(tmp_path)[wrapper]
    direct, through = tmp_path / "direct", tmp_path / "through"
    direct.mkdir()
    through.mkdir()
    r = cmake_like_build([str(cc)], direct)
    if wrapper == "bspcc":
        assert r.returncode != 0 and "is the same as output file" in r.stderr, r.stderr
    r = cmake_like_build(["bash", str(WRAPPER_CC), str(cc)], through)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "two.h" in (through / "main.c.o.d").read_text()


def test_plain_lpfcc_says_what_to_use(tmp_path: Path) -> None:
    """LPF's lpfcc builds a BSPlib program only with an engine and -lbsplib: one line says
    what to give instead."""
    cc = fake_wrappers(tmp_path)["lpfcc"]
    with pytest.raises(
        LibraryError, match=r"lpfcc compiles BSPlib programs only with an engine and -lbsplib.*bspcc-ENGINE"
    ):
        library_from(bspcc=str(cc), launcher="")
    assert library_from(bspcc=str(cc), cflags="-engine pthread -lbsplib", launcher="") is not None


@pytest.mark.slow
@needs_programs("bspcc", "bsprun")
def test_run_with_the_peers_own_wrappers(tmp_path: Path) -> None:
    """`bspkit run --bspcc` with BSPonMPI's own bspcc and LPF's bspcc-ENGINE (fakes that sort
    their arguments as those do, on bspkit's libbsp) builds the driver and runs it."""
    cflags, libs = bsp_h_alone(tmp_path)
    fakes = fake_wrappers(tmp_path, cflags, libs)
    env = {"BSPKIT_CACHE_DIR": str(tmp_path / "cache")}
    for name, wrapper in (("bsponmpi", fakes["bspcc"]), ("lpf-pthread", fakes["bspcc-pthread"])):
        r = run_bspkit(
            "run",
            "inprod",
            "-n",
            "2",
            "--bspcc",
            str(wrapper),
            "--launcher",
            "",
            "--library-name",
            name,
            env=env,
            timeout=600,
        )
        assert r.returncode == 0, r.stderr
        assert f"check: passed (portable build, library {name})" in r.stdout, r.stdout
        (cache,) = (tmp_path / "cache" / "portable").glob(f"{name}-*")
        assert (cache / "bspkit-wrapper-cc").is_file()


# ------------------------------------------------------------------ the libraries' table


def sweep(
    library: str | None, backend: str, alg: str, rows: list[tuple[int, str, float]], err: float
) -> dict[str, Any]:
    return {
        "format": 1,
        "algorithm": alg,
        "backend": backend,
        "library": {"name": library} if library else {"name": "bspkit"},
        "sweep": "alpha",
        "rows": [{"size": n, "sweep_value": v, "measured_s": t, "efficiency": 0.5} for n, v, t in rows],
        "summary": {"all": {"best_error": err, "best_model": "g(h)"}},
    }


def test_table_compares_at_the_largest_common_problem() -> None:
    a = sweep(None, "threads", "llcs-dp", [(1000, "1", 1.0), (2000, "1", 4.0), (4000, "1", 16.0)], 0.05)
    b = sweep("bsponmpi", "bsponmpi@1.1", "llcs-dp", [(1000, "1", 1.5), (2000, "1", 6.0)], 0.10)
    c = sweep(None, "mpi", "rdxsort", [(100, "", 0.2)], 0.02)
    cols = lt.columns_of([], [("a", a), ("b", b), ("c", c)])
    assert [col.key for col in cols] == ["bspkit/threads", "bsponmpi", "bspkit/mpi"]
    rows = lt.algorithm_rows(cols)
    llcs = next(r for r in rows if r.algorithm == "llcs-dp")
    assert llcs.config == (2000, "1")  # 4000 was not run by bsponmpi
    assert [c.time_s if c else None for c in llcs.cells] == [4.0, 6.0, None]
    assert llcs.cells[1] is not None and llcs.cells[1].error == 0.10
    text = "\n".join(lt.table_lines(cols))
    assert "llcs-dp (n = 2000, alpha = 1)" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("llcs-dp"))
    assert line.index("●●● 4 s") < line.index("● 6 s")
    html, nimg = lt.html_section(cols)
    assert "thesis Table 6.1" in html and nimg == 1


def test_compare_cli_with_sweeps(tmp_path: Path) -> None:
    for name, data in (
        ("t", sweep(None, "threads", "rdxsort", [(100, "", 0.2)], 0.02)),
        ("o", sweep("other", "other", "rdxsort", [(100, "", 0.3)], 0.04)),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "validate.json").write_text(json.dumps(data))
    out = tmp_path / "c.html"
    r = run_bspkit("compare", str(tmp_path / "t"), str(tmp_path / "o" / "validate.json"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "bspkit/threads" in r.stdout and "other" in r.stdout and "rdxsort (n = 100)" in r.stdout
    assert "Libraries and algorithms" in out.read_text()
    (tmp_path / "o" / "validate.json").write_text(json.dumps({"format": 99}))
    r = run_bspkit("compare", str(tmp_path / "t"), str(tmp_path / "o"), "-o", str(out))
    assert r.returncode == 1 and "validate.json format 99" in r.stderr


def test_resume_refuses_another_library(tmp_path: Path) -> None:
    from bspkit import algorithms as al
    from bspkit.console import UsageError
    from bspkit.measure import validation as va

    (tmp_path / "validate.json").write_text(
        json.dumps({"format": 1, "algorithm": "inprod", "backend": "lpf@1", "p": 2})
    )
    assert va.load_resumed(tmp_path, al.ALGORITHMS["inprod"], "lpf@1", 2)["backend"] == "lpf@1"
    with pytest.raises(UsageError, match="inprod on lpf@1 with p = 2, this command asks for inprod on lpf@2"):
        va.load_resumed(tmp_path, al.ALGORITHMS["inprod"], "lpf@2", 2)
