#!/bin/sh
# bsprun_cluster_test.sh BSPRUN HOSTFILE NAME WORKDIR
# bsprun on the emulated cluster NAME (2 hosts x 2 ranks, --map-by node, made by the fixture):
#  - --dry-run shows mpirun in the cluster's namespace with the hostfile's options, without
#    bsprun's own binding, and --profile's absolute path passed with -x;
#  - a job of 4 processes runs 2 on each host: in the host's network namespace (its address
#    on eth0), under the host's name, on the host's cores;
#  - bsprun refuses the cluster to a user who is not root (status 2).
set -u
[ $# -eq 4 ] || { echo "usage: $0 BSPRUN HOSTFILE NAME WORKDIR" >&2; exit 2; }
bsprun=$1 hostfile=$2 name=$3 work=$4
failures=0
pass() { echo "ok:   $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

out=$("$bsprun" --dry-run -b mpi -n 4 --hostfile "$hostfile" --profile prof.jsonl /bin/true 2>&1)
st=$?
pattern="^BSPKIT_BACKEND=mpi BSPKIT_NPROCS=4 BSPKIT_JOB_DIR=[^ ]+ BSPKIT_PROFILE=$work/prof\.jsonl .*[^ ]*ip netns exec bspkit\.$name [^ ]*mpirun -n 4 --mca plm_rsh_agent [^ ]*/$name/agent .*--bind-to none --map-by node .*-x BSPKIT_PROFILE=$work/prof\.jsonl --hostfile $hostfile /bin/true\$"
if [ $st = 0 ] && printf '%s\n' "$out" | grep -E -q -e "$pattern"; then
  pass "--dry-run: mpirun in the namespace with the cluster's options"
else
  fail "--dry-run: status $st, output: $out"
fi
case $out in
  *'--bind-to core'* | *--oversubscribe*) fail "--dry-run: bsprun's own binding is there: $out" ;;
  *) pass "--dry-run: no --bind-to core, no --oversubscribe" ;;
esac

# Each rank says where it is: host name, its address, its cores.
"$bsprun" -b mpi -n 4 --hostfile "$hostfile" /bin/sh -c \
  'echo "rank $OMPI_COMM_WORLD_RANK $(hostname) $(ip -o -4 addr show dev eth0 | sed -n "s/.* inet \([0-9.]*\).*/\1/p") $(taskset -pc $$ | sed "s/.*: //")"' \
  >"$work/where" 2>"$work/err"
st=$?
sort "$work/where" >"$work/sorted"
expected_hosts="rank 0 $name-h0 10.200.0.1
rank 1 $name-h1 10.200.0.2
rank 2 $name-h0 10.200.0.1
rank 3 $name-h1 10.200.0.2"
if [ $st = 0 ] && [ "$(cut -d' ' -f1-4 "$work/sorted")" = "$expected_hosts" ]; then
  pass "4 ranks round robin on the 2 hosts, each in its host's namespace"
else
  fail "where the ranks ran: status $st, got: $(cat "$work/sorted") $(cat "$work/err")"
fi
cores_h0=$(sed -n 's/^ *10\.200\.0\.1) .* cpus=\([0-9,]*\) .*/\1/p' "$(dirname "$hostfile")/agent")
if [ -n "$cores_h0" ] && grep -q "^rank 0 $name-h0 10.200.0.1 $cores_h0\$" "$work/sorted"; then
  pass "host 0's ranks run on its cores ($cores_h0)"
else
  fail "host 0's cores: the agent says '$cores_h0', rank 0 ran with: $(grep '^rank 0' "$work/sorted")"
fi

if command -v setpriv >/dev/null 2>&1; then
  setpriv --reuid=65534 --regid=65534 --clear-groups "$bsprun" -b mpi -n 2 --hostfile "$hostfile" /bin/true \
    >"$work/out" 2>"$work/err" </dev/null
  st=$?
  if [ $st = 2 ] && grep -q "emulated cluster's .* needs root" "$work/err"; then
    pass "not root: status 2, \"$(head -n 1 "$work/err")\""
  else
    fail "not root: status $st (expected 2), stderr: $(cat "$work/err")"
  fi
else
  echo "skip: setpriv is not installed (the check as a user who is not root)"
fi

[ $failures = 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
