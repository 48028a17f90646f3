"""An emulated cluster (`bspkit cluster up|down|status`): H "hosts" as Linux network
namespaces, each joined to a bridge by a veth pair whose two ends are shaped by tc's token
bucket filter (tbf) to one rate. Open MPI's ranks on different hosts then talk TCP over links
of that bandwidth, ranks on one host through shared memory.

Everything lives behind one parent network namespace made for the cluster (it holds the
bridge, the hosts' peers and the only address on the bridge): nothing on the machine's own
interfaces changes and no packet can leave. mpirun runs in the parent (bsprun does `ip netns
exec PARENT mpirun ...` when its --hostfile is a cluster's) and reaches a host through the
generated agent script (Open MPI's plm_rsh_agent, in place of ssh), which starts Open MPI's
daemon in the host's namespace, under the host's name and on the host's cores.

Names: the parent namespace is bspkit.NAME, host k's bspkit.NAME.hK, both in /run/netns
(where `ip netns` finds them; NAME has no dots, so the prefix names one cluster); the state
(hostfile, agent, cluster.json) is in STATE_DIR/NAME. Root is needed for all of it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bspkit.console import Failure, UsageError, write_text

DEFAULT_NAME = "bspkit"
DEFAULT_STATE_DIR = Path("/run/bspkit-cluster")
NETNS_DIR = Path("/run/netns")
NETNS_PREFIX = "bspkit."
# A private /24 used only inside the parent namespace: every cluster has its own copy.
SUBNET = "10.200.0"
BRIDGE = "br0"
BRIDGE_ADDRESS = f"{SUBNET}.254"
MAX_HOSTS = 250
HOST_DEVICE = "eth0"
# tbf's queue bound: packets that would wait longer are dropped (TCP then backs off).
TBF_LATENCY = "50ms"
# Default burst: the bytes the link sends in 2 ms at its rate (timer slack and TSO's 64 KiB
# segments need that much to reach the rate), at least 64 KiB.
BURST_SECONDS = 0.002
MIN_BURST_BYTES = 64 * 1024
STATE_FILES = ("hostfile", "agent", "cluster.json")
TOOLS = {"ip": "iproute2", "tc": "iproute2", "unshare": "util-linux", "taskset": "util-linux"}
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")

# tc's rate units, in bits per second (tc(8): bit, bps = bytes/s; SI and IEC prefixes).
RATE_UNITS: dict[str, float] = {}
for _prefix, _si, _iec in (("", 1, 1), ("k", 1e3, 2**10), ("m", 1e6, 2**20), ("g", 1e9, 2**30), ("t", 1e12, 2**40)):
    RATE_UNITS[f"{_prefix}bit"] = _si
    RATE_UNITS[f"{_prefix}bps"] = 8 * _si
    if _prefix:
        RATE_UNITS[f"{_prefix}ibit"] = _iec
        RATE_UNITS[f"{_prefix}ibps"] = 8 * _iec
# tc's size units, in bytes (tc(8): k, kb = 1024 bytes; kbit = 1024 bits).
SIZE_UNITS: dict[str, float] = {"": 1, "b": 1}
for _prefix, _factor in (("k", 2**10), ("m", 2**20), ("g", 2**30)):
    SIZE_UNITS.update({_prefix: _factor, f"{_prefix}b": _factor, f"{_prefix}ib": _factor, f"{_prefix}bit": _factor / 8})
NUMBER_UNIT_RE = re.compile(r"^\s*((?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)


# -------------------------------------------------------------------------- values


def parse_rate(text: str) -> int:
    """A link rate in tc's spelling (1gbit, 100mbit, 125mbps: bytes/s, 1gibit) -> bits/s."""
    m = NUMBER_UNIT_RE.match(text)
    if not m:
        raise UsageError(f"--rate {text!r}: not a rate; give a number and a unit, e.g. 1gbit, 100mbit, 125mbps")
    number, unit = float(m.group(1)), m.group(2).lower()
    if not unit:
        raise UsageError(f"--rate {text}: give a unit, e.g. {text}mbit or {text}gbit (bit/s) or {text}mbps (bytes/s)")
    if unit not in RATE_UNITS:
        raise UsageError(
            f"--rate {text}: unknown unit {unit!r}; use bit, kbit, mbit, gbit, tbit or bps, kbps, mbps, gbps"
        )
    bits = round(number * RATE_UNITS[unit])
    if bits < 1:
        raise UsageError(f"--rate {text}: the rate must be positive")
    return bits


