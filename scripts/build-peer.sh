#!/usr/bin/env bash
# build-peer.sh - builds another BSPlib (BSPonMPI, MulticoreBSP for C, LPF) from a checkout of
# its sources into PREFIX, leaves there a compiler command and a launcher for each variant (for
# bspkit's --bspcc and --launcher), and checks each pair with a small BSPlib program.
# The peer's sources stay where they are: nothing of them is copied into this repository.
set -uo pipefail

root="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
me="build-peer.sh"
jobs=2
cmake_cmd=""
procs="1 2 4"
check=1
timeout_s=120

usage() {
    cat <<EOF
Usage: scripts/build-peer.sh [options] NAME SRC_DIR PREFIX

Builds the BSPlib NAME from its sources in SRC_DIR (a checkout or unpacked release,
outside this repository), installs it into PREFIX, and writes there, for each of
its variants, a compiler command that builds a plain BSPlib program (bsp.h, the
BSPlib of Hill et al. 1998) and a launcher, for bspkit's --bspcc and --launcher:

  NAME          variants   compiler command            launcher ({p}: processes)
  bsponmpi      msg, rma   PREFIX/bin/bspkit-bspcc     PREFIX/bin/launch-msg -n {p}
                                                       PREFIX/bin/launch-rma -n {p}
  multicorebsp  pthread    PREFIX/bin/bspcc            '' (none: the program starts its
                                                       own threads; P is its argument)
  lpf           pthread,   PREFIX/bin/bspcc-ENGINE     PREFIX/bin/launch-ENGINE -n {p}
                mpimsg,
                mpirma

One build serves all variants of a library: BSPonMPI chooses msg or rma at run
time (BSPONMPI_A2A_METHOD, set by its bsprun --msg/--rma), LPF builds every
engine that the machine allows (mpirma only where MPI has unified windows).

  bsponmpi      CMake (its configure script's steps): cmake -S SRC_DIR
                -B PREFIX/build -DCMAKE_BUILD_TYPE=Release; the libraries, bompiprobe,
                bspcc and bsprun are installed (its tests are not built). Needs cmake,
                make, gcc, g++, Open MPI or MPICH (mpicc, mpicxx, mpirun).
                PREFIX/bin/bspkit-bspcc is mpicc with its bsp.h and library: its own
                bspcc takes the file after -MT or -MF (as CMake passes them) for an
                input and fails in a plain CMake build (bspkit's --bspcc takes it:
                it runs wrappers through cmake/portable/wrapper-cc.sh).
  multicorebsp  its Makefile, run in a copy of SRC_DIR in PREFIX/build (MulticoreBSP
                builds in place: its tools/bspcc refers to that directory). Needs make,
                gcc, g++. PREFIX/bin/bspcc runs tools/bspcc --compat (Hill et al.'s
                int types instead of MulticoreBSP's unsigned/size_t) and -std=gnu11
                unless a -std flag is given (its bspcc would pass -std=c99).
  lpf           its bootstrap.sh in PREFIX/build, then make and make install. Needs
                CMake 3.29 or newer (--cmake), make, gcc, g++, MPI for the MPI
                engines; hwloc (hwloc-calc) for thread pinning. PREFIX/bin/bspcc-ENGINE
                runs lpfcc -engine ENGINE ... -lbsplib.

The launchers take -n P as bspkit's bsprun does and apply its policy for Open MPI:
--bind-to core when P is at most the number of cores, --oversubscribe --bind-to none
beyond; as root, OMPI_ALLOW_RUN_AS_ROOT=1 (also while configuring: LPF's configure
runs MPI test programs); at P = 1, where Open MPI 4.1's MPI_Win_create fails, the
variants that use MPI windows (BSPonMPI, LPF mpirma) get --mca osc pt2pt.

After the build, a BSPlib program of this script (hello, one bsp_put, one bsp_send,
results checked on every process) is built with each compiler command as CMake
builds (-MD -MT -MF, -c, then a link) and run with each launcher at every P of --procs.

For bspkit's --peer, each variant is described in PREFIX/variants/VARIANT/bspkit-peer.json
(name, e.g. bsponmpi-msg; version, with the commit when SRC_DIR is a git checkout:
1.1.1+2dc757c; compiler; launcher), and the library's default variant (BSPonMPI: rma, as
its bsprun; LPF: pthread, as its lpfrun) also in PREFIX/bspkit-peer.json:
  bspkit run inprod -n 2 --peer PREFIX                  (the default variant)
  bspkit run inprod -n 2 --peer PREFIX/variants/msg     (another one)

Options:
  --jobs N       parallel build jobs (default: $jobs).
  --cmake PATH   the cmake to use (default: cmake on PATH). LPF needs 3.29 or newer;
                 where the system has an older one: python3 -m venv DIR &&
                 DIR/bin/pip install cmake, then --cmake DIR/bin/cmake.
  --procs "P..." numbers of processes of the check (default: "$procs").
  --timeout S    seconds a check run may take (default: $timeout_s).
  --no-check     build and install only.
  -h, --help     print this help and exit.

Sources (not ours to vendor; the versions tried are in docs/peers.md):
  BSPonMPI      https://github.com/wijnand-suijlen/bsponmpi
  LPF           https://github.com/Algebraic-Programming/LPF
  MulticoreBSP  MulticoreBSP for C 2.0.x from its authors (LGPL), unpacked

Exit status: 0 when everything was built and every check passed, 1 otherwise (the
error is printed on one line; the build logs are in PREFIX/logs).
EOF
}

die() { echo "$me: error: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --jobs) [ $# -ge 2 ] || die "--jobs needs a value"; jobs="$2"; shift 2 ;;
        --cmake) [ $# -ge 2 ] || die "--cmake needs a value"; cmake_cmd="$2"; shift 2 ;;
        --procs) [ $# -ge 2 ] || die "--procs needs a value"; procs="$2"; shift 2 ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs a value"; timeout_s="$2"; shift 2 ;;
        --no-check) check=0; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
done
[ $# -eq 3 ] || die "expected NAME SRC_DIR PREFIX, got $# argument(s) (see --help)"
name="$1"
case "$name" in
    bsponmpi) library="BSPonMPI"; markers="CMakeLists.txt bspcc.in bsprun.in include/bsp.h" ;;
    multicorebsp) library="MulticoreBSP for C"; markers="Makefile version.mk bspcc.in mcbsp.c" ;;
    lpf) library="LPF"; markers="bootstrap.sh lpfrun.in lpfcc.in src/bsplib" ;;
    *) die "unknown NAME '$name' (one of: bsponmpi, multicorebsp, lpf)" ;;
