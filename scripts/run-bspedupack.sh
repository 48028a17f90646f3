#!/usr/bin/env bash
# run-bspedupack.sh - builds BSPedupack 2.0 (R. H. Bisseling, Parallel Scientific
# Computation, 2nd ed.) with its own Makefile and bspkit's bspcc, runs its programs on
# bspkit's back ends and checks each program's own output. Run with --help for details.
#
# BSPedupack is GPL-3 and is never copied into this repository: the given directory is
# copied to a temporary directory (mktemp -d), built and run there, and removed at exit.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
bspcc=$root/build/bin/bspcc
bsprun=$root/build/bin/bsprun
backends="threads mpi mpi-rma"
procs="1 2 3 4 8"
programs="inprod bench sort lu fft matvec match"
timeout_s=120
keep=0
full_bench=0
build_only=

# Problem sizes: small, so that all runs together take a few minutes on 2 cores.
inprod_n=10007     # prime: no p > 1 divides it, so the cyclic parts differ in length
sort_n=20000       # the program itself lowers p while p*p > N; we skip those p instead
lu_n=12            # every entry is printed: keep the output small (and unlikely to be
                   # split mid-line when mpirun merges the processes' output)
fft_n=32           # n/p < p at p = 8, so that the FFT needs more than one communication step
matvec_n=60        # size of the generated sparse matrix
match_n=48         # vertices of the generated chain graph (even)
match_maxops=3     # small, so that the matching takes many supersteps
bench_niters=10    # bspbench's NITERS and MAXH are fixed in its source (1000 and 2048:
bench_maxh=256     # minutes per run); see --full-bench

usage() {
  cat <<EOF
Usage: scripts/run-bspedupack.sh [options] BSPEDUPACK_DIR

Builds BSPedupack 2.0 (the directory that holds its Makefile, bspinprod.c, ...) with
  make CC=<bspcc>
in a temporary copy of BSPEDUPACK_DIR (the directory itself is not modified), then runs
each program on each back end and each number of processes P as
  timeout S <bsprun> -b BACKEND -n P ./PROGRAM < answers
and checks what the program prints. At the end it prints a table (program x back end x
P) of OK / wrong (ran, but the output fails a check) / failed (non-zero exit status or
timeout) / skip (the program does not allow this P), with the reasons below the table.

Options:
  --bspcc PATH        bspcc to build with (default: $root/build/bin/bspcc)
  --bsprun PATH       bsprun to run with (default: $root/build/bin/bsprun)
  --backends "LIST"   back ends, from threads procs mpi mpi-rma mpi-naive (default: "$backends")
  --procs "LIST"      numbers of processes (default: "$procs")
  --programs "LIST"   programs, from $programs
                      (default: all; these are the Makefile's targets, and only
                      these are built)
  --timeout S         time limit of one run in seconds (default: $timeout_s)
  --full-bench        run bench as BSPedupack ships it (NITERS=1000, MAXH=2048: several
                      minutes per run). By default bench is built from a copy of
                      bspbench.c with NITERS=$bench_niters and MAXH=$bench_maxh (made in the temporary
                      directory, passed to make as OBJBEN=...).
  --keep              keep the temporary directory (the build, and each run's answers,
                      stdout and stderr under runs/) and print its path
  --build-only DIR    build the programs of --programs as BSPedupack ships them (bench
                      too: as with --full-bench) in DIR (a new directory, kept) and exit
                      without running anything; --bsprun is not needed. For benchmarks
                      of BSPedupack on other BSPlibs (bench/bspedupack_peers.py).
  -h, --help          print this help and exit

What is run and checked (P = the number of processes of the run):
  inprod  answers P, n=$inprod_n; every process prints the sum n(n+1)(2n+1)/6.
  bench   answers P; prints the n= r lines, the h-relation times for h = 0..MAXH, both
          "Range" g/l lines and the bottom line with p= P (g and l are only checked to
          be numbers: they are measurements and may be negative).
  sort    answers P, N=$sort_n; "Using P processors", the part sizes add up to N and
          the parts are in increasing order (skip when P*P > N).
  lu      answers M, N (an M x N grid with M*N = P, as square as P allows), n=$lu_n;
          each of the n*n output entries and n pivots is the expected one, and all P
          "Maximum error" lines are 0.
  fft     answers P, n=$fft_n (or 2P if larger); absolute and relative error below
          1e-9 and every printed value is j + 1i (skip unless P is a power of 2).
  matvec  answers P and three files that this script generates for P (BSPedupack's
          own test files are for P=2 only): a sparse n x n matrix, n = max($matvec_n, 8P), 3
          nonzeros a row, nonzeros and both vectors spread over all P processes; every
          printed u[i] is the row sum of A (v = 1) and Sum(u) = sum(A).
  match   answers P, a generated file for P (a chain of n = max($match_n, 6P) vertices,
          edge (i,i+1) of weight i, rows dealt in blocks of 2 or 3 to the processes) and
          maxops=$match_maxops; the matching must be the optimal one: n/2 matches (i,i+1),
          i odd, of total weight n^2/4, and no "Error" lines.

Exit status: 0 if every run that was not skipped is OK, 1 if any is wrong or failed,
2 on a usage error or when nothing could be built (with --build-only: 0 when every
program was built, 2 otherwise).
EOF
}

