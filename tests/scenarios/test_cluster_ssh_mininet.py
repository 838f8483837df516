"""The real-server path, tested on namespace servers: `--servers ssh:ns:3` drives each
namespace server exactly like a real one (every switch, NIC and capture started,
signalled, read and stopped by the server's supervisor over SSH; logs and captures
copied back), so this is the code `--servers HOST1,HOST2` runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabriclab import scenario as sc
from fabriclab.runner import ROOT, run
from topologies.ledger import prefixed_names, start_time
from topologies.remote import SUPERVISOR_LEDGER_DIR
from topologies.targets import Target

pytestmark = [pytest.mark.mininet, pytest.mark.slow]
pytest.importorskip("mininet.examples.cluster")
if not Path("/usr/sbin/sshd").exists():
    pytest.skip("needs sshd (apt-get install openssh-server)", allow_module_level=True)


def _supervisor_ledgers(prefix: str) -> list[Path]:
    return sorted(Path(SUPERVISOR_LEDGER_DIR).glob(f"{prefix}srv*.json"))


def test_incast_in_credit_mode_through_the_supervisors_loses_nothing(tmp_path):
    before = prefixed_names()
    scenario = sc.load("incast").with_overrides("leafspine:2,2,2", "credit", "ssh:ns:3",
                                                "block")
    result = run(scenario, Target.EMBEDDED, tmp_path)
    m = result.metrics
    assert m.error is None, m.error
    assert m.verdict == "pass" and m.lost == 0 and m.received == m.sent > 0, (m.verdict_reasons, m.problems)
    assert m.credit_frames > 0, "credit frames crossed the fabric, tunnels included"
    assert m.cluster["processes"] == "supervisor over ssh"
    assert m.cluster["cross_server_links"] == 4 > 0
    # Everything the processes wrote on the servers was copied into the run directory.
    run_dir = result.run_dir
    for h in ("h1", "h2", "h3", "h4"):
        assert (run_dir / "pcaps" / f"{h}.pcap").stat().st_size > 24, h
        assert json.loads((run_dir / "nics" / f"{h}.summary.json").read_text())["name"] == h
    assert all((run_dir / "logs" / f"s{i}.log").exists() for i in (1, 2, 3, 4))
    prefix = m.run_prefix
    assert _supervisor_ledgers(prefix) == [], "each supervisor stopped all and left"
    assert not list(Path("/tmp").glob(f"flr-{prefix}*")), "the servers' run directories"
    assert prefixed_names() - before == set(), "servers, namespaces and links all removed"


def _alive(p: dict) -> bool:
    try:
        state = Path(f"/proc/{p['pid']}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return start_time(p["pid"]) == p["start"] and state != "Z"


def _ledger_of(prefix: str) -> dict:
    for path in (ROOT / "build" / "ledger").glob("*.json"):
        data = json.loads(path.read_text())
        if data.get("prefix") == prefix:
            return data
    return {}


def _wait_for_switches(before: set[str], deadline_s: float) -> tuple[dict, list[dict]]:
    """The run's ledger and its supervisors' processes, once switches run on a server."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        servers = [n for n in prefixed_names() - before if n.endswith("-srv3")]
        if servers:
            prefix = servers[0][:4]
            remote = []
            for path in _supervisor_ledgers(prefix):
                try:
                    remote += json.loads(path.read_text())["processes"]
                except (OSError, ValueError):
                    continue
            if sum(p["what"].startswith("switch") for p in remote) == 4:
                return _ledger_of(prefix), remote
        time.sleep(0.2)
    return {}, []


def test_a_killed_runner_leaves_nothing_on_any_server_after_cleanup(tmp_path):
    before = prefixed_names()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabriclab.cli", "run", "--scenario", "incast", "--topo",
         "leafspine:2,2,2", "--servers", "ssh:ns:3", "--placement", "block", "--target",
         "embedded", "--results", str(tmp_path)], cwd=ROOT,
        env=dict(os.environ, PYTHONUNBUFFERED="1"), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        ledger, remote = _wait_for_switches(before, 120)
        time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and its session
        proc.wait()
    assert ledger and remote, "the run started its switches through the supervisors"
    assert [e["server"] for e in ledger["remote"]] == ["srv1", "srv2", "srv3"]
    assert any(p["what"].startswith("shell of") for p in remote), "node shells adopted"
    done = subprocess.run([sys.executable, "-m", "fabriclab.cli", "cleanup"], cwd=ROOT,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "could not remove" not in done.stdout, done.stdout
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in remote) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [p for p in remote if _alive(p)] == [], "every supervised process stopped"
    assert [p for p in ledger["processes"] if _alive(p)] == []
    assert _supervisor_ledgers(ledger["prefix"]) == []
    assert not list(Path("/tmp").glob(f"flr-{ledger['prefix']}*"))
    assert prefixed_names() - before == set(), "no namespace, bridge or veth left"


def test_a_link_between_supervised_servers_fails_mid_collective_and_recovers(tmp_path):
    """Agents on the servers report to the SM through SSH reverse forwards of its report
    socket; the link goes down through the servers' supervisors."""
    from tests.scenarios.test_fault_scenarios import ROUTING, _failed_link_on_path

    before = prefixed_names()
    topology = "leafspine:2,2,1"
    link = _failed_link_on_path(topology, "h1", "h2")
    data = sc.load("link-failure-allreduce").as_dict()
    data.update(topology=topology, duration_s=20, routing=ROUTING,
                faults=[{"at_s": 0.1, "kind": "link_down", "target": link}],
                cluster={"servers": "ssh:ns:3", "placement": "block"})
    result = run(sc.parse(data, "cross-server link failure, supervised"), Target.EMBEDDED,
                 tmp_path)
    m = result.metrics
    assert m.error is None, m.error
    assert m.cluster["processes"] == "supervisor over ssh"
    a, b = link.split("-")
    assert m.cluster["node_server"][a] != m.cluster["node_server"][b], "the link is a tunnel"
    assert m.verdict == "pass", (m.verdict, m.verdict_reasons, m.problems)
    assert m.cct_ms is not None and m.lost == 0
    assert m.unexplained_loss <= 0, m.problems
    assert m.recovery_gap_ms is not None, "a flow crossed the failed link"
    assert [f.link for f in m.link_failures] == [link]
    assert any(r.get("event") == "port_down" for r in m.sm_timeline), "the agent's report"
    assert "watching" in (result.run_dir / "logs" / f"agent-{a}.log").read_text(), \
        "the agent's log, copied back from its server"
    assert prefixed_names() - before == set()