esac
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive integer, not '$jobs'"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer, not '$timeout_s'"
[ -n "${procs// /}" ] || die "--procs needs at least one number"
for p in $procs; do [[ "$p" =~ ^[1-9][0-9]*$ ]] || die "--procs: '$p' is not a positive integer"; done

[ -e "$2" ] || die "source directory $2 does not exist"
src="$(cd "$2" 2>/dev/null && pwd -P)" || die "source directory $2 is not a directory"
prefix="$(realpath -m -- "$3")" || die "cannot resolve PREFIX $3"
inside() { case "$1/" in "$2"/*) return 0 ;; esac; return 1; }
inside "$src" "$root" && die "the source directory $src is inside this repository ($root): $library's code is not ours to vendor"
inside "$prefix" "$root" && die "PREFIX $prefix is inside this repository ($root): the build holds $library's code"
inside "$prefix" "$src" && die "PREFIX $prefix is inside the source directory $src"
inside "$src" "$prefix" && die "the source directory $src is inside PREFIX $prefix"
for m in $markers; do
    [ -e "$src/$m" ] || die "$src does not look like $library's sources (no $m)"
done

# ---- Tools ------------------------------------------------------------------------------
# need TOOL DEBIAN_PACKAGE: the one-line error names the package that provides it.
need() {
    command -v "$1" > /dev/null 2>&1 \
        || die "$1 not found in PATH; $library needs it (Debian/Ubuntu: apt-get install $2)"
}
need make make
need gcc gcc
need g++ g++
case "$name" in
    bsponmpi | lpf)
        need mpicc libopenmpi-dev
        need mpicxx libopenmpi-dev
        need mpirun openmpi-bin
        cmake_bin="${cmake_cmd:-cmake}"
        if [ -n "$cmake_cmd" ]; then
            command -v "$cmake_cmd" > /dev/null 2>&1 || die "--cmake: $cmake_cmd is not an executable"
        else
            need cmake cmake
        fi
        cmake_version="$("$cmake_bin" --version 2>/dev/null | sed -n '1s/^cmake version \([0-9.]*\).*/\1/p')"
        [ -n "$cmake_version" ] || die "cannot read the version of $cmake_bin"
        ;;
esac
if [ "$name" = lpf ]; then
    IFS=. read -r cmj cmn _ <<< "$cmake_version"
    if [ "$cmj" -lt 3 ] || { [ "$cmj" -eq 3 ] && [ "$cmn" -lt 29 ]; }; then
        die "LPF needs CMake 3.29 or newer, $cmake_bin is $cmake_version: give one with --cmake PATH (python3 -m venv DIR && DIR/bin/pip install cmake)"
    fi
    command -v hwloc-calc > /dev/null 2>&1 \
        || echo "$me: warning: hwloc-calc not found: LPF's pthread engine will not pin threads (apt-get install hwloc libhwloc-dev)" >&2
fi
# Open MPI refuses to run as root unless told that it is meant (LPF's configure runs MPI
# programs; the checks run the launchers, which set this themselves).
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

# ---- What is built ----------------------------------------------------------------------
if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
    source_id="$(git -C "$src" rev-parse HEAD)"
    git -C "$src" diff --quiet HEAD 2>/dev/null || source_id="$source_id+modified"
else
    source_id="no-git"
fi
case "$name" in
    bsponmpi)
        version="$(sed -n 's/.*CPACK_PACKAGE_VERSION_\(MAJOR\|MINOR\|PATCH\) *"\([0-9]*\)".*/\2/p' "$src/CMakeLists.txt" | paste -sd.)" ;;
    multicorebsp)
        version="$(sed -n 's/^VERSION=//p' "$src/version.mk")" ;;
    lpf)
        version="$(sed -n 's/^set(VERSION_\(MAJOR\|MINOR\|PATCH\) *"\([0-9]*\)").*/\2/p' "$src/CMakeLists.txt" | paste -sd.)" ;;
