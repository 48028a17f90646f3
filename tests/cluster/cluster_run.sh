#!/bin/sh
# cluster_run.sh CLUSTER_DIR cmd [args...]
# Runs cmd, a test on the emulated cluster whose state is in CLUSTER_DIR (the fixture's,
# tests/cluster/cluster_fixture.sh); exits 77 (ctest: skipped) with the reason when the
# fixture could not make the cluster on this machine.
set -u
[ $# -ge 2 ] || { echo "usage: $0 CLUSTER_DIR cmd [args...]" >&2; exit 2; }
dir=$1
shift
if [ -f "$dir.skip" ]; then
  echo "SKIP: $(cat "$dir.skip")"
  exit 77
fi
[ -f "$dir/hostfile" ] || { echo "$0: no cluster in $dir (did its fixture, cluster.up, run?)" >&2; exit 1; }
exec "$@"