die() { printf 'run-bspedupack.sh: %s\n' "$*" >&2; exit 2; }

# ---- options ----------------------------------------------------------------
need_arg() { [ $# -ge 2 ] || die "option $1 needs a value (try --help)"; }
src=
while [ $# -gt 0 ]; do
  case $1 in
    --bspcc) need_arg "$@"; bspcc=$2; shift ;;
    --bsprun) need_arg "$@"; bsprun=$2; shift ;;
    --backends) need_arg "$@"; backends=$2; shift ;;
    --procs) need_arg "$@"; procs=$2; shift ;;
    --programs) need_arg "$@"; programs=$2; shift ;;
    --timeout) need_arg "$@"; timeout_s=$2; shift ;;
    --bspcc=*) bspcc=${1#*=} ;;
    --bsprun=*) bsprun=${1#*=} ;;
    --backends=*) backends=${1#*=} ;;
    --procs=*) procs=${1#*=} ;;
    --programs=*) programs=${1#*=} ;;
    --timeout=*) timeout_s=${1#*=} ;;
    --full-bench) full_bench=1 ;;
    --build-only) need_arg "$@"; build_only=$2; shift ;;
    --build-only=*) build_only=${1#*=} ;;
    --keep) keep=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) die "unknown option '$1' (try --help)" ;;
    *) [ -z "$src" ] || die "only one BSPEDUPACK_DIR may be given (try --help)"; src=$1 ;;
  esac
  shift
done
[ -n "$src" ] || die "no BSPEDUPACK_DIR given (try --help)"
[ -n "${backends// /}" ] && [ -n "${procs// /}" ] && [ -n "${programs// /}" ] ||
  die "--backends, --procs and --programs need at least one word each"
[ -f "$src/Makefile" ] && [ -f "$src/bspedupack.h" ] ||
  die "$src does not look like BSPedupack 2.0 (no Makefile or bspedupack.h)"
for b in $backends; do
  case $b in threads | procs | mpi | mpi-rma | mpi-naive) ;; *) die "unknown back end '$b'" ;; esac
done
for p in $procs; do
  case $p in '' | *[!0-9]* | 0*) die "--procs: '$p' is not a positive integer" ;; esac
done
for prog in $programs; do
  case " inprod bench sort lu fft matvec match " in
    *" $prog "*) ;; *) die "unknown program '$prog'" ;;
  esac