esac
[ -n "$version" ] || version="unknown"

logs="$prefix/logs"
build="$prefix/build"
mkdir -p "$logs" "$prefix/bin" 2>/dev/null || die "cannot create $prefix/logs and $prefix/bin"
echo "$library $version (source: $src, ${source_id}) -> $prefix"

# step LOG DESCRIPTION COMMAND...: runs COMMAND with its output in LOG; on failure, one line
# with the first error the log shows.
step() {
    local log="$logs/$1" what="$2"; shift 2
    echo "  $what (log: $log)"
    if ! "$@" > "$log" 2>&1; then
        local first
        first="$(grep -m1 -iE 'error|fatal|cannot|not found' "$log" | cut -c1-200)"
        die "$what failed${first:+: $first} (log: $log)"
    fi
}

# ---- Launchers --------------------------------------------------------------------------
# write_launcher FILE KIND ENGINE RUNNER: KIND bsponmpi (RUNNER: its bsprun; ENGINE msg or
# rma) or lpf (RUNNER: lpfrun; ENGINE: the LPF engine).
write_launcher() {
    local file="$1"
    {
        echo '#!/usr/bin/env bash'
        echo "# Launcher for $library $version, variant $3, written by bspkit's scripts/build-peer.sh."
        echo "kind=$2"
        echo "engine=$3"
        printf 'runner=%q\n' "$4"
        cat <<'EOF'
# Usage: launch-VARIANT -n P PROGRAM [ARGS...]
# Open MPI gets bspkit's bsprun's policy: --bind-to core when P is at most the cores,
# --oversubscribe --bind-to none beyond; as root, OMPI_ALLOW_RUN_AS_ROOT=1; at P = 1,
# --mca osc pt2pt where the library uses MPI windows (Open MPI 4.1's MPI_Win_create
# fails on one process).
set -u
me=$(basename "$0")
if [ $# -lt 3 ] || [ "$1" != -n ]; then
  echo "$me: error: usage: $me -n P PROGRAM [ARGS...]" >&2
  exit 1
fi
p=$2
shift 2
case $p in '' | *[!0-9]* | 0*) echo "$me: error: -n needs a positive integer, not '$p'" >&2; exit 1 ;; esac
cores=$(nproc 2>/dev/null) || cores=1
mpi=()
if mpirun --version 2>/dev/null | grep -q 'Open MPI'; then
  if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
  if [ "$p" -gt "$cores" ]; then mpi=(--oversubscribe --bind-to none); else mpi=(--bind-to core); fi
  if [ "$p" = 1 ] && { [ "$kind" = bsponmpi ] || [ "$engine" = mpirma ]; }; then
    mpi+=(--mca osc pt2pt)
  fi
  # Two mpiruns that start at once race to make /tmp/ompi.HOST.UID: each job its own.
  if [ -z "${OMPI_MCA_orte_tmpdir_base:-}" ]; then
    jobdir=$(mktemp -d "${TMPDIR:-/tmp}/peer-launch.XXXXXX") || exit 1
    export OMPI_MCA_orte_tmpdir_base=$jobdir
    trap 'rm -rf "$jobdir"' EXIT
  fi
fi
pass=()
case $kind in
  bsponmpi)
    for a in "${mpi[@]}"; do pass+=("--mpirun,$a"); done
    "$runner" "--$engine" -n "$p" "${pass[@]}" "$@"
    ;;
  lpf)
    if [ "$engine" != pthread ]; then for a in "${mpi[@]}"; do pass+=("-mpirun,$a"); done; fi
    "$runner" -engine "$engine" -np "$p" "${pass[@]}" "$@"
    ;;
