"""The ledger removes exactly what a run created, even after the run was killed."""

from __future__ import annotations

import subprocess
import sys

from topologies.ledger import Ledger, cleanup_stale, start_time


def test_teardown_stops_recorded_processes(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    ledger = Ledger.create("run-a", tmp_path)
    ledger.add_process(proc.pid, "sleeper")
    assert ledger.teardown() == []
    assert proc.wait(timeout=5) is not None
    assert not (tmp_path / "run-a.json").exists()


def test_stale_ledger_of_a_killed_run_is_cleaned(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Ledger.create("killed-run", tmp_path).add_process(proc.pid, "orphan")
    report = cleanup_stale(tmp_path)
    assert report == ["killed-run: removed 1 processes, 0 interfaces"]
    assert proc.wait(timeout=5) is not None


def test_a_reused_pid_is_left_alone(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ledger = Ledger.create("run-b", tmp_path)
        ledger.processes.append({"pid": proc.pid, "start": 1, "what": "x"})
        assert ledger.teardown() == []
        assert proc.poll() is None, "a process that started at another time is not ours"
    finally:
        proc.kill()
        proc.wait()


def test_the_ledger_of_a_run_still_going_is_left_alone(tmp_path):
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        ledger = Ledger.create("running", tmp_path)
        ledger.owner = {"pid": owner.pid, "start": start_time(owner.pid)}
        ledger.add_process(worker.pid, "switch of a live run")
        assert cleanup_stale(tmp_path) == []
        assert worker.poll() is None, "another live run's switch was not touched"
        owner.kill()
        owner.wait()
        assert cleanup_stale(tmp_path) == ["running: removed 1 processes, 0 interfaces"]
        assert worker.wait(timeout=5) is not None
    finally:
        for p in (owner, worker):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_private_directory_of_the_run_goes_at_teardown(tmp_path):
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "id_ed25519").write_text("secret")
    ledger = Ledger.create("run-keys", tmp_path / "ledgers")
    ledger.add_directory(keys)
    assert Ledger.load(ledger.path).directories == [str(keys)]
    assert ledger.teardown() == []
    assert not keys.exists()