done
case $timeout_s in '' | *[!0-9]* | 0) die "--timeout: '$timeout_s' is not a positive integer" ;; esac
[ -x "$bspcc" ] || die "no bspcc at $bspcc (build bspkit: cmake --build build)"
[ -n "$build_only" ] || [ -x "$bsprun" ] || die "no bsprun at $bsprun (build bspkit: cmake --build build)"
command -v timeout >/dev/null 2>&1 || die "needs timeout (coreutils)"
command -v make >/dev/null 2>&1 || die "needs make"
bspcc=$(cd "$(dirname "$bspcc")" && pwd)/$(basename "$bspcc")     # we build elsewhere
[ -n "$build_only" ] || bsprun=$(cd "$(dirname "$bsprun")" && pwd)/$(basename "$bsprun")
if [ -n "$build_only" ]; then
  [ ! -e "$build_only" ] || die "--build-only: $build_only exists already (give a new directory)"
  full_bench=1     # the programs as BSPedupack ships them
fi

# ---- build in a temporary copy ----------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/bspedupack.XXXXXX") || die "mktemp -d failed"
if [ "$keep" = 1 ]; then
  trap 'printf "kept %s\n" "$work"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi
trap 'exit 130' INT TERM     # runs the EXIT trap
bdir=$work/bspedupack
[ -z "$build_only" ] || bdir=$build_only
mkdir -p "$work/runs" "$bdir" && cp -R "$src/." "$bdir" || die "cannot copy $src to $bdir"
chmod -R u+w "$bdir"     # the given copy may be read-only

printf 'BSPedupack: %s (built in %s)\nbspcc:      %s\nbsprun:     %s\n' \
  "$src" "$bdir" "$bspcc" "$bsprun"

make_vars=("CC=$bspcc")
bench_src=bspbench.c
if [ "$full_bench" = 0 ]; then
  # Lower bspbench's compile-time constants in a copy (bspbench.c itself stays as it is).
  if grep -q '^#define NITERS ' "$bdir/bspbench.c" && grep -q '^#define MAXH ' "$bdir/bspbench.c"; then
    sed -e "s/^#define NITERS .*/#define NITERS $bench_niters/" \
        -e "s/^#define MAXH .*/#define MAXH $bench_maxh/" \
        "$bdir/bspbench.c" >"$bdir/bspbench_small.c"
    make_vars+=("OBJBEN=bspbench_small.o bspedupack.o")
    bench_src=bspbench_small.c
    printf 'bench:      NITERS=%s MAXH=%s (--full-bench for the original 1000 and 2048)\n' \
      "$bench_niters" "$bench_maxh"
  else
    printf 'bench:      no NITERS/MAXH defines found in bspbench.c; running it as it is\n'
  fi
fi
bench_maxh_used=$(sed -n 's/^#define MAXH  *\([0-9][0-9]*\).*/\1/p' "$bdir/$bench_src")
: "${bench_maxh_used:=2048}"   # bench checks the times of the h-relations h = 0..MAXH

# make clean first: the given directory may hold objects built with another BSPlib.
# -k: one program that does not build must not keep the others from being run.
make -C "$bdir" clean >/dev/null 2>&1
# shellcheck disable=SC2086  # $programs: the make targets, one word each
if make -C "$bdir" -k -j"$(nproc 2>/dev/null || echo 2)" "${make_vars[@]}" $programs \
     >"$work/build.log" 2>&1; then
  printf 'build:      make %s %s: OK\n' "${make_vars[*]}" "$programs"
else
  printf 'build:      make %s %s: FAILED (the log ends with)\n' "${make_vars[*]}" "$programs"
  tail -n 15 "$work/build.log" | sed 's/^/    /'
fi
built=0
for prog in $programs; do [ -x "$bdir/$prog" ] && built=1; done
[ "$built" = 1 ] || die "none of the programs was built"
if [ -n "$build_only" ]; then
  for prog in $programs; do [ -x "$bdir/$prog" ] || die "$prog was not built (see the make output above)"; done
  exit 0
fi
echo

# ---- helpers ------------------------------------------------------------------
is_pow2() { [ "$1" -gt 0 ] && [ $(($1 & ($1 - 1))) -eq 0 ]; }

# lu_grid P: prints "M N" with M*N = P, N the largest divisor of P with N*N <= P.
lu_grid() {
  local d nn=1
  for ((d = 1; d * d <= $1; d++)); do (($1 % d == 0)) && nn=$d; done
  echo "$(($1 / nn)) $nn"
}