esac
EOF
    } > "$file" && chmod +x "$file" || die "cannot write $file"
}

# ---- Build ------------------------------------------------------------------------------
declare -a variants=() ccs=() launchers=()
add_variant() { variants+=("$1"); ccs+=("$2"); launchers+=("$3"); }

case "$name" in
    bsponmpi)
        # Its CMakeLists.txt asks for CMake 2.8.11; CMake 4 needs the policy floor raised.
        step configure.log "configuring (cmake)" "$cmake_bin" -S "$src" -B "$build" \
            -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
            -DCMAKE_POLICY_VERSION_MINIMUM=3.5
        # Only what is installed: its API tests (hundreds of programs) are left out.
        step build.log "building" "$cmake_bin" --build "$build" -j "$jobs" \
            --target bsponmpi bsponmpi_prof bsc bsc_pthread bompiprobe
        # Its install step ends with a post-install check that compiles a CMake project with
        # bspcc as CMAKE_C_COMPILER, which fails on current CMake ("input file is the same as
        # output file"); an empty DESTDIR (the same paths) is the way it offers to skip it.
        step install.log "installing" env DESTDIR= "$cmake_bin" --install "$build"
        # BSPonMPI's own bspcc takes the argument after -MT or -MF (which CMake passes) for an
        # input file and then fails ("input file ... is the same as output file"); this one
        # passes every argument to mpicc unchanged and adds BSPonMPI's header and library (C++
        # inside: libstdc++), as its bspcc does.
        mpicc_path="$(command -v mpicc)"
        {
            echo '#!/usr/bin/env bash'
            echo "# Compiler command for plain BSPlib programs on $library $version, written by bspkit's"
            echo "# scripts/build-peer.sh: mpicc with BSPonMPI's bsp.h and libbsponmpi (C++: libstdc++)."
            printf 'exec %q -I%q "$@" -L%q -lbsponmpi -lstdc++ -lm\n' "$mpicc_path" "$prefix/include" "$prefix/lib"
        } > "$prefix/bin/bspkit-bspcc" && chmod +x "$prefix/bin/bspkit-bspcc" \
            || die "cannot write $prefix/bin/bspkit-bspcc"
        for v in msg rma; do
            write_launcher "$prefix/bin/launch-$v" bsponmpi "$v" "$prefix/bin/bsprun"
            add_variant "$v" "$prefix/bin/bspkit-bspcc" "$prefix/bin/launch-$v -n {p}"
        done
        ;;
    multicorebsp)
        rm -rf "$build" && mkdir -p "$build" || die "cannot make $build"
        (cd "$src" && tar --exclude=.git -cf - .) | (cd "$build" && tar -xf -) \
            || die "cannot copy $src to $build"
        step build.log "building (make)" make -C "$build" -j "$jobs"
        [ -x "$build/tools/bspcc" ] || die "MulticoreBSP's make did not leave tools/bspcc in $build"
        {
            echo '#!/usr/bin/env bash'
            echo "# bspcc for plain BSPlib programs on $library $version, written by bspkit's"
            echo "# scripts/build-peer.sh: MulticoreBSP's bspcc with --compat (Hill et al. 1998: int"
            echo "# for pids, counts and sizes) and -std=gnu11 unless a -std flag is given."
            printf 'bspcc=%q\n' "$build/tools/bspcc"
            cat <<'EOF'
std=-std=gnu11
for a in "$@"; do case $a in -std=* | --ansi) std= ;; esac; done
exec "$bspcc" --compat ${std:+"$std"} "$@"
EOF
        } > "$prefix/bin/bspcc" && chmod +x "$prefix/bin/bspcc" || die "cannot write $prefix/bin/bspcc"
        add_variant pthread "$prefix/bin/bspcc" ""
        ;;
    lpf)
        mkdir -p "$build" || die "cannot make $build"
        reconfig=()
        [ -f "$build/CMakeCache.txt" ] && reconfig=(--reconfig)
        step configure.log "configuring (bootstrap.sh)" \
            bash -c 'cd "$1" && shift && exec bash "$@"' _ "$build" "$src/bootstrap.sh" \
            --prefix="$prefix" --with-cmake="$cmake_bin" "${reconfig[@]}"
        step build.log "building (make)" make -C "$build" -j "$jobs"
        # Its install step ends with post-install checks that run every engine at p = 1..3
        # with plain lpfrun (no --oversubscribe: fails on fewer than 3 cores; ibverbs needs
        # InfiniBand); an empty DESTDIR (the same paths) skips them: this script checks below.
        step install.log "installing (make install)" env DESTDIR= make -C "$build" install
        for e in pthread mpimsg mpirma; do
            compgen -G "$prefix/lib/liblpf_core_univ_${e}_*" > /dev/null || continue
            {
                echo '#!/usr/bin/env bash'
                echo "# bspcc for plain BSPlib programs on $library $version, engine $e, written by"
                echo "# bspkit's scripts/build-peer.sh: lpfcc -engine $e with LPF's BSPlib layer"
                echo "# (-lbsplib: also when only compiling, where it puts LPF's bsp.h on the path)."
                printf 'exec %q -engine %q "$@" -lbsplib\n' "$prefix/bin/lpfcc" "$e"
            } > "$prefix/bin/bspcc-$e" && chmod +x "$prefix/bin/bspcc-$e" || die "cannot write $prefix/bin/bspcc-$e"
            write_launcher "$prefix/bin/launch-$e" lpf "$e" "$prefix/bin/lpfrun"
            add_variant "$e" "$prefix/bin/bspcc-$e" "$prefix/bin/launch-$e -n {p}"
        done
        [ ${#variants[@]} -gt 0 ] || die "LPF installed no engine library in $prefix/lib (see $logs/build.log)"
        ;;
esac

# ---- For bspkit's --peer: one bspkit-peer.json per variant, the default one in PREFIX -----
case "$name" in bsponmpi) default_variant=rma ;; *) default_variant=pthread ;; esac
label_version="$version"
case "$source_id" in
    no-git) ;;
    *+modified) label_version="$version+${source_id:0:7}.modified" ;;
    *) label_version="$version+${source_id:0:7}" ;;
