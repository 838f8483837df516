"""A scenario's `[cluster]` (or `--servers`/`--placement`) turned into servers and a placement.

The placement needs only the server names (`srv1`.. for `ns:N`, the host names
otherwise), so it is made, and reported, before any server exists.

Supervised servers (real servers `HOST1,HOST2`, and namespace servers in
`ssh:ns:N` mode, which take exactly the same path) are checked first (reachable,
root, the project at the same path, python3, mnexec, tcpdump), then each gets a
process supervisor over one SSH session (fabriclab/remote_supervisor.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from topologies.cluster import check_tools
from topologies.description import Fabric
from topologies.ledger import Ledger
from topologies.placement import Placement, place
from topologies.remote import (
    ROOT,
    SUPERVISOR_LEDGER_DIR,
    RemoteHost,
    SupervisorClient,
    cleanup_command,
    supervisor_command,
)
from topologies.servers import (
    ServerError,
    ServerSet,
    make_namespace_servers,
    parse_servers,
    ssh_servers,
    supervised,
    wait_reachable,
)


def server_names(servers: str) -> list[str]:
    kind, what = parse_servers(servers)
    return [f"srv{i}" for i in range(1, what + 1)] if kind == "namespaces" else list(what)


def plan_placement(fabric: Fabric, cluster, seed: int) -> Placement:
    """`cluster` is a fabriclab.scenario.ClusterSpec."""
    return place(fabric, server_names(cluster.servers), cluster.placement, seed)


def make_servers(cluster, ledger: Ledger, run_dir: Path | None = None) -> ServerSet:
    kind, what = parse_servers(cluster.servers)
    if kind == "namespaces":
        servers = make_namespace_servers(what, ledger)
    else:
        config = Path(cluster.ssh_config).expanduser() if cluster.ssh_config else None
        if config is not None and not config.is_file():
            raise ServerError(f"[cluster] ssh_config {config}: no such file")
        servers = ssh_servers(list(what), config)
        wait_reachable(servers, timeout=15)
    try:
        check_tools(servers)
        if supervised(cluster.servers):
            servers.supervised = True
            check_supervised(servers)
            open_supervisors(servers, ledger, run_dir or Path.cwd())
    except BaseException:
        servers.close()
        raise
    return servers


def check_supervised(servers: ServerSet) -> None:
    """Before anything starts there: what a supervised server must have, every problem
    of every server in one clear error."""
    probe = (f"id -u; test -f {ROOT}/fabriclab/remote_supervisor.py && echo project; "
             f"test -x {sys.executable} && echo venv; "
             "for t in python3 mnexec tcpdump ip; do command -v $t >/dev/null && echo $t; done")
    problems = []
    for server in servers.servers:
        done = servers.ssh(server, ["sh", "-c", repr(probe)])
        if done.returncode not in (0, 1) or not done.stdout.strip():
            problems.append(f"{server.name}: SSH failed ({done.stderr.strip() or done.returncode})")
            continue
        lines = done.stdout.split()
        missing = []
        if lines[0] != "0":
            missing.append("root (log in as root: ssh-copy-id root@HOST)")
        if "project" not in lines:
            missing.append(f"the project at {ROOT} (the same path as here)")
        if "venv" not in lines:
            missing.append(f"{sys.executable} (`make setup` in {ROOT})")
        missing += [f"{t}" for t in ("python3", "mnexec", "tcpdump", "ip") if t not in lines]
        if missing:
            problems.append(f"{server.name}: missing {', '.join(missing)}")
    if problems:
        raise ServerError("servers not ready for a run (docs/cluster.md, Real servers): "
                          + "; ".join(problems))


def open_supervisors(servers: ServerSet, ledger: Ledger, run_dir: Path) -> None:
    """One supervisor per server; its cleanup command is in the run's ledger first."""
    servers.run_ledger = ledger
    for server in servers.servers:
        path = f"{SUPERVISOR_LEDGER_DIR}/{ledger.prefix}{server.name}.json"
        ssh = [*servers.ssh_base(), server.name]
        ledger.add_remote(server.name, cleanup_command(ssh, path))
        client = SupervisorClient(server.name, supervisor_command(ssh, path), path)
        ledger.add_process(client.proc.pid, f"ssh to the supervisor on {server.name}")
        host = None
        try:
            client.request("hello", reply_timeout=30)
            host = RemoteHost(server.name, client, f"/tmp/flr-{ledger.prefix}{server.name}")
        finally:
            if host is None:
                client.shutdown(timeout=5)
        host.map_root(run_dir)
        servers.remote[server.name] = host