# Sizes of the generated sparse inputs: a fixed size, larger for many processes so that
# every process gets a share.
matvec_size() { echo $((matvec_n > 8 * $1 ? matvec_n : 8 * $1)); }
match_size() { echo $((match_n > 6 * $1 ? match_n : 6 * $1)); }

# gen_matvec P DIR: an n x n matrix (n = matvec_size P) with 3 nonzeros per row,
# a(i,j) = (i*j mod 10) + 1 for j = i, i+1, i+7 (cyclically, 1-based), in BSPedupack's
# distributed Matrix Market format. Nonzero number k (0-based, row by row) is on process
# k mod P, so each row and each column is spread over up to 3 processes; v[j] is on
# process floor((j-1)/2) mod P and u[i] on (i + floor(i/3)) mod P. DIR/matvec.expect
# gets "i rowsum" for each 0-based row i (v = 1 gives u[i] = rowsum) and "total sum(A)".
# awk: writes the distributed matrix file BSPedupack reads (sizes, each process' start,
# then the nonzeros process by process) from nzq[q] (count) and nzline[q, k] ("i j a").
awk_write_distributed='function write_distributed(f, n, nz, p,   q, k, start) {
    print "% generated by run-bspedupack.sh" > f
    print n, n, nz, p > f
    start = 0; print start > f
    for (q = 0; q < p; q++) { start += nzq[q]; print start > f }
    for (q = 0; q < p; q++) for (k = 1; k <= nzq[q]; k++) print nzline[q, k] > f
  }'

gen_matvec() {
  awk -v n="$(matvec_size "$1")" -v p="$1" -v dir="$2" "$awk_write_distributed"'
  BEGIN {
    split("0 1 7", off)
    for (i = 1; i <= n; i++)
      for (k = 1; k <= 3; k++) {
        j = (i - 1 + off[k]) % n + 1; a = (i * j) % 10 + 1; q = nz % p; nz++
        nzq[q]++; nzline[q, nzq[q]] = i " " j " " a; rowsum[i] += a; total += a
      }
    write_distributed(dir "/matvec.mtx", n, nz, p)
    f = dir "/matvec.v"; print n, p > f
    for (j = 1; j <= n; j++) print j, int((j - 1) / 2) % p + 1 > f
    f = dir "/matvec.u"; print n, p > f
    for (i = 1; i <= n; i++) print i, (i + int(i / 3)) % p + 1 > f
    f = dir "/matvec.expect"
    for (i = 1; i <= n; i++) print i - 1, rowsum[i] > f
    print "total", total > f
  }'
}

# gen_match P DIR: the chain 1-2-...-n (n = match_size P, even), edge (i,i+1) of weight
# i, as a symmetric adjacency matrix distributed by rows (as bspmatch requires). Vertex
# i is on process floor(i/3) mod P: blocks {1,2} {3,4,5} {6,7,8} ..., so that some
# edges of the optimal matching (1,2) (3,4) ... (n-1,n) join two processes and some
# do not. The weights are distinct, so that matching is the only locally dominant one.
gen_match() {
  awk -v n="$(match_size "$1")" -v p="$1" -v dir="$2" "$awk_write_distributed"'
  BEGIN {
    for (i = 1; i <= n; i++) {
      q = int(i / 3) % p
      if (i > 1) { nzq[q]++; nzline[q, nzq[q]] = i " " i - 1 " " i - 1; nz++ }
      if (i < n) { nzq[q]++; nzline[q, nzq[q]] = i " " i + 1 " " i; nz++ }
    }
    write_distributed(dir "/match.mtx", n, nz, p)
  }'
}

# skip_reason PROG P: prints why PROG cannot run on P processes, if it cannot.
skip_reason() {
  case $1 in
    sort) (($2 * $2 <= sort_n)) || echo "needs P*P <= N=$sort_n" ;;
    fft) is_pow2 "$2" || echo "P must be a power of 2" ;;
  esac
}

fft_size() { echo $((fft_n > 2 * $1 ? fft_n : 2 * $1)); }   # n >= 2P

