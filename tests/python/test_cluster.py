"""bspkit cluster: the rate and size parsing, the hostfile and agent it writes, --hostfile in
the commands, and (as root) up, status and down on the machine: a shaped link really is that
slow, and down removes a cluster whose up failed or was killed midway."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bspkit import cli
from bspkit.commands._inputs import run_label
from bspkit.console import UsageError
from bspkit.measure import cluster as cl

from conftest import BUILD, missing_dependency, run_bspkit

IS_ROOT = os.geteuid() == 0
MISSING_IPROUTE = [t for t in ("ip", "tc") if not shutil.which(t)]
MISSING_UTIL_LINUX = [t for t in ("unshare", "taskset") if not shutil.which(t)]


def can_make_namespaces() -> str | None:
    """Why this machine cannot make a cluster, or None."""
    if not IS_ROOT:
        return "needs root (network namespaces, veth pairs and tc)"
    if MISSING_IPROUTE:
        return missing_dependency("iproute2", f"no {' or '.join(MISSING_IPROUTE)}")
    if MISSING_UTIL_LINUX:
        return missing_dependency("util-linux", f"no {' or '.join(MISSING_UTIL_LINUX)}")
    probe = subprocess.run(
        ["unshare", "--net", "sh", "-c", "ip link add name bkt0 type veth peer name bkt1 && "
         "tc qdisc add dev bkt0 root tbf rate 1gbit burst 64kb latency 50ms"],
        capture_output=True, text=True,
    )  # fmt: skip
    return None if probe.returncode == 0 else f"cannot make a namespace with a tbf-shaped veth: {probe.stderr.strip()}"


WHY_NOT = can_make_namespaces()
needs_namespaces = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))


# ---------------------------------------------------------------------- values (no root)


@pytest.mark.parametrize(
    ("text", "bits"),
    [
        ("1gbit", 10**9),
        ("100mbit", 10**8),
        ("1.5gbit", 1_500_000_000),
        ("125mbps", 10**9),  # bytes per second
        ("10GBit", 10**10),
        ("1gibit", 2**30),
        ("8bit", 8),
    ],
)
def test_parse_rate(text: str, bits: int) -> None:
    assert cl.parse_rate(text) == bits


@pytest.mark.parametrize(("text", "why"), [("1000", "give a unit"), ("fast", "not a rate"), ("1gb", "unknown unit"),
                                           ("0gbit", "positive"), ("-1gbit", "not a rate"), ("", "not a rate")])  # fmt: skip
def test_parse_rate_refuses(text: str, why: str) -> None:
    with pytest.raises(UsageError, match=why):
        cl.parse_rate(text)


def test_sizes_and_the_default_burst() -> None:
    assert cl.parse_size("250000") == 250000
    assert cl.parse_size("256kb") == 256 * 1024
    assert cl.parse_size("2mb") == 2 * 2**20
    assert cl.parse_size("64kbit") == 8192
    with pytest.raises(UsageError):
        cl.parse_size("lots")
    # 2 ms of the rate, at least 64 KiB
    assert cl.default_burst(10**9) == 250000
    assert cl.default_burst(10**10) == 2_500_000
    assert cl.default_burst(10**7) == 64 * 1024
    assert [cl.format_rate(b) for b in (10**9, 1_500_000_000, 10**8, 2500, 12)] == [
        "1gbit",
        "1.5gbit",
        "100mbit",
        "2.5kbit",
        "12bit",
    ]


def test_host_cores() -> None:
    # host k gets the k-th run of R cores, wrapping around the cores there are
    assert [cl.host_cpus(k, 2, [0, 1, 2, 3, 4, 5, 6, 7]) for k in range(2)] == [(0, 1), (2, 3)]
    assert [cl.host_cpus(k, 2, [0, 1]) for k in range(2)] == [(0, 1), (0, 1)]
    assert [cl.host_cpus(k, 1, [4, 6]) for k in range(3)] == [(4,), (6,), (4,)]
    assert cl.host_cpus(0, 3, [0, 1]) == (0, 1)


def a_plan(tmp_path: Path, hosts: int = 2, ranks: int = 2, cores: list[int] | None = None, **tools: str) -> cl.Cluster:
    return cl.plan(
        "t1",
        hosts,
        ranks,
        10**9,
        None,
        "node",
        tmp_path,
        cores if cores is not None else [0, 1, 2, 3],
        {"ip": "/sbin/ip", "tc": "/sbin/tc", "unshare": "/bin/unshare", "taskset": "/bin/taskset", **tools},
    )


def test_hostfile(tmp_path: Path) -> None:
    c = a_plan(tmp_path)
    text = c.hostfile_text()
    lines = text.splitlines()
    assert [ln for ln in lines if not ln.startswith("#")] == ["10.200.0.1 slots=2", "10.200.0.2 slots=2"]
    assert "# bspkit-cluster-netns: bspkit.t1" in lines
    args_line = next(ln for ln in lines if ln.startswith("# bspkit-cluster-mpirun-args: "))
    args = args_line.split(": ", 1)[1].split()
    assert args == c.mpirun_args()
    assert args[args.index("plm_rsh_agent") + 1] == str(tmp_path.absolute() / "t1" / "agent")
    assert args[args.index("--bind-to") + 1] == "none" and args[args.index("--map-by") + 1] == "node"
    assert args[args.index("btl") + 1] == "self,vader,tcp" and args[args.index("osc") + 1] == "^ucx"
    assert "--bind-to core" not in args_line
    # 4 ranks on 4 cores: no yielding; on 2 cores they must yield
    assert "mpi_yield_when_idle" not in args
    assert "mpi_yield_when_idle" in a_plan(tmp_path, cores=[0, 1]).mpirun_args()
    # the name is the key bsprun and `bspkit run` find the cluster by
    (tmp_path / "hf").write_text(text)
    assert cl.name_of_hostfile(tmp_path / "hf") == "t1"
    (tmp_path / "plain").write_text("node1 slots=4\n")
    assert cl.name_of_hostfile(tmp_path / "plain") is None


def test_state_and_names(tmp_path: Path) -> None:
    c = a_plan(tmp_path, hosts=3, ranks=1)
    state = c.state()
    assert state["netns"] == "bspkit.t1" and state["rate"] == "1gbit" and state["burst_bytes"] == 250000
    assert [(h["hostname"], h["address"], h["netns"], h["cpus"]) for h in state["hosts"]] == [
        ("t1-h0", "10.200.0.1", "bspkit.t1.h0", [0]),
        ("t1-h1", "10.200.0.2", "bspkit.t1.h1", [1]),
        ("t1-h2", "10.200.0.3", "bspkit.t1.h2", [2]),
    ]
    for bad in ("a.b", "-x", "with space", "x" * 33, ""):
        with pytest.raises(UsageError, match="--name"):
            cl.check_name(bad)
    with pytest.raises(UsageError, match="blanks"):
        cl.plan("t1", 2, 1, 10**9, None, "slot", tmp_path / "a b", [0], {})


def fake_tool(directory: Path, name: str, log: Path, skip: int) -> str:
    """A stand-in for ip/unshare/taskset/hostname: logs its arguments, drops SKIP of them and
    runs the rest (hostname runs nothing)."""
    path = directory / name
    path.write_text(f'#!/bin/sh\necho "{name} $*" >>{log}\nshift {skip}\n[ $# -eq 0 ] || exec "$@"\n')
    path.chmod(0o755)
    return str(path)


def test_agent_runs_the_command_in_the_host(tmp_path: Path) -> None:
    """The agent, with stand-ins for the tools: the host's namespace, name and cores, and the
    command's words joined and run by a shell as ssh would (Open MPI quotes some)."""
    log = tmp_path / "log"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tools = {
        "ip": fake_tool(bindir, "ip", log, 3),  # ip netns exec NS ...
        "unshare": fake_tool(bindir, "unshare", log, 1),  # unshare --uts ...
        "taskset": fake_tool(bindir, "taskset", log, 2),  # taskset -c CPUS ...
    }
    fake_tool(bindir, "hostname", log, 1)
    c = a_plan(tmp_path, cores=[0, 1, 2, 3], **tools)
    agent = tmp_path / "agent"
    agent.write_text(c.agent_text())
    agent.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}"}
    out = subprocess.run(
        [str(agent), "10.200.0.2", "printf", "'%s|'", "a", '"b c"'], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "a|b c|"
    assert log.read_text().splitlines() == [
        "ip netns exec bspkit.t1.h1 /bin/unshare --uts /bin/taskset -c 2,3 /bin/sh -c hostname t1-h1 && exec printf "
        "'%s|' a \"b c\"".replace("/bin/unshare", tools["unshare"]).replace("/bin/taskset", tools["taskset"]),
        f"unshare --uts {tools['taskset']} -c 2,3 /bin/sh -c hostname t1-h1 && exec printf '%s|' a \"b c\"",
        "taskset -c 2,3 /bin/sh -c hostname t1-h1 && exec printf '%s|' a \"b c\"",
        "hostname t1-h1",
    ]
    bad = subprocess.run([str(agent), "10.9.9.9", "true"], capture_output=True, text=True, env=env)
    assert bad.returncode == 255 and "'10.9.9.9' is not a host of cluster 't1'" in bad.stderr


def test_usage_errors_come_first() -> None:
    """Usage errors (exit 2) are found before root is asked for."""
    r = run_bspkit("cluster", "up", "--hosts", "2", "--rate", "1000")
    assert r.returncode == 2 and "give a unit" in r.stderr
    r = run_bspkit("cluster", "up", "--hosts", "2", "--rate", "1gbit", "--name", "a.b")
    assert r.returncode == 2 and "--name" in r.stderr
    r = run_bspkit("cluster")
    assert r.returncode == 2


def as_user(*args: str) -> list[str]:
    """The command as user nobody when we are root (setpriv), else as ourselves."""
    if IS_ROOT and shutil.which("setpriv"):
        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *args]
    return list(args)


