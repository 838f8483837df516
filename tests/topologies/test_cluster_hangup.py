"""A node shell's ssh client ends on Mininet's SIGHUP even when the runner was started
under `nohup` (SIGHUP ignored, and an ignored signal stays ignored across exec)."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

cluster = pytest.importorskip("topologies.cluster")


def _survives_hangup(preexec) -> bool:
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        child = subprocess.Popen(["sleep", "30"], preexec_fn=preexec)
    finally:
        signal.signal(signal.SIGHUP, before)
    try:
        child.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 1
        while child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return child.poll() is None
    finally:
        if child.poll() is None:
            child.kill()  # the process this test started, by its handle
        child.wait()


def test_under_nohup_a_plain_child_ignores_the_hangup() -> None:
    assert _survives_hangup(None)


def test_a_node_shell_child_gets_the_default_hangup_back() -> None:
    assert not _survives_hangup(cluster._hangup_ends_it)
