#!/bin/sh
# tools_test.sh BSPRUN BSPCC HELLO_C WORKDIR [extra compiler flags...]
#
# Tests the build tree's bsprun and bspcc:
#  - --help of both exits 0 and describes the usage;
#  - bsprun rejects bad usage (unknown option, bad -n, unknown back end, missing or
#    unrunnable program, bad BSPKIT_NPROCS/BSPKIT_BACKEND) with status 2 and a clear message;
#  - bsprun -b threads exports BSPKIT_BACKEND/BSPKIT_NPROCS and passes the arguments and
#    the exit status through; bsprun -b mpi builds the right mpirun command (checked with a
#    fake mpirun, Open MPI and MPICH flavours) and reports a missing mpirun with status 127;
#  - --profile FILE: BSPKIT_PROFILE, made absolute, for the program (threads) and passed by
#    mpirun (-x, -genv); a BSPKIT_PROFILE already set the same way; a missing directory is a
#    usage error; an emulated cluster's hostfile that cannot be used (half a header, no
#    namespace, not root) is a usage error (the cluster itself: tests/cluster);
#  - bspcc --showme adds -std=c11, -I, -pthread and libbsp, not the link flags with -c,
#    not -std=c11 when the user gives -std; bspcc compiles HELLO_C (in one step, and with
#    -c then a link) and the program runs correctly under bsprun -n 2 and -n 3.
# Prints one line per check; exits 1 if any failed.
set -u
if [ $# -lt 4 ]; then
  echo "usage: $0 BSPRUN BSPCC HELLO_C WORKDIR [extra compiler flags...]" >&2
  exit 2
fi
bsprun=$1 bspcc=$2 hello=$3 work=$4
shift 4
# The remaining arguments are extra compiler flags (sanitizer builds).

failures=0
pass() { echo "ok:   $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

rm -rf "$work"
mkdir -p "$work/bin" || exit 1
out=$work/out
err=$work/err

# run CMD...: runs it, leaves stdout in $out, stderr in $err and the status in $st.
run() {
  "$@" >"$out" 2>"$err" </dev/null
  st=$?
}

# expect_usage_error DESCRIPTION REGEX CMD...: status 2 and REGEX (grep -E) on stderr.
expect_usage_error() {
  what=$1 regex=$2
  shift 2
  run "$@"
  if [ $st = 2 ] && grep -E -q -e "$regex" "$err"; then
    pass "$what: status 2, \"$(head -n 1 "$err")\""
  else
    fail "$what: expected status 2 and /$regex/ on stderr; got status $st, stderr: $(cat "$err")"
  fi
}

# expect_output DESCRIPTION STATUS REGEX CMD...: STATUS and REGEX (grep -E) on stdout.
expect_output() {
  what=$1 status=$2 regex=$3
  shift 3
  run "$@"
  if [ $st = "$status" ] && grep -E -q -e "$regex" "$out"; then
    pass "$what"
  else
    fail "$what: expected status $status and /$regex/ on stdout; got status $st, stdout: $(cat "$out") stderr: $(cat "$err")"
  fi
}

# expect_no_output DESCRIPTION REGEX CMD...: status 0, REGEX (grep -E) not on stdout.
expect_no_output() {
  what=$1 regex=$2
  shift 2
  run "$@"
  if [ $st = 0 ] && ! grep -E -q -e "$regex" "$out"; then
    pass "$what"
  else
    fail "$what: expected status 0 and no /$regex/ on stdout; got status $st, stdout: $(cat "$out") stderr: $(cat "$err")"
  fi
}

# ---- --help ---------------------------------------------------------------------------------
expect_output "bsprun --help" 0 '^Usage: bsprun .*program' "$bsprun" --help
expect_output "bsprun -h mentions every option" 0 '--hostfile' "$bsprun" -h
for word in -- --nprocs --backend --dry-run --profile BSPKIT_PROFILE bspkit-cluster-netns --version threads mpi-rma \
  BSPKIT_NPROCS MPIRUN 'Exit status'; do
  grep -q -e "$word" "$out" || fail "bsprun --help does not mention $word"
done
[ ! -s "$err" ] || fail "bsprun --help writes to stderr: $(cat "$err")"
expect_output "bsprun --version" 0 '^bsprun \(bspkit\) [0-9]' "$bsprun" --version
expect_output "bspcc --help" 0 '^Usage: bspcc ' "$bspcc" --help
for word in --showme --showme:compile --showme:link --bsp-static --bsp-shared -std=c11 '\$BSPCC_CC' 'make CC=bspcc'; do
  grep -q -e "$word" "$out" || fail "bspcc --help does not mention $word"
done

# ---- bsprun: bad usage ------------------------------------------------------------------------
printf '#!/bin/sh\nprintf "%%s|" "$BSPKIT_BACKEND" "$BSPKIT_NPROCS" "$@"; echo\n' >"$work/bin/show"
chmod +x "$work/bin/show"
: >"$work/notexec"
show=$work/bin/show
expect_usage_error "no program" 'no program given' "$bsprun"
expect_usage_error "no program after options" 'no program given' "$bsprun" -n 2 --
expect_usage_error "unknown option" "unknown option '--frobnicate'" "$bsprun" --frobnicate "$show"
expect_usage_error "unknown short option" "unknown option '-q'" "$bsprun" -q "$show"
expect_usage_error "-n without a value" '-n needs a value' "$bsprun" -n
expect_usage_error "-n 0" '-n 0 is not a positive integer' "$bsprun" -n 0 "$show"
expect_usage_error "-n -2" '-n -2 is not a positive integer' "$bsprun" -n -2 "$show"
expect_usage_error "-n abc" '-n abc is not a positive integer' "$bsprun" -n abc "$show"
expect_usage_error "--nprocs=1.5" 'is not a positive integer' "$bsprun" --nprocs=1.5 "$show"
expect_usage_error "-n huge" 'too large' "$bsprun" -n 99999999999999999999 "$show"
expect_usage_error "bad BSPKIT_NPROCS" 'BSPKIT_NPROCS=four is not a positive integer' \
  env BSPKIT_NPROCS=four "$bsprun" "$show"
expect_usage_error "unknown back end" 'unknown back end in -b cuda: use threads, procs, mpi, mpi-rma or mpi-naive' \
  "$bsprun" -b cuda "$show"
expect_usage_error "unknown back end (--backend=)" 'unknown back end' "$bsprun" --backend=MPI "$show"
expect_usage_error "bad BSPKIT_BACKEND" 'unknown back end in BSPKIT_BACKEND=pvm' \
  env BSPKIT_BACKEND=pvm "$bsprun" "$show"
expect_usage_error "program not found (path)" "program '$work/nope' not found" "$bsprun" "$work/nope"
expect_usage_error "program not found (PATH)" "program 'bspkit-no-such-program' not found in PATH" \
  "$bsprun" -n 2 bspkit-no-such-program
expect_usage_error "program not executable" "is not executable" "$bsprun" "$work/notexec"
expect_usage_error "program is a directory" "is a directory" "$bsprun" "$work"
expect_usage_error "hostfile missing" "hostfile '$work/nohosts' not found" \
  "$bsprun" -b mpi --hostfile "$work/nohosts" "$show"
grep -q "bsprun --help" "$err" || fail "usage errors do not point to bsprun --help"

# ---- bsprun: threads ------------------------------------------------------------------------
cores=$(nproc 2>/dev/null || echo 1)
expect_output "threads: -n 3 and arguments" 0 '^threads\|3\|a b\|-n\|\|$' \
  "$bsprun" -n 3 "$show" "a b" -n ""
expect_output "threads: --nprocs=2 --backend=threads --" 0 '^threads\|2\|--x\|$' \
  "$bsprun" --nprocs=2 --backend=threads -- "$show" --x
expect_output "threads: -n4 -bthreads" 0 '^threads\|4\|$' "$bsprun" -n4 -bthreads "$show"
expect_output "threads: -n 007" 0 '^threads\|7\|$' "$bsprun" -n 007 "$show"
expect_output "threads: default -n from BSPKIT_NPROCS" 0 '^threads\|5\|$' \
  env BSPKIT_NPROCS=5 "$bsprun" "$show"
expect_output "threads: -n overrides BSPKIT_NPROCS" 0 '^threads\|2\|$' \
  env BSPKIT_NPROCS=5 "$bsprun" -n 2 "$show"
expect_output "threads: default -n is nproc ($cores)" 0 "^threads\\|$cores\\|\$" \
  env -u BSPKIT_NPROCS -u BSPKIT_BACKEND "$bsprun" "$show"
expect_output "threads: program found in PATH" 0 '^threads\|2\|$' \
  env PATH="$work/bin:$PATH" "$bsprun" -n 2 show
run "$bsprun" -n 2 sh -c 'exit 7'
[ $st = 7 ] && pass "threads: exit status passed through" || fail "threads: exit status $st, not 7"
expect_output "threads: --dry-run" 0 "^BSPKIT_BACKEND=threads BSPKIT_NPROCS=2 .*show 'a b'\$" \
  "$bsprun" --dry-run -n 2 "$show" "a b"
run "$bsprun" -n 2 --hostfile "$work/notexec" "$show"
if [ $st = 0 ] && grep -q 'ignored' "$err"; then pass "threads: --hostfile ignored with a warning"
else fail "threads: --hostfile: status $st, stderr $(cat "$err")"; fi

# ---- bsprun --profile -------------------------------------------------------------------------
expect_output "threads: --profile made absolute (--dry-run)" 0 \
  "^BSPKIT_BACKEND=threads BSPKIT_NPROCS=2 BSPKIT_PROFILE=$work/p\.jsonl .*show\$" \
  sh -c 'cd "$1" && "$2" --dry-run -n 2 --profile p.jsonl "$3"' sh "$work" "$bsprun" "$show"
expect_output "threads: --profile=FILE exported" 0 "^$work/q\.jsonl\$" \
  "$bsprun" -n 2 --profile="$work/q.jsonl" sh -c 'echo "$BSPKIT_PROFILE"'
expect_output "threads: BSPKIT_PROFILE made absolute" 0 "^$work/r\.jsonl\$" \
  sh -c 'cd "$1" && BSPKIT_PROFILE=r.jsonl "$2" -n 2 sh -c '"'"'echo "$BSPKIT_PROFILE"'"'" sh "$work" "$bsprun"
expect_usage_error "--profile in a missing directory" "--profile $work/nodir/p\.jsonl: the directory $work/nodir does not exist" \
  "$bsprun" -n 2 --profile "$work/nodir/p.jsonl" "$show"
expect_usage_error "--profile without a value" '--profile needs a value' "$bsprun" --profile

# ---- bsprun: mpi, mpi-rma with a fake mpirun ------------------------------------------------
fake=$work/bin/fake-mpirun
cat >"$fake" <<'EOF'
#!/bin/sh
if [ "${1:-}" = --version ]; then echo "${FAKE_MPI_VERSION:-mpirun (Open MPI) 4.1.4}"; exit 0; fi
printf 'args:'; printf ' %s' "$@"; echo
echo "env: BSPKIT_BACKEND=${BSPKIT_BACKEND:-} BSPKIT_NPROCS=${BSPKIT_NPROCS:-} root=${OMPI_ALLOW_RUN_AS_ROOT:-}/${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-}"
exit 5
EOF
chmod +x "$fake"
expect_output "mpi: Open MPI command" 5 \
  "^args: -n 2 --bind-to core -x BSPKIT_BACKEND=mpi -x BSPKIT_NPROCS=2 -x BSPKIT_JOB_DIR=[^ ]*/bsprun\.[A-Za-z0-9]+ $show x y\$" \
  env MPIRUN="$fake" "$bsprun" -b mpi -n 2 "$show" x y
grep -q '^env: BSPKIT_BACKEND=mpi BSPKIT_NPROCS=2 ' "$out" || fail "mpi: environment: $(cat "$out")"
if [ "$(id -u)" = 0 ]; then
  grep -q 'root=1/1' "$out" && pass "mpi: as root, OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1" ||
    fail "mpi: as root without OMPI_ALLOW_RUN_AS_ROOT: $(cat "$out")"
else
  grep -q 'root=/$' "$out" && pass "mpi: not root, no OMPI_ALLOW_RUN_AS_ROOT" ||
    fail "mpi: OMPI_ALLOW_RUN_AS_ROOT set although not root: $(cat "$out")"
fi
over=$((cores + 1))
expect_output "mpi-rma: oversubscribed" 5 \
  "^args: -n $over --oversubscribe --bind-to none -x BSPKIT_BACKEND=mpi-rma -x BSPKIT_NPROCS=$over -x BSPKIT_JOB_DIR=[^ ]*/bsprun\.[A-Za-z0-9]+ $show\$" \
  env MPIRUN="$fake" "$bsprun" -b mpi-rma -n $over "$show"
echo "localhost slots=64" >"$work/hosts"
expect_output "mpi: --hostfile" 5 \
  "^args: -n 3 --bind-to core -x BSPKIT_BACKEND=mpi -x BSPKIT_NPROCS=3 -x BSPKIT_JOB_DIR=[^ ]*/bsprun\.[A-Za-z0-9]+ --hostfile $work/hosts $show\$" \
  env MPIRUN="$fake" "$bsprun" -b mpi --hostfile "$work/hosts" -n 3 "$show"
expect_output "mpi: --profile passed with -x" 5 \
  "^args: -n 2 --bind-to core -x BSPKIT_BACKEND=mpi -x BSPKIT_NPROCS=2 -x BSPKIT_JOB_DIR=[^ ]+ -x BSPKIT_PROFILE=$work/p\.jsonl $show\$" \
  env MPIRUN="$fake" "$bsprun" -b mpi -n 2 --profile "$work/p.jsonl" "$show"
expect_output "mpi: BSPKIT_PROFILE passed with -x" 5 " -x BSPKIT_PROFILE=$work/e\.jsonl $show\$" \
  env MPIRUN="$fake" BSPKIT_PROFILE="$work/e.jsonl" "$bsprun" -b mpi -n 2 "$show"
expect_output "mpi: --profile with MPICH's -genv" 5 " -genv BSPKIT_PROFILE $work/p\.jsonl $show\$" \
  env MPIRUN="$fake" FAKE_MPI_VERSION="HYDRA build details:" "$bsprun" -b mpi -n 2 --profile "$work/p.jsonl" "$show"
expect_output "mpi: --profile --dry-run" 0 "^BSPKIT_BACKEND=mpi BSPKIT_NPROCS=2 BSPKIT_JOB_DIR=[^ ]+ BSPKIT_PROFILE=$work/p\.jsonl .* -x BSPKIT_PROFILE=$work/p\.jsonl $show\$" \
  env MPIRUN="$fake" "$bsprun" --dry-run -b mpi -n 2 --profile "$work/p.jsonl" "$show"
printf '# bspkit-cluster-netns: bspkit.no-such-cluster\n10.200.0.1 slots=1\n' >"$work/half-cluster"
expect_usage_error "mpi: a cluster hostfile with half a header" "has only one of the lines" \
  env MPIRUN="$fake" "$bsprun" -b mpi -n 2 --hostfile "$work/half-cluster" "$show"
printf '# bspkit-cluster-netns: bspkit.no-such-cluster\n# bspkit-cluster-mpirun-args: --bind-to none\n10.200.0.1 slots=1\n' \
  >"$work/gone-cluster"
if [ "$(id -u)" = 0 ]; then
  expect_usage_error "mpi: a cluster that was taken down" \
    "network namespace bspkit\.no-such-cluster does not exist \(taken down\?\)" \
    env MPIRUN="$fake" "$bsprun" -b mpi -n 2 --hostfile "$work/gone-cluster" "$show"
else
  expect_usage_error "mpi: a cluster needs root" "is an emulated cluster's .* needs root" \
    env MPIRUN="$fake" "$bsprun" -b mpi -n 2 --hostfile "$work/gone-cluster" "$show"
fi
expect_output "mpi: BSPRUN_MPIRUN_ARGS" 5 "^args: -n 2 .* --mca btl self $show\$" \
  env MPIRUN="$fake" BSPRUN_MPIRUN_ARGS="--mca btl self" "$bsprun" -b mpi -n 2 "$show"
expect_output "mpi: MPICH command" 5 \
  "^args: -n 2 -bind-to core -genv BSPKIT_BACKEND mpi -genv BSPKIT_NPROCS 2 -genv BSPKIT_JOB_DIR [^ ]*/bsprun\.[A-Za-z0-9]+ $show\$" \
  env MPIRUN="$fake" FAKE_MPI_VERSION="HYDRA build details:" "$bsprun" -b mpi -n 2 "$show"
expect_output "mpi: BSPKIT_BACKEND=mpi selects mpi" 5 "BSPKIT_BACKEND=mpi " \
  env MPIRUN="$fake" BSPKIT_BACKEND=mpi "$bsprun" -n 2 "$show"
expect_output "mpi: --dry-run" 0 "BSPKIT_BACKEND=mpi BSPKIT_NPROCS=2 .*$fake -n 2 --bind-to core" \
  env MPIRUN="$fake" "$bsprun" --dry-run -b mpi -n 2 "$show"
# A job in which bspkit reported a failure (a rank created bspkit-failed in the job
# directory) ends with status 1, however the launcher ended (here: as if by SIGSEGV); the
# job directory is removed afterwards.
crashing=$work/bin/crashing-mpirun
cat >"$crashing" <<'EOF'
#!/bin/sh
if [ "${1:-}" = --version ]; then echo "mpirun (Open MPI) 4.1.4"; exit 0; fi
echo "$BSPKIT_JOB_DIR" >"$(dirname "$0")/../last-job-dir"
[ -z "${FAKE_FAIL:-}" ] || : >"$BSPKIT_JOB_DIR/bspkit-failed"
exit 139
EOF
chmod +x "$crashing"
run env MPIRUN="$crashing" FAKE_FAIL=1 "$bsprun" -b mpi -n 2 "$show"
[ $st = 1 ] && pass "mpi: a reported failure is status 1 (launcher ended with 139)" ||
  fail "mpi: a reported failure: status $st, expected 1"
[ ! -e "$(cat "$work/last-job-dir")" ] && pass "mpi: the job directory is removed" ||
  fail "mpi: the job directory $(cat "$work/last-job-dir") is left behind"
run env MPIRUN="$crashing" "$bsprun" -b mpi -n 2 "$show"
[ $st = 1 ] && grep -q 'ended by signal 11' "$err" &&
  pass "mpi: a job ended by a signal is status 1, and bsprun says so" ||
  fail "mpi: a job ended by a signal: status $st (expected 1), stderr: $(cat "$err")"

run env MPIRUN="$work/bin/no-mpirun" "$bsprun" -b mpi -n 2 "$show"
if [ $st = 127 ] && grep -q 'not found' "$err" && grep -q 'apt-get install openmpi-bin libopenmpi-dev' "$err"; then
  pass "mpi: missing mpirun: status 127 and how to install it"
else
  fail "mpi: missing mpirun: status $st, stderr: $(cat "$err")"
fi

# ---- bspcc --------------------------------------------------------------------------------------
expect_usage_error "bspcc without arguments" 'no input files' "$bspcc"
expect_output "bspcc --showme" 0 '^[^ ]*cc -std=c11 -pthread -I[^ ]*include x\.c -o x [^ ]*libbsp\.a -lz -pthread$' \
  env -u BSPCC_CC "$bspcc" --showme x.c -o x
expect_output "bspcc --showme honours BSPCC_CC" 0 '^my-cc --flag -std=c11 ' env BSPCC_CC="my-cc --flag" "$bspcc" --showme x.c
# CC is make's variable, not bspcc's: `make CC=bspcc` exports CC=bspcc (a bspcc that took
# its compiler from $CC ran itself forever), and BSPCC_CC naming bspcc falls back too.
expect_output "bspcc ignores CC" 0 '^[^ ]*cc -std=c11 ' env CC="$bspcc" timeout 10 "$bspcc" --showme x.c
expect_output "bspcc: BSPCC_CC=bspcc falls back" 0 '^[^ ]*cc -std=c11 ' \
  env BSPCC_CC="$bspcc" timeout 10 "$bspcc" --showme x.c
grep -q 'names bspcc itself' "$err" || fail "bspcc: BSPCC_CC=bspcc gives no warning: $(cat "$err")"
expect_no_output "bspcc -c adds no link flags" 'libbsp|-lbsp' "$bspcc" --showme -c x.c
expect_output "bspcc -c still adds -I" 0 ' -I[^ ]*include -c x\.c$' "$bspcc" --showme -c x.c
expect_no_output "bspcc -std=gnu99 replaces -std=c11" 'std=c11' "$bspcc" --showme -std=gnu99 x.c
expect_output "bspcc -std=gnu99 passed" 0 ' -std=gnu99 ' "$bspcc" --showme -std=gnu99 x.c
expect_output "bspcc --showme:compile" 0 '^-std=c11 -pthread -I' "$bspcc" --showme:compile
expect_output "bspcc --showme:link" 0 'libbsp\.a -lz -pthread$' "$bspcc" --showme:link
expect_output "bspcc --bsp-shared --showme" 0 ' -L[^ ]* -Wl,-rpath,[^ ]* -lbsp -pthread$' \
  "$bspcc" --bsp-shared --showme x.c
expect_output "bspcc keeps arguments with blanks" 0 " 'my file\.c' " "$bspcc" --showme 'my file.c' -o x

# Really compile, link and run (needs the library built).
cd "$work" || exit 1
if "$bspcc" "$@" -O2 -Wall -Wextra -Werror -o hello "$hello" 2>"$err"; then
  pass "bspcc compiles and links $hello"
  expect_output "bsprun -n 2 ./hello" 0 '^hello_bsp: ok on 2 processes \(back end threads\)$' "$bsprun" -n 2 ./hello
  expect_output "bsprun -n 3 ./hello" 0 '^hello_bsp: ok on 3 processes' "$bsprun" -n 3 ./hello
else
  fail "bspcc -o hello $hello: $(cat "$err")"
fi
if "$bspcc" "$@" -c -o hello.o "$hello" 2>"$err" && "$bspcc" "$@" -o hello2 hello.o 2>>"$err"; then
  expect_output "bspcc -c, then bspcc to link" 0 '^hello_bsp: ok on 2 processes' "$bsprun" -n 2 ./hello2
else
  fail "bspcc -c / link: $(cat "$err")"
fi
if "$bspcc" "$@" --bsp-shared -o hello3 "$hello" 2>"$err"; then
  expect_output "bspcc --bsp-shared (rpath to the build tree's libbsp.so)" 0 '^hello_bsp: ok on 2 processes' \
    "$bsprun" -n 2 ./hello3
else
  fail "bspcc --bsp-shared: $(cat "$err")"
fi

# The way Makefiles (BSPedupack's among them) are pointed at a BSPlib: make CC=bspcc, and
# CC=bspcc make -e. Both must build and finish (timeout: the old bspcc looped forever).
if command -v make >/dev/null 2>&1; then
  mkdir -p "$work/make" && cp "$hello" "$work/make/hello.c"
  printf 'CC = cc\nCFLAGS = -O1\nhello: hello.o\n\t$(CC) $(CFLAGS) -o hello hello.o\n' >"$work/make/Makefile"
  for how in "make CC=$bspcc" "make -e"; do
    rm -f "$work/make/hello" "$work/make/hello.o"
    case $how in
      "make -e") (cd "$work/make" && CC="$bspcc" timeout 60 make -e CFLAGS="-O1 $*") >"$out" 2>"$err" ;;
      *) (cd "$work/make" && timeout 60 make CC="$bspcc" CFLAGS="-O1 $*") >"$out" 2>"$err" ;;
    esac
    st=$?
    if [ $st = 0 ] && [ -x "$work/make/hello" ]; then
      expect_output "$how, then bsprun -n 2" 0 '^hello_bsp: ok on 2 processes' "$bsprun" -n 2 "$work/make/hello"
    else
      fail "$how: status $st (124: did not finish in 60 s), stderr: $(cat "$err")"
    fi
  done
else
  echo "skip: make is not installed (the make CC=bspcc checks)"
fi

if [ $failures -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