@pytest.mark.skipif(
    IS_ROOT and not shutil.which("setpriv"), reason=missing_dependency("util-linux", "root, and no setpriv to drop it")
)
def test_without_root_one_clear_message(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(cl.__file__).parents[1])}
    for action in (["up", "--hosts", "2", "--rate", "1gbit"], ["down"], ["status"]):
        r = subprocess.run(
            as_user(sys.executable, "-m", "bspkit", "cluster", *action, "--state-dir", str(tmp_path)),
            capture_output=True,
            text=True,
            env=env,
            cwd="/",
        )
        assert r.returncode == 1, r.stderr
        assert r.stderr.strip().splitlines() == [
            f"bspkit cluster {action[0]}: error: needs root: the emulated cluster is made of network namespaces, veth pairs and tc "
            "qdiscs (run it as root, e.g. sudo bspkit cluster ...)"
        ]


@pytest.mark.skipif(not IS_ROOT, reason="needs root (the check of the tools comes after that of root)")
def test_without_the_tools() -> None:
    r = run_bspkit("cluster", "up", "--hosts", "2", "--rate", "1gbit", env={"PATH": "/nonexistent"})
    assert r.returncode == 1
    assert "needs ip, tc, unshare, taskset (from iproute2 and util-linux)" in r.stderr