def parse_size(text: str, option: str = "--burst") -> int:
    """A size in tc's spelling (250000, 256kb = 256 KiB, 2mb, 64kbit) -> bytes."""
    m = NUMBER_UNIT_RE.match(text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in SIZE_UNITS:
        raise UsageError(f"{option} {text!r}: not a size; give bytes, or a number with b, kb, mb or gb (1024-based)")
    size = round(float(m.group(1)) * SIZE_UNITS[unit])
    if size < 1:
        raise UsageError(f"{option} {text}: the size must be positive")
    return size


def default_burst(rate_bits: int) -> int:
    """tbf's burst for a rate: BURST_SECONDS of traffic, at least MIN_BURST_BYTES."""
    return max(math.ceil(rate_bits / 8 * BURST_SECONDS), MIN_BURST_BYTES)


def format_rate(bits: int) -> str:
    """bits/s in tc's units: 1000000000 -> '1gbit', 1500000000 -> '1.5gbit'."""
    for unit, factor in (("tbit", 10**12), ("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits >= factor:
            return f"{bits / factor:.6g}{unit}"
    return f"{bits}bit"


def host_cpus(index: int, ranks_per_host: int, cores: Sequence[int]) -> tuple[int, ...]:
    """Host k's cores: the k-th run of R cores of the cores this process may use, wrapping
    around (hosts share cores when H R exceeds them)."""
    n = len(cores)
    return tuple(sorted({cores[(index * ranks_per_host + i) % n] for i in range(ranks_per_host)}))


def shape(hosts: int, ranks_per_host: int) -> str:
    """'2 hosts x 1 rank'"""
    return f"{hosts} host{'s' * (hosts != 1)} x {ranks_per_host} rank{'s' * (ranks_per_host != 1)}"


def parent_netns(name: str) -> str:
    return f"{NETNS_PREFIX}{name}"


def name_of_hostfile(path: Path) -> str | None:
    """The cluster whose hostfile this is (its '# bspkit-cluster-netns: bspkit.NAME' line), else None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("# bspkit-cluster-netns:"):
                    netns = line.split(":", 1)[1].strip()
                    return netns.removeprefix(NETNS_PREFIX) or None
    except OSError:
        return None
    return None


def check_name(name: str) -> None:
    if not NAME_RE.match(name):
        raise UsageError(
            f"--name {name!r}: use up to 32 letters, digits, '-' and '_' (starting with a letter or digit; no dots)"
        )


# -------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Host:
    index: int
    hostname: str  # the host's name (its UTS namespace), NAME-hK
    address: str
    netns: str
    peer: str  # its veth end in the parent namespace (on the bridge)
    cpus: tuple[int, ...]


@dataclass(frozen=True)
class Cluster:
    name: str
    directory: Path  # STATE_DIR/NAME: hostfile, agent, cluster.json
    hosts: tuple[Host, ...]
    ranks_per_host: int
    rate_bits: int
    burst_bytes: int
    map_by: str
    cores: int  # the cores the hosts share
    tools: dict[str, str]  # absolute paths of ip, tc, unshare, taskset

    @property
    def oversubscribed(self) -> bool:
        return len(self.hosts) * self.ranks_per_host > self.cores

    @property
    def netns(self) -> str:
        return parent_netns(self.name)

    @property
    def hostfile(self) -> Path:
        return self.directory / "hostfile"

    @property
    def agent(self) -> Path:
        return self.directory / "agent"

    def mpirun_args(self) -> list[str]:
        """Open MPI's options for a job on the cluster (the hostfile's header carries them)."""
        subnet = f"{SUBNET}.0/24"
        return [
            # reach the hosts through our agent (not plm_rsh_no_tree_spawn: its daemons
            # detach, and a daemon that fails to start then leaves mpirun waiting forever)
            *("--mca", "plm_rsh_agent", str(self.agent)),
            # shared memory on a host, TCP between hosts, over the shaped links only
            *("--mca", "pml", "ob1", "--mca", "btl", "self,vader,tcp"),
            *("--mca", "btl_tcp_if_include", subnet, "--mca", "oob_tcp_if_include", subnet),
            # one-sided MPI over UCX fails between the namespaces (MPI_Win_create); pt2pt works
            *("--mca", "osc", "^ucx"),
            # every connection made in MPI_Init: a connection being made when a peer dies
            # prints an error in three writes, in which another rank's line may land
            *("--mca", "mpi_preconnect_mpi", "1"),
            # after an MPI_Abort a host's daemon ends its ranks at once, not after 1 s
            *("--mca", "odls_base_sigkill_timeout", "0"),
            # Open MPI sees all the machine's cores on every host and would bind every host's
            # first rank to core 0: the agent gives each host its own cores instead
            *("--bind-to", "none", "--map-by", self.map_by),
            # more ranks than cores: a rank waiting for a message must yield its core (busy
            # polling made a test 10 times slower); Open MPI cannot tell, the slots fit the hosts
            *(("--mca", "mpi_yield_when_idle", "1") if self.oversubscribed else ()),
        ]

    def hostfile_text(self) -> str:
        total = len(self.hosts) * self.ranks_per_host
        lines = [
            f"# bspkit emulated cluster '{self.name}': {shape(len(self.hosts), self.ranks_per_host)}, links "
            f"{format_rate(self.rate_bits)} each way (made by `bspkit cluster up`).",
            f"# Use: bsprun -b mpi -n {total} --hostfile {self.hostfile} PROGRAM (as root; bsprun reads the two",
            "# lines below and runs mpirun in the cluster's network namespace with these options).",
            f"# bspkit-cluster-netns: {self.netns}",
            f"# bspkit-cluster-mpirun-args: {' '.join(self.mpirun_args())}",
        ]
        lines += [f"{h.address} slots={self.ranks_per_host}" for h in self.hosts]
        return "\n".join(lines) + "\n"

    def agent_text(self) -> str:
        cases = "\n".join(
            f"  {h.address}) netns={h.netns} name={h.hostname} cpus={','.join(map(str, h.cpus))} ;;" for h in self.hosts
        )
        t = {k: shlex.quote(v) for k, v in self.tools.items()}
        return f"""#!/bin/sh
# The remote-shell agent of bspkit's emulated cluster '{self.name}' (made by `bspkit cluster up`).
# Open MPI runs `agent HOST COMMAND...` (plm_rsh_agent, as it would run ssh) to start its
# daemon on HOST: this runs COMMAND in HOST's network namespace, in a UTS namespace of its
# own with HOST's name, on HOST's cores.
while [ $# -gt 0 ]; do
  case $1 in -*) shift ;; *) break ;; esac   # ssh options, if Open MPI adds any
done
[ $# -ge 2 ] || {{ echo "bspkit cluster agent: usage: $0 HOST COMMAND..." >&2; exit 255; }}
host=$1
shift
case $host in
{cases}
  *) echo "bspkit cluster agent: '$host' is not a host of cluster '{self.name}'" >&2; exit 255 ;;
esac
# Like ssh, the command's words are joined and run by a shell.
exec {t["ip"]} netns exec "$netns" {t["unshare"]} --uts {t["taskset"]} -c "$cpus" /bin/sh -c "hostname $name && exec $*"
"""

    def state(self) -> dict[str, object]:
        """cluster.json: what `status` and the user read back."""
        return {
            "format": 1,
            "tool": "bspkit-cluster",
            "name": self.name,
            "created": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "netns": self.netns,
            "subnet": f"{SUBNET}.0/24",
            "bridge": {"device": BRIDGE, "address": BRIDGE_ADDRESS},
            "ranks_per_host": self.ranks_per_host,
            "map_by": self.map_by,
            "cores": self.cores,
            "oversubscribed": self.oversubscribed,
            "rate": format_rate(self.rate_bits),
            "rate_bits_per_s": self.rate_bits,
            "burst_bytes": self.burst_bytes,
            "tbf_latency": TBF_LATENCY,
            "hosts": [
                {
                    "hostname": h.hostname,
                    "address": h.address,
                    "netns": h.netns,
                    "device": HOST_DEVICE,
                    "peer": h.peer,
                    "cpus": list(h.cpus),
                    "slots": self.ranks_per_host,
                }
                for h in self.hosts
            ],
            "hostfile": str(self.hostfile),
            "agent": str(self.agent),
            "mpirun_args": self.mpirun_args(),
        }


def plan(
    name: str,
    hosts: int,
    ranks_per_host: int,
    rate_bits: int,
    burst_bytes: int | None,
    map_by: str,
    state_dir: Path,
    cores: Sequence[int],
    tools: dict[str, str],
) -> Cluster:
    """The cluster `up` would build; nothing is touched."""
    check_name(name)
    if not 1 <= hosts <= MAX_HOSTS:
        raise UsageError(f"--hosts {hosts}: between 1 and {MAX_HOSTS}")
    if map_by not in ("slot", "node"):
        raise UsageError(f"--map-by {map_by}: slot or node")
    directory = state_dir.absolute() / name
    if any(c.isspace() for c in str(directory)):
        # the hostfile's mpirun options (the agent's path among them) are split at blanks
        raise UsageError(f"--state-dir {state_dir}: a directory without blanks in its path, please")
    parent = parent_netns(name)
    return Cluster(
        name=name,
        directory=directory,
        hosts=tuple(
            Host(
                index=k,
                hostname=f"{name}-h{k}",
                address=f"{SUBNET}.{k + 1}",
                netns=f"{parent}.h{k}",
                peer=f"vh{k}",
                cpus=host_cpus(k, ranks_per_host, cores),
            )
            for k in range(hosts)
        ),
        ranks_per_host=ranks_per_host,
        rate_bits=rate_bits,
        burst_bytes=burst_bytes if burst_bytes is not None else default_burst(rate_bits),
        map_by=map_by,
        cores=len(cores),
        tools=tools,
    )


# -------------------------------------------------------------------------- the machine


class StepFailed(Exception):
    """A command of `up` failed."""

    def __init__(self, cmd: list[str], message: str) -> None:
        super().__init__(f"`{shlex.join(cmd)}` failed: {message}")


def find_tools() -> dict[str, str]:
    """Root and the tools, or one clear Failure."""
    if os.geteuid() != 0:
        raise Failure(
            "needs root: the emulated cluster is made of network namespaces, veth pairs and tc qdiscs "
            "(run it as root, e.g. sudo bspkit cluster ...)"
        )
    found = {tool: shutil.which(tool) for tool in TOOLS}
    missing = [tool for tool, path in found.items() if path is None]
    if missing:
        packages = sorted({TOOLS[t] for t in missing})
        raise Failure(
            f"needs {', '.join(missing)} (from {' and '.join(packages)}), not found in PATH "
            "(Debian/Ubuntu: apt-get install iproute2 util-linux)"
        )
    return {tool: str(path) for tool, path in found.items()}


def run_step(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise StepFailed(cmd, str(e)) from None
    if proc.returncode != 0:
        raise StepFailed(cmd, (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}"))
    return proc.stdout


def cluster_namespaces(name: str) -> list[str]:
    """The namespaces of cluster NAME in /run/netns, hosts first, whatever state they are in."""
    try:
        entries = os.listdir(NETNS_DIR)
    except OSError:
        return []
    parent = parent_netns(name)
    hosts = sorted((e for e in entries if e.startswith(parent + ".")), key=lambda e: (len(e), e))
    return hosts + ([parent] if parent in entries else [])


def make_netns(netns: str, tools: dict[str, str]) -> None:
    """A network namespace kept by a bind mount on /run/netns/NETNS (unshare's --net=FILE)."""
    NETNS_DIR.mkdir(parents=True, exist_ok=True)
    path = NETNS_DIR / netns
    try:
        path.touch(exist_ok=False)
    except OSError as e:
        raise StepFailed(["touch", str(path)], e.strerror or str(e)) from None
    run_step([tools["unshare"], f"--net={path}", "true"])


def build(c: Cluster) -> None:
    """Makes the namespaces, the bridge, the links and their shaping."""
    ip, tc, parent = c.tools["ip"], c.tools["tc"], c.netns
    make_netns(parent, c.tools)
    run_step([ip, "-n", parent, "link", "set", "lo", "up"])
    run_step([ip, "-n", parent, "link", "add", "name", BRIDGE, "type", "bridge"])
    run_step([ip, "-n", parent, "addr", "add", f"{BRIDGE_ADDRESS}/24", "dev", BRIDGE])
    run_step([ip, "-n", parent, "link", "set", BRIDGE, "up"])
    tbf = ["tbf", "rate", f"{c.rate_bits}bit", "burst", f"{c.burst_bytes}b", "latency", TBF_LATENCY]
    for h in c.hosts:
        make_netns(h.netns, c.tools)
        run_step([ip, "-n", parent, "link", "add", "name", h.peer, "type", "veth"]
                 + ["peer", "name", HOST_DEVICE, "netns", h.netns])  # fmt: skip
        run_step([ip, "-n", parent, "link", "set", h.peer, "master", BRIDGE, "up"])
        run_step([ip, "-n", h.netns, "link", "set", "lo", "up"])
        run_step([ip, "-n", h.netns, "addr", "add", f"{h.address}/24", "dev", HOST_DEVICE])
        run_step([ip, "-n", h.netns, "link", "set", HOST_DEVICE, "up"])
        # both ends: the host's sending side, and the bridge's side towards the host
        run_step([tc, "-n", h.netns, "qdisc", "add", "dev", HOST_DEVICE, "root", *tbf])
        run_step([tc, "-n", parent, "qdisc", "add", "dev", h.peer, "root", *tbf])


def namespace_pids(netns: str, ip: str) -> list[int]:
    proc = subprocess.run([ip, "netns", "pids", netns], capture_output=True, text=True, timeout=60)
    mine = {os.getpid(), os.getppid()}
    return [int(w) for w in proc.stdout.split() if w.isdigit() and int(w) not in mine]


def alive(pid: int) -> bool:
    """Running, not ended (a zombie waiting for its parent has let go of its namespace)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def kill_processes(namespaces: list[str], ip: str) -> int:
    """Ends the processes left in the namespaces (TERM, then KILL after 3 s); their number."""
    pids = sorted({pid for ns in namespaces for pid in namespace_pids(ns, ip)})
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and any(alive(pid) for pid in pids):
            time.sleep(0.02)
        if not any(alive(pid) for pid in pids):
            break
    return len(pids)


def teardown(name: str, directory: Path, ip: str) -> tuple[list[str], list[str]]:
    """Removes cluster NAME whatever state it is in: (what was removed, what could not be)."""
    removed: list[str] = []
    problems: list[str] = []
    namespaces = cluster_namespaces(name)
    killed = kill_processes(namespaces, ip) if namespaces else 0
    if killed:
        removed.append(f"{killed} process{'es' if killed > 1 else ''} left in its namespaces")
    for ns in namespaces:
        # `ip netns del` unmounts and unlinks; a file that was never mounted (an up killed
        # between the two) is only unlinked
        proc = subprocess.run([ip, "netns", "del", ns], capture_output=True, text=True, timeout=60)
        path = NETNS_DIR / ns
        if path.exists():
            try:
                path.unlink()
            except OSError as e:
                problems.append(f"network namespace {ns}: {proc.stderr.strip() or e.strerror}")
                continue
        removed.append(f"network namespace {ns}")
    if directory.is_dir():
        for fn in STATE_FILES:
            (directory / fn).unlink(missing_ok=True)
        for tmp in directory.glob(".*.tmp"):  # write_text's, from an up killed while writing
            tmp.unlink(missing_ok=True)
        try:
            directory.rmdir()
            removed.append(f"state directory {directory}")
        except OSError as e:
            # only what `up` writes is removed: a mistaken --state-dir must not cost a directory
            problems.append(f"state directory {directory} is not empty, left in place: {e.strerror}")
        if directory.parent == DEFAULT_STATE_DIR:
            with contextlib.suppress(OSError):  # the last cluster there: /run as it was
                directory.parent.rmdir()
    return removed, problems


def qdisc_counters(netns: str, device: str, tc: str) -> dict[str, int] | None:
    """The tbf's counters (bytes, packets, drops, overlimits) on a device; None if it is gone."""
    try:
        proc = subprocess.run(
            [tc, "-s", "-j", "-n", netns, "qdisc", "show", "dev", device], capture_output=True, text=True, timeout=60
        )
        qdiscs = json.loads(proc.stdout) if proc.returncode == 0 else []
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    for q in qdiscs if isinstance(qdiscs, list) else []:
        if isinstance(q, dict) and q.get("kind") == "tbf":
            return {k: int(q.get(k, 0)) for k in ("bytes", "packets", "drops", "overlimits")}
    return None


# ------------------------------------------------------------------ up, down, status


def down_command_line(name: str, state_dir: str | None) -> str:
    """The command that takes cluster NAME down, for messages (--state-dir as the user gave it)."""
    cmd = ["bspkit", "cluster", "down"]
    if name != DEFAULT_NAME:
        cmd += ["--name", name]
    if state_dir:
        cmd += ["--state-dir", state_dir]
    return shlex.join(cmd)


def up(c: Cluster, down_hint: str) -> None:
    """Makes the planned cluster (its tools found): namespaces, bridge, links and shaping, then
    cluster.json, the agent and last the hostfile. A cluster of that name must not exist
    (down_hint: the command that removes it); a step that fails removes what was made."""
    left = cluster_namespaces(c.name)
    if c.directory.exists() or left:
        what = ", ".join([str(c.directory)] * c.directory.exists() + [f"namespace {ns}" for ns in left])
        raise Failure(f"cluster '{c.name}' exists ({what}): run `{down_hint}` first")
    try:
        c.directory.mkdir(parents=True)
        build(c)
        write_text(c.directory / "cluster.json", json.dumps(c.state(), indent=1) + "\n")
        write_text(c.agent, c.agent_text())
        c.agent.chmod(0o755)
        write_text(c.hostfile, c.hostfile_text())  # last: a hostfile means a finished cluster
    except BaseException as e:
        _, problems = teardown(c.name, c.directory, c.tools["ip"])
        cleaned = "what it had made is removed" if not problems else "could not remove: " + "; ".join(problems)
        if isinstance(e, (StepFailed, Failure, OSError)):
            raise Failure(f"cluster up: {e} ({cleaned})") from None
        raise


def _counter_text(q: dict[str, int] | None) -> str:
    if q is None:
        return "(no qdisc)"
    return f"{q['bytes']} B, {q['packets']} pkt, {q['drops']} dropped"


def status_of(directory: Path, tc: str) -> list[str]:
    """One cluster's lines: its shape, links and each host's byte counters each way."""
    try:
        state = json.loads((directory / "cluster.json").read_text())
    except (OSError, ValueError) as e:
        return [f"cluster '{directory.name}' ({directory}): cannot read cluster.json ({e})"]
    have = set(cluster_namespaces(state["name"]))
    complete = (directory / "hostfile").is_file() and state["netns"] in have
    lines = [
        f"cluster '{state['name']}' ({directory}){'' if complete else ' INCOMPLETE: take it down'}: "
        f"{shape(len(state['hosts']), state['ranks_per_host'])}, --map-by {state['map_by']}, links "
        f"{state['rate']} each way (tbf, burst {state['burst_bytes']} bytes), network namespace {state['netns']}",
        f"  {'host':<14} {'address':<12} {'cores':<8} {'sent (host -> bridge)':<34} received (bridge -> host)",
    ]
    for h in state["hosts"]:
        if h["netns"] not in have:
            sent = received = "(namespace missing)"
        else:
            sent = _counter_text(qdisc_counters(h["netns"], h["device"], tc))
            received = _counter_text(qdisc_counters(state["netns"], h["peer"], tc))
        cores = ",".join(map(str, h["cpus"]))
        lines.append(f"  {h['hostname']:<14} {h['address']:<12} {cores:<8} {sent:<34} {received}")
    lines.append(f"  hostfile: {state['hostfile']}")
    return lines


def cluster_directories(base: Path, name: str | None, state_dir: str | None) -> list[Path]:
    """The state directory of cluster NAME under base (Failure where it has none), or without
    a name those of every cluster there."""
    if not name:
        return sorted(p.parent for p in base.glob("*/cluster.json"))
    check_name(name)
    directory = base / name
    if not (directory / "cluster.json").is_file():
        left = cluster_namespaces(name)
        if left:
            raise Failure(
                f"cluster '{name}' is half made (namespaces {', '.join(left)}, no {directory / 'cluster.json'})"
                f": run `{down_command_line(name, state_dir)}`"
            )
        raise Failure(f"no cluster '{name}' ({directory / 'cluster.json'} does not exist)")
    return [directory]


def stray_namespaces(known: set[str]) -> list[str]:
    """bspkit's namespaces in /run/netns of clusters not in `known` (left without state)."""
    try:
        return sorted(e for e in os.listdir(NETNS_DIR) if e.startswith(NETNS_PREFIX) and e.split(".")[1] not in known)
    except OSError:
        return []
