"""`bspkit cluster up|down|status`: the emulated cluster's actions (bspkit.measure.cluster makes,
shows and removes it)."""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bspkit.commands._args import Subparsers, positive_int
from bspkit.console import Failure
from bspkit.measure import cluster as cl

NAME = "cluster"
PASS_THROUGH = False

EPILOG = """\
What `up` builds: a parent network namespace bspkit.NAME holding a bridge (10.200.0.254/24),
and per host k a namespace bspkit.NAME.hK whose eth0 (10.200.0.k+1) is one end of a veth pair,
the other end on the bridge. Both ends are shaped by tc's token bucket (tbf) to --rate: the
host's sending and its receiving. Nothing on the machine's own interfaces changes and no packet
leaves the parent namespace. In STATE_DIR/NAME: hostfile (Open MPI's; its header tells bsprun
the namespace and the mpirun options), agent (how mpirun enters a host: plm_rsh_agent) and
cluster.json. Ranks: --map-by slot fills host 0 first, node deals them round robin; host k
runs on the cores k R .. k R + R - 1 (modulo the cores there are: the hosts share the machine's
cores and memory bandwidth). Latency is what the kernel's stack gives (no netem shaping).
Needs root, ip and tc (iproute2), unshare and taskset (util-linux), and Open MPI to run on it:
  bspkit cluster up --hosts 2 --ranks-per-host 1 --rate 1gbit
  bsprun -b mpi -n 2 --hostfile /run/bspkit-cluster/bspkit/hostfile PROGRAM
  bspkit probe -b mpi -n 2 --hostfile /run/bspkit-cluster/bspkit/hostfile --quick
  bspkit cluster status; bspkit cluster down
"""


def _add_name_args(p: argparse.ArgumentParser, name_default: str | None) -> None:
    p.add_argument(
        "--name",
        default=name_default,
        metavar="NAME",
        help="the cluster's name (letters, digits, '-', '_')" + (" (default: bspkit)" if name_default else ""),
    )
    p.add_argument(
        "--state-dir",
        metavar="DIR",
        help="where the cluster's files go, in DIR/NAME (default: /run/bspkit-cluster)",
    )