# ---------------------------------------------------------------------- --hostfile in the commands


@pytest.mark.parametrize(
    "command", [["probe"], ["run", "inprod"], ["validate", "inprod"], ["imh", "cannon"]], ids=lambda c: c[0]
)
def test_hostfile_is_for_the_mpi_back_ends(
    tmp_path: Path, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost slots=2\n")
    # in this process: the commands' modules are imported once
    assert cli.main([*command, "-n", "2", "-b", "threads", "--hostfile", str(hosts)]) == 2
    assert (
        "--hostfile is for the mpi back ends (-b mpi, mpi-rma or mpi-naive), not -b threads" in capsys.readouterr().err
    )
    if command[0] == "run":
        assert cli.main([*command, "-n", "2", "-b", "mpi", "--hostfile", str(tmp_path / "nohosts")]) == 2
        assert f"--hostfile {tmp_path / 'nohosts'}: no such file" in capsys.readouterr().err


def test_probe_hostfile_and_launcher_exclude_each_other(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost slots=2\n")
    assert cli.main(["probe", "-b", "mpi", "--hostfile", str(hosts), "--launcher", "mpirun -n {p}"]) == 2
    assert "--hostfile is bsprun's" in capsys.readouterr().err


def test_results_on_a_cluster_are_filed_apart(tmp_path: Path) -> None:
    """run_label: the newest probe found for runs on a cluster is one on that cluster."""
    (tmp_path / "hf").write_text(a_plan(tmp_path).hostfile_text())
    (tmp_path / "plain").write_text("node1 slots=2\n")
    assert run_label("mpi", None) == "mpi"
    assert run_label("mpi", tmp_path / "hf") == "mpi@t1"
    assert run_label("mpi-rma", tmp_path / "plain") == "mpi-rma@plain"


HAVE_MPI_BUILD = bool(BUILD and (BUILD / "bin" / "bspalg-inprod").is_file() and (BUILD / "lib" / "bspkit").is_dir())


@pytest.mark.skipif(
    not HAVE_MPI_BUILD or not shutil.which("mpirun"),
    reason=missing_dependency("Open MPI", "no mpirun, or a build without the MPI back ends"),
)
def test_run_passes_the_hostfile_to_mpirun(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """`bspkit run --hostfile F` reaches mpirun: F with one slot cannot hold 2 processes."""
    one = tmp_path / "one-slot"
    one.write_text("localhost slots=1\n")
    rc = cli.main(["run", "inprod", "-n", "2", "-b", "mpi", "--hostfile", str(one), "--size", "1000"])
    err = capfd.readouterr().err
    assert rc == 1, err
    assert f"--hostfile {one}" in err and "slots" in err


# ---------------------------------------------------------------------- on the machine (root)


def leftovers(name: str, state: Path) -> list[str]:
    nss = [e for e in os.listdir(cl.NETNS_DIR) if e == f"bspkit.{name}" or e.startswith(f"bspkit.{name}.")]
    return nss + ([str(state / name)] if (state / name).exists() else [])


@pytest.fixture
def cluster_name(tmp_path: Path):
    """A name for this test's cluster, taken down afterwards whatever happened."""
    name = f"pyt{os.getpid()}"
    yield name
    run_bspkit("cluster", "down", "--name", name, "--state-dir", str(tmp_path / "state"))


TRANSFER = r"""
import socket, sys, time
role, size = sys.argv[1], int(sys.argv[2])
if role == "server":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("10.200.0.2", 5599)); s.listen(1); print("ready", flush=True)
    c, _ = s.accept(); n = 0
    while chunk := c.recv(1 << 16):
        n += len(chunk)
    c.sendall(str(n).encode()); c.close()
else:
    for _ in range(100):
        try:
            c = socket.create_connection(("10.200.0.2", 5599)); break
        except OSError:
            time.sleep(0.05)
    t = time.monotonic(); c.sendall(b"x" * size); c.shutdown(socket.SHUT_WR)
    got = int(c.recv(64)); print(got, time.monotonic() - t)
"""


@needs_namespaces
@pytest.mark.slow
def test_up_status_traffic_down(tmp_path: Path, cluster_name: str) -> None:
    """A 2 x 1 cluster at 20 Mbit/s: its files, a TCP transfer between the hosts as slow as the
    rate says, the byte counters in status, and nothing left after down."""
    state = tmp_path / "state"
    r = run_bspkit(
        "cluster", "up", "--hosts", "2", "--rate", "20mbit", "--name", cluster_name, "--state-dir", str(state)
    )
    assert r.returncode == 0, r.stderr
    d = state / cluster_name
    assert f"bsprun -b mpi -n 2 --hostfile {d / 'hostfile'} PROGRAM" in r.stdout
    assert f"bspkit cluster down --name {cluster_name} --state-dir {state}" in r.stdout
    assert sorted(p.name for p in d.iterdir()) == ["agent", "cluster.json", "hostfile"]
    assert os.access(d / "agent", os.X_OK)
    assert cl.name_of_hostfile(d / "hostfile") == cluster_name
    again = run_bspkit(
        "cluster", "up", "--hosts", "2", "--rate", "1gbit", "--name", cluster_name, "--state-dir", str(state)
    )
    assert again.returncode == 1 and "run `bspkit cluster down" in again.stderr

    size = 1_250_000  # 0.5 s at 20 Mbit/s
    server = subprocess.Popen(
        ["ip", "netns", "exec", f"bspkit.{cluster_name}.h1", sys.executable, "-c", TRANSFER, "server", str(size)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        client = subprocess.run(
            ["ip", "netns", "exec", f"bspkit.{cluster_name}.h0", sys.executable, "-c", TRANSFER, "client", str(size)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.wait(timeout=60)
    got, seconds = client.stdout.split()
    assert int(got) == size
    # the bucket's burst (64 KiB) passes at once; the rest at the rate, TCP's headers too
    assert float(seconds) > 0.85 * (size - 65536) * 8 / 20e6, client.stdout

    st = run_bspkit("cluster", "status", "--state-dir", str(state))
    assert st.returncode == 0, st.stderr
    rows = {ln.split()[0]: ln for ln in st.stdout.splitlines() if ln.strip().startswith(f"{cluster_name}-h")}
    assert set(rows) == {f"{cluster_name}-h0", f"{cluster_name}-h1"}
    assert "20mbit each way" in st.stdout
    # h0 sent the data towards the bridge, and the bridge delivered it to h1
    sent_h0 = int(rows[f"{cluster_name}-h0"].split()[3])
    received_h1 = int(rows[f"{cluster_name}-h1"].split()[-6])
    assert sent_h0 >= size and received_h1 >= size, st.stdout

    down = run_bspkit("cluster", "down", "--name", cluster_name, "--state-dir", str(state))
    assert down.returncode == 0, down.stderr
    assert f"cluster '{cluster_name}' is down" in down.stdout
    assert leftovers(cluster_name, state) == []
    again = run_bspkit("cluster", "down", "--name", cluster_name, "--state-dir", str(state))
    assert again.returncode == 0 and "nothing to remove" in again.stdout


@needs_namespaces
def test_failed_up_removes_what_it_made(tmp_path: Path, cluster_name: str) -> None:
    """tc refuses a burst of 4 GiB (after the namespaces and links are made): up says so, exits
    1 and leaves nothing."""
    state = tmp_path / "state"
    r = run_bspkit(
        "cluster", "up", "--hosts", "2", "--rate", "1gbit", "--burst", "4gb", "--name", cluster_name,
        "--state-dir", str(state),
    )  # fmt: skip
    assert r.returncode == 1
    assert "tc" in r.stderr and 'illegal value for "burst"' in r.stderr and "what it had made is removed" in r.stderr
    assert leftovers(cluster_name, state) == []


@needs_namespaces
@pytest.mark.slow
def test_down_after_a_killed_up(tmp_path: Path, cluster_name: str) -> None:
    """An up killed (SIGKILL) midway leaves namespaces and its state directory: a new up
    refuses, status says it is half made, down removes it all."""
    state = tmp_path / "state"
    env = {**os.environ, "PYTHONPATH": str(Path(cl.__file__).parents[1])}
    up = subprocess.Popen(
        [sys.executable, "-m", "bspkit", "cluster", "up", "--hosts", "40", "--rate", "1gbit", "--name", cluster_name,
         "--state-dir", str(state)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not (cl.NETNS_DIR / f"bspkit.{cluster_name}.h2").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    up.send_signal(signal.SIGKILL)
    up.wait()
    assert (cl.NETNS_DIR / f"bspkit.{cluster_name}.h2").exists(), "up did not get as far as host 2 in 30 s"
    assert not (state / cluster_name / "hostfile").exists(), "up finished before it was killed"
    left = leftovers(cluster_name, state)
    assert f"bspkit.{cluster_name}" in left and str(state / cluster_name) in left

    again = run_bspkit(
        "cluster", "up", "--hosts", "2", "--rate", "1gbit", "--name", cluster_name, "--state-dir", str(state)
    )
    assert again.returncode == 1 and f"cluster '{cluster_name}' exists" in again.stderr
    st = run_bspkit("cluster", "status", "--name", cluster_name, "--state-dir", str(state))
    assert st.returncode == 1 and "half made" in st.stderr

    down = run_bspkit("cluster", "down", "--name", cluster_name, "--state-dir", str(state))
    assert down.returncode == 0, down.stderr
    assert f"removed network namespace bspkit.{cluster_name}.h2" in down.stdout
    assert leftovers(cluster_name, state) == []


@needs_namespaces
def test_down_ends_processes_and_keeps_foreign_files(tmp_path: Path, cluster_name: str) -> None:
    """down ends what still runs in the cluster (a namespace with a process would outlive its
    name), and removes only the files up writes from the state directory."""
    state = tmp_path / "state"
    r = run_bspkit(
        "cluster", "up", "--hosts", "1", "--rate", "1gbit", "--name", cluster_name, "--state-dir", str(state)
    )
    assert r.returncode == 0, r.stderr
    sleeper = subprocess.Popen(["ip", "netns", "exec", f"bspkit.{cluster_name}.h0", "sleep", "300"])
    try:
        (state / cluster_name / "notes.txt").write_text("mine\n")
        down = run_bspkit("cluster", "down", "--name", cluster_name, "--state-dir", str(state))
        assert sleeper.wait(timeout=10) == -signal.SIGTERM
        assert "removed 1 process left in its namespaces" in down.stdout
        assert down.returncode == 1 and "not empty, left in place" in down.stderr
        assert (state / cluster_name / "notes.txt").read_text() == "mine\n"
        assert leftovers(cluster_name, state) == [str(state / cluster_name)]
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
