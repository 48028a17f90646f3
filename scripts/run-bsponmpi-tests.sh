#!/usr/bin/env bash
# run-bsponmpi-tests.sh - runs BSPonMPI's own API tests against bspkit's libbsp.
# BSPonMPI's sources stay where they are: everything is built in a temporary directory.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bspcc="$root/build/bin/bspcc"
bsprun="$root/build/bin/bsprun"
backends="threads mpi mpi-rma"
procs="1 2 3 4"
timeout_s=60
keep=0
only=""

usage() {
    cat <<EOF
Usage: scripts/run-bsponmpi-tests.sh [options] BSPONMPI_DIR

Builds BSPonMPI's API tests (BSPONMPI_DIR/test/*.c, those that BSPonMPI's
CMakeLists.txt registers with add_mpi_test and that include only bsp.h and the C
library) with bspkit's bspcc, in a temporary directory, and runs each on every back
end and every number of processes given, judging them as BSPonMPI's harness does:

  success() tests pass when the program exits with status 0 (a failed EXPECT in
            BSPonMPI's test.h prints "TEST FAILED" and calls abort());
  abort(M)  tests pass when the run ends with an error that the library detected:
            bspkit's status 1 and a "bspkit: error in F" line, where BSPonMPI's
            message M names F (or bspkit defers the check to bsp_sync/bsp_end);
            when the program calls bsp_abort(M) itself, bspkit must print M.
            BSPonMPI compares M's text; bspkit's wording differs, so only the
            function is compared. Exit status 0 means the error went unnoticed.

Not run: bsc_* (BSPonMPI's collectives library bsc.h, not BSPlib), tests that
include other headers (init_2 calls MPI itself), and tests that BSPonMPI's
CMakeLists.txt does not run by default. A cell is "skip" when the test means
nothing at that p or on that back end, and "open" when the test expects BSPonMPI's
answer to a question the BSPlib standard leaves open and bspkit answers otherwise;
the reasons are printed below the table.

Options:
  --bspcc PATH       bspcc to compile with (default: $root/build/bin/bspcc).
                     The C compiler is \$BSPCC_CC, as for bspcc itself.
  --bsprun PATH      bsprun to run with (default: $root/build/bin/bsprun).
  --backends "B..."  back ends to run on (default: "$backends").
  --procs "P..."     numbers of processes (default: "$procs").
  --timeout S        seconds per run before it counts as a FAIL (default: $timeout_s).
  --only "T..."      run only these tests (names without .c).
  --keep             keep the build directory (binaries and every run's output).
  -h, --help         print this help and exit.

Get BSPonMPI outside this repository (its sources must not be copied into it), e.g.
  git clone https://github.com/wijnand-suijlen/bsponmpi /tmp/bsponmpi

Exit status: 0 when nothing failed, 1 when some test FAILed (or did not compile),
2 for a usage error.
EOF
}

die() { echo "run-bsponmpi-tests.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --bspcc) [ $# -ge 2 ] || die "--bspcc needs a value"; bspcc="$2"; shift 2 ;;
        --bsprun) [ $# -ge 2 ] || die "--bsprun needs a value"; bsprun="$2"; shift 2 ;;
        --backends) [ $# -ge 2 ] || die "--backends needs a value"; backends="$2"; shift 2 ;;
        --procs) [ $# -ge 2 ] || die "--procs needs a value"; procs="$2"; shift 2 ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs a value"; timeout_s="$2"; shift 2 ;;
        --only) [ $# -ge 2 ] || die "--only needs a value"; only="$2"; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || { usage >&2; exit 2; }
src="$(cd "$1" 2>/dev/null && pwd)" || die "no directory $1"
[ -f "$src/test/test.h" ] && [ -f "$src/CMakeLists.txt" ] \
    || die "$src does not look like BSPonMPI (no test/test.h or CMakeLists.txt)"
case "$src/" in "$root"/*) die "BSPonMPI must not be inside this repository ($root)" ;; esac
[ -x "$bspcc" ] || die "bspcc not found: $bspcc"
[ -x "$bsprun" ] || die "bsprun not found: $bsprun"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer"
for p in $procs; do [[ "$p" =~ ^[1-9][0-9]*$ ]] || die "--procs: '$p' is not a positive integer"; done
for b in $backends; do
    case "$b" in threads|procs|mpi|mpi-rma|mpi-naive) ;; *) die "--backends: unknown back end '$b'" ;; esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/bsponmpi-tests.XXXXXX")" || die "mktemp failed"
if [ "$keep" = 1 ]; then echo "build directory (kept): $work"
else trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/shim" "$work/bin" "$work/log"

# ---- The harness hooks that BSPonMPI's test.h expects ----------------------------------
# test.h includes "dllexport.h" (BSPonMPI internal: symbol visibility) and its TEST macro
# makes main() call bsp_intern_expect_success() or bsp_intern_expect_abort(msg) first. These
# replacements make stdout unbuffered (EXPECT prints "TEST FAILED" and then abort()s, which
# would lose a buffered line) and, with BSPONMPI_TESTS_QUERY set, print the expectation and
# exit before any BSPlib call, so the C compiler, not this script, parses the message.
cat > "$work/shim/dllexport.h" <<'EOF'
#define DLL_PUBLIC
EOF
cat > "$work/shim/harness.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
static int unbuffered; /* set by the first call; later ones are the threads re-entering main */
static void expect(const char *what, const char *message)
{
    if (!unbuffered) { setvbuf(stdout, NULL, _IONBF, 0); unbuffered = 1; }
    if (getenv("BSPONMPI_TESTS_QUERY")) { printf("%s%s\n", what, message); exit(0); }
}
void bsp_intern_expect_success(void) { expect("success", ""); }
void bsp_intern_expect_abort(const char *message) { expect("abort ", message); }
EOF
"$bspcc" -O2 -g -c "$work/shim/harness.c" -o "$work/shim/harness.o" \
    || die "bspcc cannot compile the harness hooks ($bspcc)"

# ---- Which tests, and at which p --------------------------------------------------------
# BSPonMPI's CMakeLists.txt lists the tests it runs: add_mpi_test(NAME P) outside any if();
# those inside if (ENABLE_LARGE_TESTS) or commented out are not run by default.
registered="$(awk '
    { line = $0; sub(/#.*/, "", line) }
    line ~ /^[ \t]*if[ \t]*\(/   { depth++ }
    line ~ /^[ \t]*endif/        { depth-- }
    line ~ /add_(mpi|bsc)_test[ \t]*\(/ {
        kind = (line ~ /add_bsc_test/) ? "bsc" : "api"
        gsub(/.*add_(mpi|bsc)_test[ \t]*\([ \t]*|[ \t]*\).*/, "", line)
        split(line, f, /[ \t]+/)
        print f[1], f[2], (depth > 0 ? "conditional" : kind)
    }' "$src/CMakeLists.txt")"

# The expected error (or the checked result) involves a second process: at p = 1 the test
# checks nothing, or BSPonMPI itself reports a different error (it runs these at P >= 2).
declare -A needs_p2=(
    [get_3]="only processes 1.. read from process 0's zero-size registration"
    [put_3]="only processes 1.. write to process 0's zero-size registration"
    [pop_reg_1]="process 0 pops, the others do not"
    [pop_reg_3]="process 0 pops another registration than the others"
    [pop_reg_7]="NULL is the 2nd registration on process 0, the 1st on the others"
    [push_reg_11]="processes 1.. register, process 0 does not"
    [push_reg_13]="process 0 registers, the others do not"
    [push_reg_16]="processes 1.. register, process 0 does not"
    [set_tagsize_2]="processes 1.. set the tag size, process 0 does not"
    [set_tagsize_3]="processes 1.. set the tag size, process 0 does not"
    [set_tagsize_4]="each process asks for tag size = its pid"
    [sync_2]="process 0 syncs, the others end"
    [sync_3]="processes 1.. sync, process 0 ends"
    [putget_2]="checks data read from process 1"
)
# Per-process global variables: on the threads back end all BSP processes share them
# (docs/semantics.md, "Globals are shared on the threads back end"), so the test races at p >= 2.
declare -A needs_processes=(
    [init_1]="processes write the static s_some_int (shared by threads)"
)

# Where BSPonMPI's test expects what the BSPlib standard leaves open and bspkit decides
# otherwise (docs/semantics.md): a failure there is "open", not FAIL.
declare -A open_behaviour=(
    [send_various_tags_1]="expects the message queue in descending order of sender; BSPlib leaves the order open, bspkit delivers by ascending sender pid"
    [push_reg_16]="the program makes two errors (process 0 pops NULL it never registered, and the registration counts differ); bspkit reports the first, at bsp_pop_reg, BSPonMPI the second, at the sync"
    [qsize_accum_nbytes_null]="expects an error for bsp_qsize(&n, NULL); BSPlib leaves it open, MulticoreBSP documents the byte count as optional and bspkit skips it (docs/compatibility.md)"
)

declare -a tests=() notrun=()
declare -A cmake_p=()
while read -r name p kind; do
    [ -n "$name" ] || continue
    if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then continue; fi
    case "$kind" in
        bsc) notrun+=("$name: uses BSPonMPI's collectives library bsc.h, not BSPlib"); continue ;;
        conditional) notrun+=("$name: registered only inside an if() (ENABLE_LARGE_TESTS, off by default)"); continue ;;
    esac
    [ -f "$src/test/$name.c" ] || { notrun+=("$name: registered, but test/$name.c is missing"); continue; }
    other="$(grep -ohE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]+' "$src/test/$name.c" \
        | sed -E 's/.*[<"]//' \
        | grep -vxE 'bsp\.h|test\.h|std(io|lib|int|def|arg|bool)\.h|string\.h|limits\.h|math\.h|assert\.h' \
        | tr '\n' ' ')"
    if [ -n "$other" ]; then
        notrun+=("$name: includes ${other% } besides bsp.h (not a BSPlib-only test)"); continue
    fi
    tests+=("$name"); cmake_p[$name]="$p"
done <<< "$registered"
for f in "$src"/test/*.c; do
    name="$(basename "$f" .c)"
    if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then continue; fi
    grep -qE "^$name " <<< "$registered" \
        || notrun+=("$name: not registered in BSPonMPI's CMakeLists.txt (disabled there)")
done
[ ${#tests[@]} -gt 0 ] || die "no API tests found in $src/test (or none matched --only)"

# ---- Judging one run --------------------------------------------------------------------
# Prints "pass", or "FAIL <reason>" (one line). $1 expectation, $2 status, $3 log base.
first_line() { grep -m1 -E "$1" "$2" | cut -c1-200; }
judge() {
    local expect="$1" rc="$2" out="$3.out" err="$3.err" line fn want
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "FAIL timed out after ${timeout_s}s"; return; fi
    line="$(first_line 'TEST FAILED' "$out")"
    if [ -n "$line" ]; then
        echo "FAIL $line $(grep -m1 -A1 'TEST FAILED' "$out" | tail -n1 | sed -E 's/^ +//; s|.*/test/||')"
        return
    fi
    if [ "$expect" = success ]; then
        [ "$rc" = 0 ] && { echo pass; return; }
    else
        want="${expect#abort }"
        [ "$rc" = 0 ] && { echo "FAIL no error detected (BSPonMPI expects '$want')"; return; }
        line="$(grep -m1 -E '^bspkit: bsp_abort( on process [0-9]+)?: ' "$err")"
        if [ -n "$line" ] && [ "$rc" = 1 ]; then
            # The program's own bsp_abort: its message must come through.
            if [[ "$line" == *": $want"* ]]; then echo pass
            else echo "FAIL wrong message: $line (BSPonMPI expects '$want')"; fi
            return
        fi
        line="$(grep -m1 -E '^bspkit: error in bsp_[a-z_]+' "$err")"
        if [ -n "$line" ] && [ "$rc" = 1 ]; then
            fn="$(sed -E 's/^bspkit: error in (bsp_[a-z_]+).*/\1/' <<< "$line")"
            # BSPonMPI's message starts with the function(s) that detect it: "bsp_put: ..."
            # or "bsp_sync/bsp_pop_reg: ...". Collective checks may wait for the sync.
            case "/${want%%:*}/bsp_sync/bsp_end/" in
                */"$fn"/*) echo pass ;;
                *) echo "FAIL other error: $(cut -c1-160 <<< "$line") (BSPonMPI expects '$want')" ;;
            esac
            return
        fi
    fi
    # Neither outcome: say what happened instead.
    line="$(first_line '^(bspkit|bsprun): ' "$err")"
    [ -n "$line" ] || line="$(first_line 'exited on signal|Segmentation|Aborted|core dumped' "$err")"
    [ -n "$line" ] || line="$(first_line '[^[:space:]]' "$err")"
    if [ -z "$line" ] && [ "$rc" -gt 128 ]; then
        line="killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null || echo ?))"
    fi
    echo "FAIL exit status $rc${line:+: $line}"
}

# ---- Build and run ----------------------------------------------------------------------
declare -A cell=() why=() expected=()
fail_all() {
    local b p
    for b in $backends; do for p in $procs; do cell[$1,$b,$p]=FAIL; why[$1,$b,$p]="$2"; done; done
}
nfail=0
echo "BSPonMPI: $src"
echo "bspcc: $bspcc (BSPCC_CC=${BSPCC_CC:-default})   bsprun: $bsprun   timeout: ${timeout_s}s"
echo "building ${#tests[@]} tests in $work ..."
for t in "${tests[@]}"; do
    # BSPonMPI's test.h is found next to the test; dllexport.h comes from the shim. Its own
    # include/ (its bsp.h) is deliberately not on the path: bsp.h must be bspkit's.
    if ! "$bspcc" -O2 -g -I"$work/shim" "$src/test/$t.c" "$work/shim/harness.o" \
            -o "$work/bin/$t" > "$work/log/$t.build" 2>&1; then
        fail_all "$t" "does not compile: $(grep -m1 'error' "$work/log/$t.build" | cut -c1-160)"
        continue
    fi
    expect="$(BSPONMPI_TESTS_QUERY=1 "$work/bin/$t" 2>/dev/null | head -n1)"
    expected[$t]="$expect"
    case "$expect" in
        success|"abort "*) ;;
        *) fail_all "$t" "cannot read its expectation (the query run printed '$expect')"; continue ;;
    esac
    for b in $backends; do
        for p in $procs; do
            if [ "$p" -lt 2 ] && [ -n "${needs_p2[$t]:-}" ]; then
                cell[$t,$b,$p]=skip; why[$t,$b,$p]="needs p >= 2: ${needs_p2[$t]}"; continue
            fi
            if [ "$b" = threads ] && [ "$p" -ge 2 ] && [ -n "${needs_processes[$t]:-}" ]; then
                cell[$t,$b,$p]=skip; why[$t,$b,$p]="needs separate processes: ${needs_processes[$t]}"; continue
            fi
            base="$work/log/$t.$b.$p"
            # The outer 2>/dev/null only silences bash's "Aborted" notice for a failed EXPECT.
            { ( cd "$work/bin" && exec timeout -k 5 "$timeout_s" "$bsprun" -b "$b" -n "$p" "./$t" ) \
                > "$base.out" 2> "$base.err" < /dev/null; } 2> /dev/null
            rc=$?
            verdict="$(judge "$expect" "$rc" "$base")"
            cell[$t,$b,$p]="${verdict%% *}"
            [ "$verdict" = pass ] || why[$t,$b,$p]="${verdict#FAIL }"
            if [ "$verdict" != pass ] && [ -n "${open_behaviour[$t]:-}" ]; then
                cell[$t,$b,$p]=open; why[$t,$b,$p]="${open_behaviour[$t]} (saw: ${verdict#FAIL })"
            fi
        done
    done
    printf '.'
done
echo

# ---- Report -----------------------------------------------------------------------------
printf '\n%-36s %3s %-5s' "" "" ""
for b in $backends; do printf " | %-*s" $((5 * $(wc -w <<< "$procs") - 1)) "$b"; done
printf '\n%-36s %3s %-5s' "test" "P" "want"
for b in $backends; do printf " |"; for p in $procs; do printf " p=%-2s" "$p"; done; done
echo
for t in "${tests[@]}"; do
    case "${expected[$t]:-}" in success*) want=ok ;; abort*) want=error ;; *) want=? ;; esac
    printf '%-36s %3s %-5s' "$t" "${cmake_p[$t]}" "$want"
    for b in $backends; do
        printf " |"
        for p in $procs; do printf " %-4s" "${cell[$t,$b,$p]}"; [ "${cell[$t,$b,$p]}" = FAIL ] && nfail=$((nfail + 1)); done
    done
    echo
done
echo "(P: the number of processes BSPonMPI's own harness runs the test on;"
echo " want: ok = must succeed, error = must end with a detected error)"

# Reasons, one line per test and reason, with the cells it applies to.
report() {
    local kind="$1" title="$2" t b p key r
    declare -A cells=()
    local -a order=()
    for t in "${tests[@]}"; do for b in $backends; do for p in $procs; do
        [ "${cell[$t,$b,$p]}" = "$kind" ] || continue
        r="${why[$t,$b,$p]}"
        # Addresses, process numbers and Open MPI's [host:pid] differ between runs of one failure.
        [ "$kind" = FAIL ] && r="$(sed -E 's/0x[0-9a-f]+/0x.../g; s/on process [0-9]+/on process N/g;
                                          s/\[[^]:]+:[0-9]+\] //g' <<< "$r")"
        key="$t: $r"
        [ -n "${cells[$key]:-}" ] || order+=("$key")
        cells[$key]="${cells[$key]:-}${cells[$key]:+, }$b p=$p"
    done; done; done
    [ ${#order[@]} -gt 0 ] || return 0
    echo; echo "$title"
    for key in "${order[@]}"; do echo "  ${key%%: *} [${cells[$key]}]: ${key#*: }"; done
}
report skip "Skipped cells:"
report open "Open (the standard leaves this open; bspkit's choice is documented):"
report FAIL "FAILs:"
if [ ${#notrun[@]} -gt 0 ]; then
    echo; echo "Not run:"
    printf '  %s\n' "${notrun[@]}"
fi
[ "$keep" = 1 ] && echo && echo "outputs: $work/log/<test>.<backend>.<p>.{out,err}"
echo
echo "$nfail FAIL(s) in ${#tests[@]} tests x {$backends} x p={$procs}"
[ "$nfail" -eq 0 ]
