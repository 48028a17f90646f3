# microbench_lib.sh - what run_microbench.sh and run_mpi_microbench.sh share; sourced by
# them after they have taken BUILD_DIR off their arguments (into $build). Sets script, build
# (made absolute), root, bsprun, out, status; every run's files go to results/microbench/.

script=$(basename "$0")
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
bsprun=$build/bin/bsprun
out=$root/results/microbench
status=0

# mb_require HINT FILE...: exit 2 unless every FILE is there to run (HINT ends the message).
mb_require() {
  hint=$1
  shift
  for f in "$@"; do
    if [ ! -x "$f" ]; then
      echo "$script: $f not found; build first (cmake --build $build$hint)" >&2
      exit 2
    fi
  done
}

# mb_begin UPTIME_FILE: the results folder, and the machine's load before the runs.
mb_begin() {
  uptime_file=$out/$1
  mkdir -p "$out"
  echo "before: $(uptime)" > "$uptime_file"
  echo "load before: $(uptime)"
}

# mb_run BASE HEADING WHAT COMMAND...: runs COMMAND with its table in BASE.txt (also printed
# here) and its stderr in BASE.log; when it fails, says "WHAT failed" and sets status=1.
mb_run() {
  base=$1 heading=$2 what=$3
  shift 3
  echo
  echo "=== $heading ==="
  rc=0
  "$@" >"$base.txt" 2>"$base.log" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "$script: $what failed (exit $rc); see $base.log" >&2
    tail -n 5 "$base.log" >&2
    status=1
  fi
  cat "$base.txt"
}

# mb_end: the load after the runs; exit 1 if any run failed.
mb_end() {
  echo "after:  $(uptime)" >> "$uptime_file"
  echo
  echo "load after: $(uptime)"
  echo "results in $out"
  exit $status
}