# answers PROG P DIR: writes the program's stdin to DIR/in, and the input files that it
# names to DIR.
answers() {
  local prog=$1 p=$2 dir=$3
  case $prog in
    inprod) printf '%s\n%s\n' "$p" "$inprod_n" ;;
    bench) printf '%s\n' "$p" ;;
    sort) printf '%s\n%s\n' "$p" "$sort_n" ;;
    lu) printf '%s\n%s\n%s\n' $(lu_grid "$p") "$lu_n" ;;
    fft) printf '%s\n%s\n' "$p" "$(fft_size "$p")" ;;
    matvec)
      gen_matvec "$p" "$dir"
      printf '%s\n%s\n%s\n%s\n' "$p" "$dir/matvec.mtx" "$dir/matvec.v" "$dir/matvec.u" ;;
    match)
      gen_match "$p" "$dir"
      printf '%s\n%s\n%s\n' "$p" "$dir/match.mtx" "$match_maxops" ;;
  esac >"$dir/in"
}

# check PROG P OUT: checks the program's stdout; prints what is wrong (one line) and
# returns 1, or prints nothing and returns 0.
check() {
  local prog=$1 p=$2 out=$3 why
  case $prog in
    inprod)
      why=$(awk -v p="$p" -v n="$inprod_n" -v want=$((inprod_n * (inprod_n + 1) * (2 * inprod_n + 1) / 6)) '
        /^Proc [0-9]+: sum of squares up to / {
          s = $2 + 0; if (!(s in seen)) nseen++; seen[s] = 1; k++
          if ($NF != want) { print "process " s " says " $NF ", want " want; bad = 1; exit }
        }
        /^n\(n\+1\)\(2n\+1\)\/6 = / && $NF == want { formula = 1 }
        END {
          if (bad) exit
          if (k != p || nseen != p) print k " sum lines from " nseen " processes, want " p
          else if (!formula) print "no line n(n+1)(2n+1)/6 = " want
        }' "$out") ;;
    bench)
      why=$(awk -v p="$p" -v maxh="$bench_maxh_used" '
        function num(x) { return x ~ /^-?[0-9]+(\.[0-9]+)?,?$/ }
        /^n= *[0-9]+ min=/ { nr++ }
        /^Time of +[0-9]+-relation = / { h = $3; sub("-relation", "", h); th[h + 0] = 1 }
        /^Range h=0 to p +: g= / { r0 = num($7) && num($9) }
        /^Range h=p to [0-9]+: g= / { r1 = num($6) && num($8) }
        /^p= [0-9]+, r= .* Mflop\/s, g= .*, l= / { last = ($2 == p "," && num($4) && num($7) && num($9)) }
        END {
          for (h = 0; h <= maxh; h++) if (!(h in th)) { print "no time for the " h "-relation"; exit }
          if (nr != 11) print nr " computing-rate lines (n=1..1024), want 11"
          else if (!r0 || !r1) print "no numeric g and l in a Range line"
          else if (!last) print "no bottom line \"p= " p ", r= ..., g= ..., l= ...\""
        }' "$out") ;;
    sort)
      why=$(awk -v p="$p" -v n="$sort_n" '
        /^Using [0-9]+ processors/ { using = $2 }
        /^Proc [0-9]+: number of elements = / { s = $2 + 0; cnt[s] = $NF; total += $NF; k++ }
        /^Proc [0-9]+: first element = / { s = $2 + 0; first[s] = $6; lst[s] = $10 }
        END {
          if (using != p) { print "Using " using " processors, want " p; exit }
          if (k != p) { print k " element counts, want " p; exit }
          if (total != n) { print "the parts hold " total " elements, want " n; exit }
          prev = -1
          for (s = 0; s < p; s++) {
            if (cnt[s] == 0) continue
            if (!(s in first)) { print "process " s " prints no first/last element"; exit }
            if (first[s] + 0 > lst[s] + 0) { print "process " s ": first > last"; exit }
            if (first[s] + 0 < prev) { print "process " s " starts below the end of the previous part"; exit }
            prev = lst[s] + 0
          }
        }' "$out") ;;
    lu)
      why=$(awk -v p="$p" -v n="$lu_n" '
        /^i=[0-9]+, pi=[0-9]+, proc=/ {
          split($0, f, /[=,]/); i = f[2] + 0; pi = f[4] + 0; npi++; if (!(i in seenpi)) dpi++; seenpi[i] = 1
          if (pi != (i + 1) % n) { print "pi(" i ") = " pi ", want " (i + 1) % n; bad = 1; exit }
        }
        /^i=[0-9]+, j=[0-9]+, a=/ {
          split($0, f, /[=,]/); i = f[2] + 0; j = f[4] + 0; a = f[6] + 0; na++; if (!((i, j) in seena)) da++; seena[i, j] = 1
          want = (i <= j ? 1 : 0.5)
          if (a != want) { print "LU(" i "," j ") = " f[6] ", want " want; bad = 1; exit }
        }
        /^Maximum error of proc=/ { nerr++; if ($NF + 0 > 1e-9) { print $0; bad = 1; exit } }
        /^Error in pi/ { print $0; bad = 1; exit }
        END {
          if (bad) exit
          if (npi != n || dpi != n) print npi " pivots printed, want each of " n " once"
          else if (na != n * n || da != n * n) print na " matrix entries printed, want each of " n * n " once"
          else if (nerr != p) print nerr " Maximum error lines, want " p
        }' "$out") ;;
    fft)
      why=$(awk -v p="$p" -v n="$(fft_size "$p")" '
        /^FFT of vector of length/ { head = ($6 == n && $8 == p) }
        /^Proc [0-9]+: j=[0-9]+ Re= / {
          j = $3; sub("j=", "", j); k++
          if ((($5 - j) ^ 2 + ($7 - 1) ^ 2) > 1e-10) { print "x[" j "] = " $5 " + " $7 "i, want " j " + 1i"; bad = 1; exit }
        }
        /^Absolute error= / { abs = $NF; nabs++ }
        /^Relative error= / { rel = $NF; nrel++ }
        END {
          if (bad) exit
          want = p * (n / p < 10 ? n / p : 10)
          if (!head) print "no line \"FFT of vector of length " n " using " p " processors\""
          else if (k != want) print k " values printed, want " want
          else if (nabs != 1 || nrel != 1) print "no Absolute/Relative error lines"
          else if (!(abs + 0 < 1e-9 && rel + 0 < 1e-9)) print "absolute error " abs ", relative error " rel
        }' "$out") ;;
    matvec)
      why=$(awk -v p="$p" '
        FNR == NR { if ($1 == "total") total = $2; else rowsum[$1] = $2; next }
        /^Sparse matrix-vector multiplication using/ { head = ($5 == p) }
        /^Proc [0-9]+: i=[0-9]+, u=/ {
          split($0, f, /[=,]/); i = f[2] + 0; u = f[4] + 0; k++
          if ((u - rowsum[i]) ^ 2 > 1e-10) { print "u[" i "] = " u ", want " rowsum[i]; bad = 1; exit }
        }
        /^Sum\(u\)=/ {
          nf = split($0, f, /[= ]+/); sumu = f[2] + 0; suma = f[4] + 0; err = f[nf] + 0; sums = 1
        }
        END {
          if (bad) exit
          if (!head) print "no line \"... using " p " processors\""
          else if (k == 0) print "no u values printed"
          else if (!sums) print "no Sum(u) line"
          else if ((sumu - total) ^ 2 > 1e-10 || (suma - total) ^ 2 > 1e-10 || err > 1e-9)
            print "Sum(u)=" sumu " sum(A)=" suma " error " err ", want both " total
        }' "${out%/*}/matvec.expect" "$out") ;;
    match)
      why=$(awk -v p="$p" -v n="$(match_size "$p")" '
        /^Start of graph matching using/ { head = ($6 == p) }
        /found match \(i,j\)=/ {
          nf = split($0, f, /[(), =]+/)   # ... match i j I J with weight W
          for (x = 1; x < nf; x++) if (f[x] == "i" && f[x + 1] == "j") break
          i = f[x + 2] + 0; j = f[x + 3] + 0; w = f[x + 6] + 0; lo = (i < j ? i : j); k++
          if ((i - j) ^ 2 != 1 || lo % 2 != 1 || w != lo) { print "not optimal: match (" i "," j ") weight " w; bad = 1; exit }
        }
        /^Error/ { print $0; bad = 1; exit }
        /^Total number of matches = / { m = $NF }
        /^Total matching weight= / { total = $NF }
        END {
          if (bad) exit
          if (!head) print "no line \"Start of graph matching using " p " processors\""
          else if (k == 0) print "no matches printed"
          else if (m != n / 2) print m " matches, want " n / 2
          else if (total + 0 != n * n / 4) print "matching weight " total ", want " n * n / 4
        }' "$out") ;;
  esac
  [ -z "$why" ] || { printf '%s\n' "$why"; return 1; }
}