def add_parser(subparsers: Subparsers) -> None:
    cl_parser = subparsers.add_parser(
        "cluster",
        help="an emulated cluster: hosts as network namespaces with shaped links, for mpirun (needs root)",
        description="Makes (up), shows (status) and removes (down) an emulated cluster of H hosts, each a Linux "
        "network namespace linked to a bridge at a shaped rate; bsprun -b mpi --hostfile runs MPI jobs across it.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = cl_parser.add_subparsers(dest="cluster_command", metavar="ACTION", required=True)
    up = actions.add_parser(
        "up",
        help="make a cluster",
        description="Makes the cluster's namespaces, bridge, links and their shaping, and writes its hostfile. "
        "A cluster of that name must not exist (take it down first). Fails, removing what it made, if a step fails.",
    )
    up.add_argument("--hosts", type=positive_int, required=True, metavar="H", help="number of hosts")
    up.add_argument(
        "--ranks-per-host", type=positive_int, default=1, metavar="R", help="MPI ranks (slots) per host (default 1)"
    )
    up.add_argument(
        "--rate",
        required=True,
        metavar="RATE",
        help="each host's link rate, each way, in tc's units: 1gbit, 100mbit, 125mbps (bytes/s)",
    )
    up.add_argument(
        "--burst",
        metavar="SIZE",
        help="the token bucket's burst in bytes (or 256kb, 2mb: 1024-based; default: 2 ms at the rate, at least "
        "64 KiB, e.g. 250000 bytes at 1gbit)",
    )
    up.add_argument(
        "--map-by",
        choices=("slot", "node"),
        default="slot",
        help="rank placement: slot fills each host in turn (default), node deals the ranks round robin",
    )
    _add_name_args(up, "bspkit")
    down = actions.add_parser(
        "down",
        help="remove a cluster, also a half-made one",
        description="Ends the processes left in the cluster's namespaces, deletes the namespaces (all named "
        "bspkit.NAME and bspkit.NAME.*) and the state directory; also after a failed or interrupted up.",
    )
    _add_name_args(down, "bspkit")
    status = actions.add_parser(
        "status",
        help="show the clusters, their hosts, rates and byte counters",
        description="Prints each cluster (or --name's): its hosts, addresses, cores, link rate and the bytes, "
        "packets and drops its links' qdiscs have counted; and namespaces a cluster left without state.",
    )
    _add_name_args(status, None)


@dataclass(frozen=True)
class UpOptions:
    name: str
    state_dir: str | None  # as given (messages repeat it); None: cl.DEFAULT_STATE_DIR
    hosts: int
    ranks_per_host: int
    rate: str  # in tc's units
    burst: str | None
    map_by: str  # slot or node


@dataclass(frozen=True)
class DownOptions:
    name: str
    state_dir: str | None


@dataclass(frozen=True)
class StatusOptions:
    name: str | None  # None: every cluster
    state_dir: str | None


ClusterOptions = UpOptions | DownOptions | StatusOptions


def options_from(args: argparse.Namespace) -> ClusterOptions:
    if args.cluster_command == "up":
        return UpOptions(
            name=args.name,
            state_dir=args.state_dir,
            hosts=args.hosts,
            ranks_per_host=args.ranks_per_host,
            rate=args.rate,
            burst=args.burst,
            map_by=args.map_by,
        )
    if args.cluster_command == "down":
        return DownOptions(name=args.name, state_dir=args.state_dir)
    return StatusOptions(name=args.name, state_dir=args.state_dir)


def _state_base(state_dir: str | None) -> Path:
    return Path(state_dir or cl.DEFAULT_STATE_DIR).absolute()


def up(options: UpOptions) -> int:
    rate = cl.parse_rate(options.rate)
    burst = cl.parse_size(options.burst) if options.burst is not None else None
    c = cl.plan(
        options.name,
        options.hosts,
        options.ranks_per_host,
        rate,
        burst,
        options.map_by,
        Path(options.state_dir or cl.DEFAULT_STATE_DIR),
        sorted(os.sched_getaffinity(0)),
        {},
    )
    c = dataclasses.replace(c, tools=cl.find_tools())  # after the usage errors
    cl.up(c, cl.down_command_line(options.name, options.state_dir))
    _print_up(c, options.state_dir)
    return 0


def _print_up(c: cl.Cluster, state_dir: str | None) -> None:
    total = len(c.hosts) * c.ranks_per_host
    print(
        f"cluster '{c.name}' is up: {cl.shape(len(c.hosts), c.ranks_per_host)} in network namespace {c.netns}; "
        f"each host's link {cl.format_rate(c.rate_bits)} each way (tc tbf, burst {c.burst_bytes} bytes)"
    )
    for h in c.hosts:
        print(f"  {h.hostname:<14} {h.address:<12} cores {','.join(map(str, h.cpus)):<10} namespace {h.netns}")
    placed = "fill host 0 first, then host 1, ..." if c.map_by == "slot" else "go round robin over the hosts"
    print(f"ranks {placed} (--map-by {c.map_by}); each host's ranks run on its cores")
    if c.oversubscribed:
        print(
            f"{len(c.hosts) * c.ranks_per_host} ranks share {c.cores} cores: waiting ranks yield (mpi_yield_when_idle)"
        )
    print(f"hostfile: {c.hostfile}")
    print("run on it (as root):")
    print(f"  bsprun -b mpi -n {total} --hostfile {c.hostfile} PROGRAM")
    print(f"  bspkit probe -b mpi -n {total} --hostfile {c.hostfile}")
    print(f"take it down: {cl.down_command_line(c.name, state_dir)}")


def down(options: DownOptions) -> int:
    cl.check_name(options.name)
    tools = cl.find_tools()
    removed, problems = cl.teardown(options.name, _state_base(options.state_dir) / options.name, tools["ip"])
    if not removed and not problems:
        print(f"no cluster '{options.name}': nothing to remove")
        return 0
    for what in removed:
        print(f"removed {what}")
    if problems:
        raise Failure(f"cluster '{options.name}' is not entirely removed: " + "; ".join(problems))
    print(f"cluster '{options.name}' is down")
    return 0


def status(options: StatusOptions) -> int:
    tools = cl.find_tools()
    base = _state_base(options.state_dir)
    directories = cl.cluster_directories(base, options.name, options.state_dir)
    for d in directories:
        print("\n".join(cl.status_of(d, tools["tc"])))
    stray = cl.stray_namespaces({d.name for d in directories})
    if stray:
        names = sorted({e.split(".")[1] for e in stray})
        print(
            f"namespaces of clusters without state in {base}: {', '.join(stray)} "
            f"(remove with: {'; '.join(cl.down_command_line(n, None) for n in names)}, with --state-dir if they have one)"
        )
    if not directories and not stray:
        print(f"no cluster (none in {base})")
    return 0


def run(options: ClusterOptions, extra: Sequence[str] = ()) -> int:
    if isinstance(options, UpOptions):
        return up(options)
    if isinstance(options, DownOptions):
        return down(options)
    return status(options)