esac
json() { local s="${1//\\/\\\\}"; s="${s//\"/\\\"}"; printf '"%s"' "$s"; }
peer_json() { # peer_json INDEX: the description of variant INDEX
    local v="${variants[$1]}" peer_name="$name-${variants[$1]}"
    [ "$name" = multicorebsp ] && peer_name="$name"
    printf '{\n'
    printf '  "name": %s,\n' "$(json "$peer_name")"
    printf '  "version": %s,\n' "$(json "$label_version")"
    printf '  "compiler": %s,\n' "$(json "${ccs[$1]}")"
    printf '  "cflags": "",\n  "libs": "",\n'
    printf '  "launcher": %s,\n' "$(json "${launchers[$1]}")"
    printf '  "wrapper": true,\n'
    printf '  "library": %s,\n' "$(json "$library")"
    printf '  "variant": %s,\n' "$(json "$v")"
    printf '  "source": %s,\n' "$(json "$src")"
    printf '  "commit": %s\n' "$(json "$source_id")"
    printf '}\n'
}
rm -rf "$prefix/variants" "$prefix/bspkit-peer.json"
for i in "${!variants[@]}"; do
    mkdir -p "$prefix/variants/${variants[$i]}" || die "cannot make $prefix/variants/${variants[$i]}"
    peer_json "$i" > "$prefix/variants/${variants[$i]}/bspkit-peer.json" \
        || die "cannot write $prefix/variants/${variants[$i]}/bspkit-peer.json"
    if [ "${variants[$i]}" = "$default_variant" ]; then
        peer_json "$i" > "$prefix/bspkit-peer.json" || die "cannot write $prefix/bspkit-peer.json"
    fi