# ---- run ----------------------------------------------------------------------
results=$work/results     # lines: program<TAB>backend<TAB>P<TAB>status<TAB>reason
: >"$results"
for prog in $programs; do
  for b in $backends; do
    for p in $procs; do
      dir=$work/runs/$prog-$b-$p
      mkdir -p "$dir"
      reason=
      if [ ! -x "$bdir/$prog" ]; then
        status=failed reason="not built (see the make output above)"
      elif reason=$(skip_reason "$prog" "$p"); [ -n "$reason" ]; then
        status=skip
      else
        answers "$prog" "$p" "$dir"
        t0=$(date +%s.%N)
        (cd "$bdir" && exec timeout -k 10 "$timeout_s" "$bsprun" -b "$b" -n "$p" "./$prog") \
          <"$dir/in" >"$dir/out" 2>"$dir/err"
        rc=$?
        secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
          status=failed reason="timeout after $timeout_s s"
        elif [ "$rc" != 0 ]; then
          # The first bspkit/MPI error line says most about why.
          msg=$(grep -m1 -i -e 'error' -e 'abort' "$dir/err" "$dir/out" | cut -d: -f2- | cut -c1-160)
          status=failed reason="exit status $rc${msg:+: $msg}"
        elif reason=$(check "$prog" "$p" "$dir/out"); then
          status=OK
        else
          status=wrong
        fi
        reason="$reason${reason:+ }(${secs} s)"
      fi
      printf '%-7s %-8s p=%-3s %-6s %s\n' "$prog" "$b" "$p" "$status" "$reason"
      printf '%s\t%s\t%s\t%s\t%s\n' "$prog" "$b" "$p" "$status" "$reason" >>"$results"
    done
  done
