"""The remote process supervisor's protocol, run here as a subprocess (no SSH): the
runner's client (topologies/remote.py) talks to it exactly as over an SSH session."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from topologies.ledger import start_time
from topologies.remote import RemoteError, RemoteHost, SupervisorClient

ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int, start: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return start_time(pid) == start and state != "Z"


def _gone(pid: int, start: int, wait_s: float = 10.0) -> bool:
    deadline = time.monotonic() + wait_s
    while _alive(pid, start):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def supervisor(tmp_path):
    ledger = tmp_path / "ledger" / "srv1.json"
    argv = [sys.executable, "-m", "fabriclab.remote_supervisor", "serve", "--ledger",
            str(ledger)]
    client = SupervisorClient("srv1", argv, str(ledger))
    try:
        yield client, ledger
    finally:
        if client.proc.poll() is None:
            client.shutdown()


def _sleeper(client, what="sleeper") -> tuple[int, int]:
    r = client.request("start", argv=["sleep", "60"], what=what)
    return r["pid"], r["start"]


def test_start_reports_pid_and_start_time_and_the_ledger_lists_it(supervisor):
    client, ledger = supervisor
    pid, start = _sleeper(client)
    assert start == start_time(pid)
    data = json.loads(ledger.read_text())
    assert [(p["pid"], p["start"], p["what"]) for p in data["processes"]] == \
        [(pid, start, "sleeper")]
    assert data["owner"]["pid"] == client.request("hello")["pid"]


def test_signal_reaches_the_process_and_poll_sees_its_exit(supervisor):
    client, _ = supervisor
    pid, start = _sleeper(client)
    client.request("signal", pid=pid, signal="SIGINT")
    assert client.request("wait", pid=pid, timeout=5)["returncode"] == -signal.SIGINT
    assert not _alive(pid, start)


def test_refuses_to_signal_a_pid_it_did_not_start(supervisor):
    client, _ = supervisor
    other = subprocess.Popen(["sleep", "60"])
    try:
        with pytest.raises(RemoteError, match="not started by this supervisor"):
            client.request("signal", pid=other.pid, signal="SIGTERM")
        with pytest.raises(RemoteError, match="not started by this supervisor"):
            client.request("stop", pid=other.pid)
        with pytest.raises(RemoteError, match="not one of"):
            pid, _ = _sleeper(client)
            client.request("signal", pid=pid, signal="SIGSTOP")
        assert other.poll() is None, "the process it did not start is untouched"
    finally:
        other.kill()
        other.wait()


def test_waits_for_a_ready_line_and_reads_files_back(supervisor, tmp_path):
    client, _ = supervisor
    host = RemoteHost("srv1", client, str(tmp_path / "remote"))
    local = tmp_path / "run"
    (local / "flows").mkdir(parents=True)
    (local / "flows" / "h1.json").write_text('{"flows": 3}\n')
    host.map_root(local)
    script = ("import sys, time, pathlib; "
              "data = pathlib.Path(sys.argv[1]).read_text(); time.sleep(0.3); "
              "print('{\"ready\": true}', flush=True); "
              "pathlib.Path(sys.argv[2]).write_text('out:' + data); time.sleep(60)")
    proc = host.popen([sys.executable, "-c", script, str(local / "flows" / "h1.json"),
                       str(local / "logs" / "h1.log")], what="NIC on h1",
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline(timeout=20) == '{"ready": true}\n'
    assert proc.poll() is None
    remote_flow = tmp_path / "remote" / "0" / "flows" / "h1.json"
    assert remote_flow.read_text() == '{"flows": 3}\n', "the input file was pushed"
    deadline = time.monotonic() + 10
    while not (tmp_path / "remote" / "0" / "logs" / "h1.log").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    (local / "logs").mkdir(exist_ok=True)
    assert host.collect() > 0
    assert (local / "logs" / "h1.log").read_text() == 'out:{"flows": 3}\n'
    assert proc.stop() and proc.poll() is not None


def test_eof_on_stdin_stops_everything_it_started(supervisor):
    client, ledger = supervisor
    started = [_sleeper(client, f"p{i}") for i in range(3)]
    adopted = subprocess.Popen(["sleep", "60"], start_new_session=True)
    client.request("adopt", pid=adopted.pid, what="a node's shell")
    client.proc.stdin.close()  # the runner died: its end of the session is gone
    client.proc.wait(timeout=20)
    for pid, start in started:
        assert _gone(pid, start)
    assert adopted.wait(timeout=10) == -signal.SIGTERM
    assert not ledger.exists(), "everything stopped: the ledger is removed"


def test_cleanup_finishes_the_job_after_the_supervisor_was_killed(supervisor):
    client, ledger = supervisor
    pid, start = _sleeper(client)
    os.kill(client.proc.pid, signal.SIGKILL)  # no EOF handling: the supervisor is gone
    client.proc.wait()
    assert _alive(pid, start)
    done = subprocess.run([sys.executable, "-m", "fabriclab.remote_supervisor", "cleanup",
                           "--ledger", str(ledger)], cwd=ROOT, capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"left": []}
    assert _gone(pid, start) and not ledger.exists()


def test_shutdown_reports_and_a_bad_request_gets_an_error_not_a_crash(supervisor):
    client, _ = supervisor
    client.proc.stdin.write(b"not json\n")
    client.proc.stdin.flush()
    with pytest.raises(RemoteError, match="unknown op"):
        client.request("frobnicate")
    with pytest.raises(RemoteError, match="empty argv"):
        client.request("start", argv=[])
    pid, start = _sleeper(client)
    assert client.shutdown() == []
    assert _gone(pid, start)


def test_the_run_ledger_finishes_a_server_through_its_cleanup_command(supervisor, tmp_path):
    """`fabriclab cleanup` after a crash: the run's ledger holds each supervised server's
    cleanup command (over SSH on a real server; run directly here)."""
    from topologies.ledger import Ledger

    client, ledger_path = supervisor
    pid, start = _sleeper(client, "switch s1")
    os.kill(client.proc.pid, signal.SIGKILL)
    client.proc.wait()
    run_ledger = Ledger.create("crashed-run", tmp_path / "runs")
    run_ledger.add_remote("srv1", [sys.executable, "-m", "fabriclab.remote_supervisor",
                                   "cleanup", "--ledger", str(ledger_path)])
    assert Ledger.load(run_ledger.path).remote[0]["server"] == "srv1"
    assert run_ledger.teardown() == []
    assert _gone(pid, start) and not run_ledger.path.exists()


def test_an_unreachable_server_cleanup_is_reported_not_hidden(tmp_path):
    from topologies.ledger import Ledger

    run_ledger = Ledger.create("crashed-run", tmp_path / "runs")
    run_ledger.add_remote("srv9", ["false"])
    left = run_ledger.teardown()
    assert left and "srv9" in left[0] and run_ledger.path.exists()


def test_servers_missing_tools_are_refused_up_front_with_every_problem(monkeypatch):
    from topologies.distributed import check_supervised
    from topologies.servers import Server, ServerError, ServerSet

    servers = ServerSet((Server("a", "10.0.0.1"), Server("b", "10.0.0.2")), "ssh", "10.0.0.9")
    replies = {"a": "0\nproject\nvenv\npython3\nmnexec\ntcpdump\nip\n",
               "b": "1000\npython3\nip\n"}
    monkeypatch.setattr(servers, "ssh", lambda server, cmd, timeout=20: subprocess.
                        CompletedProcess(cmd, 0, replies[server.name], ""))
    with pytest.raises(ServerError) as err:
        check_supervised(servers)
    text = str(err.value)
    assert "a: missing" not in text, "server a has everything"
    for need in ("b: missing root", "the project at", "make setup", "mnexec", "tcpdump"):
        assert need in text


def test_an_unknown_real_server_is_refused_before_anything_starts():
    from topologies.servers import ServerError, ssh_servers

    with pytest.raises(ServerError, match="cannot resolve"):
        ssh_servers(["no-such-server.invalid"])


def test_a_process_started_with_stdin_reads_what_is_written_on_close(supervisor, tmp_path):
    """A NIC's start time goes to its stdin once every NIC is ready (fabriclab/hosts.py)."""
    client, _ = supervisor
    host = RemoteHost("srv1", client, str(tmp_path / "remote"))
    script = "import sys; print('got ' + sys.stdin.readline().strip(), flush=True)"
    proc = host.popen([sys.executable, "-c", script], what="reads stdin",
                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc.stdin.write("start_at 12.5\n")
    proc.stdin.close()
    assert proc.stdout.readline(timeout=20) == "got start_at 12.5\n"
    assert proc.wait(10) == 0
    silent = host.popen(["sleep", "60"], what="no stdin")
    with pytest.raises(RemoteError, match="not started with stdin"):
        client.request("stdin", pid=silent.pid, data="x\n")
    assert silent.stop()


@pytest.mark.parametrize("sig", ["SIGINT", "SIGHUP"])
def test_a_supervisor_started_with_signals_ignored_still_delivers_them(tmp_path, sig):
    """Started from a background job (SIGINT ignored) or under nohup (SIGHUP ignored), the
    supervisor gives its processes the default dispositions back: a signal request ends
    them."""
    ledger = tmp_path / "ledger" / "srv1.json"
    shell = (f'trap "" INT HUP; exec {sys.executable} -m fabriclab.remote_supervisor serve '
             f'--ledger {ledger}')
    client = SupervisorClient("srv1", ["bash", "-c", shell], str(ledger))
    try:
        pid, _start = _sleeper(client)
        client.request("signal", pid=pid, signal=sig)
        assert client.request("wait", pid=pid, timeout=5)["returncode"] == -getattr(signal, sig)
    finally:
        if client.proc.poll() is None:
            client.shutdown()