done

# ---- Check ------------------------------------------------------------------------------
failed=()
if [ "$check" = 1 ]; then
    work="$build/bspkit-check"
    mkdir -p "$work" || die "cannot make $work"
    # The check program: P processes (P from the command line, for libraries without a
    # launcher; bsp_begin(P)), each puts its pid + 100 into the next one's registered variable and sends it
    # a message (tag: the pid, payload: pid + 1000); each checks what it received and says ok.
    cat > "$work/check.c" <<'EOF'
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>

/* Set in main: BSPlib promises main's state to process 0 only (LPF's MPI engines run main
 * on process 0 alone), so only process 0 compares it with bsp_nprocs(). */
static int wanted;

/* Not static: LPF's MPI engines pass the SPMD function to the other processes by its name. */
void spmd(void);
void spmd(void)
{
    bsp_begin(wanted);
    int p = bsp_nprocs(), s = bsp_pid(), left = (s + p - 1) % p;
    int got = -1, mine = 100 + s, tag = s, payload = 1000 + s, tagsize = (int)sizeof(int);
    bsp_push_reg(&got, (int)sizeof got);
    bsp_set_tagsize(&tagsize);
    bsp_sync();
    bsp_put((s + 1) % p, &mine, &got, 0, (int)sizeof mine);
    bsp_send((s + 1) % p, &tag, &payload, (int)sizeof payload);
    bsp_sync();
    int nmsg = -1, nbytes = -1, status = -1, from = -1, value = -1;
    bsp_qsize(&nmsg, &nbytes);
    if (nmsg == 1) {
        bsp_get_tag(&status, &from);
        bsp_move(&value, (int)sizeof value);
    }
    int ok = (s != 0 || p == wanted) && got == 100 + left && nmsg == 1 && nbytes == (int)sizeof value &&
             status == (int)sizeof value && from == left && value == 1000 + left;
    printf("check: process %d of %d: %s (asked for %d; put %d; %d message(s), %d bytes, status %d, "
           "tag %d, payload %d)\n",
           s, p, ok ? "ok" : "WRONG", wanted, got, nmsg, nbytes, status, from, value);
    fflush(stdout);
    bsp_pop_reg(&got);
    bsp_end();
    if (!ok) exit(1);
}