done

# ---- table ----------------------------------------------------------------------
echo
awk -F '\t' -v procs="$procs" '
  { key = $1 SUBSEP $2; if (!(key in row)) { row[key] = 1; order[++nrows] = key }
    cell[$1, $2, $3] = $4
    if ($4 != "OK") note[++nnotes] = sprintf("  %-7s %-8s p=%-3s %-6s %s", $1, $2, $3, $4, $5)
    count[$4]++ }
  END {
    np = split(procs, P, " ")
    printf "%-8s %-8s", "program", "backend"; for (k = 1; k <= np; k++) printf " %-7s", "p=" P[k]; printf "\n"
    for (r = 1; r <= nrows; r++) {
      split(order[r], f, SUBSEP)
      printf "%-8s %-8s", f[1], f[2]
      for (k = 1; k <= np; k++) printf " %-7s", cell[f[1], f[2], P[k]]
      printf "\n"
    }
    printf "\nOK %d, wrong %d, failed %d, skip %d\n", count["OK"], count["wrong"], count["failed"], count["skip"]
    if (nnotes) { print "Not OK:"; for (k = 1; k <= nnotes; k++) print note[k] }
  }' "$results"

awk -F '\t' '$4 == "wrong" || $4 == "failed" { bad = 1 } END { exit bad }' "$results"