int main(int argc, char **argv)
{
    /* Before bsp_init: BSPonMPI's processes 1.. run spmd from within bsp_init. */
    wanted = argc > 1 ? atoi(argv[1]) : 0;
    if (wanted < 1) {
        fprintf(stderr, "usage: %s P\n", argv[0]);
        return 1;
    }
    bsp_init(spmd, argc, argv);
    spmd();
    return 0;
}
EOF
    echo "checking (a BSPlib program: hello, one put, one send) at p = $procs:"
    for i in "${!variants[@]}"; do
        v="${variants[$i]}" cc="${ccs[$i]}" launcher="${launchers[$i]}"
        exe="$work/check-$v"
        # Compiled and linked as CMake does (bspkit's portable build: -MD -MT -MF, -c, -o).
        if ! { (cd "$work" && "$cc" -O2 -std=c11 -MD -MT "check-$v.o" -MF "check-$v.o.d" \
                    -o "check-$v.o" -c "$work/check.c" && "$cc" -O2 "check-$v.o" -o "$exe"); } \
                > "$logs/check-$v.build.log" 2>&1; then
            failed+=("$v: does not compile with $cc ($(grep -m1 -i error "$logs/check-$v.build.log" | cut -c1-160))")
            echo "  $v: FAIL does not compile (log: $logs/check-$v.build.log)"
            continue
        fi
        for p in $procs; do
            read -r -a pre <<< "${launcher//\{p\}/$p}"
            log="$logs/check-$v.p$p.log"
            (cd "$work" && exec timeout -k 5 "$timeout_s" "${pre[@]}" "$exe" "$p") > "$log" 2>&1 < /dev/null
            rc=$?
            nok="$(grep -c '^check: process [0-9]* of '"$p"': ok' "$log")"
            if [ "$rc" = 0 ] && [ "$nok" = "$p" ]; then
                echo "  $v p=$p: ok"
            else
                why="exit status $rc, $nok of $p processes ok"
                [ "$rc" = 124 ] || [ "$rc" = 137 ] && why="timed out after ${timeout_s}s"
                line="$(grep -m1 -E 'WRONG|rror|bort' "$log" | cut -c1-160)"
                failed+=("$v p=$p: $why${line:+: $line}")
                echo "  $v p=$p: FAIL $why (log: $log)"
            fi
        done
    done
fi

echo
echo "$library $label_version installed in $prefix; for bspkit:"
for i in "${!variants[@]}"; do
    v="${variants[$i]}"
    if [ "$v" = "$default_variant" ]; then
        echo "  $v: --peer $prefix (or $prefix/variants/$v)"
    else
        echo "  $v: --peer $prefix/variants/$v"
    fi
    printf "    that is --bspcc %s --launcher '%s'\n" "${ccs[$i]}" "${launchers[$i]}"
done
if [ ${#failed[@]} -gt 0 ]; then
    die "the check failed: $(printf '%s; ' "${failed[@]}" | sed 's/; $//')"
fi
exit 0
