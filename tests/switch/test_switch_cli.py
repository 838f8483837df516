"""The simple_switch_grpc-compatible command line."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time

import pytest
from bmv2json import ethernet_program

from p4switch.cli import UsageError, parse_interface, parse_port_params

REPO = __file__.rsplit("/tests/", 1)[0]


def run_cli(*args: str, timeout: float = 10) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "p4switch.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_port_params_and_interfaces_parse():
    assert parse_interface("3@veth3") == (3, "veth3")
    assert parse_port_params("2:rate_pps=1000,delay_us=50,depth=16") == (
        2, {"rate_pps": 1000.0, "delay_us": 50.0, "depth": 16})
    with pytest.raises(UsageError, match="unknown or malformed 'speed=1'"):
        parse_port_params("2:speed=1")
    with pytest.raises(UsageError, match="expected PORT@IFACE"):
        parse_interface("veth3")


def test_missing_interface_is_one_error_line_and_exit_1():
    r = run_cli("--no-p4", "-i", "1@dpt-nonexistent0", "--grpc-server-addr",
                f"127.0.0.1:{free_port()}")
    assert r.returncode == 1
    assert r.stderr.strip() == ("fabriclab-switch: error: interface 'dpt-nonexistent0' "
                                "does not exist")


def test_taken_grpc_port_is_one_error_line_and_exit_1():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        r = run_cli("--no-p4", "--grpc-server-addr", f"127.0.0.1:{s.getsockname()[1]}")
    finally:
        s.close()
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1 and "not available" in r.stderr


def test_bad_program_is_refused_with_the_element(tmp_path):
    j = ethernet_program().build()
    j["pipelines"][0]["tables"] = [{"name": "t", "match_type": "foo"}]
    j["pipelines"][0]["init_table"] = "t"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(j))
    r = run_cli(str(path), "--grpc-server-addr", f"127.0.0.1:{free_port()}")
    assert r.returncode == 1
    assert "pipelines[0].tables[0]: unknown match_type 'foo'" in r.stderr


@pytest.mark.timing
def test_starts_fast_and_sigterm_exits_0(tmp_path):
    path = tmp_path / "prog.json"
    path.write_text(json.dumps(ethernet_program().build()))
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", "p4switch.cli", str(path), "--thrift-port",
                          "9090", "--", "--grpc-server-addr", f"127.0.0.1:{free_port()}"],
                         stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        lines = [p.stderr.readline(), p.stderr.readline()]
        started = time.monotonic() - t0
        assert any("--thrift-port 9090 ignored" in ln for ln in lines)
        assert any("running" in ln for ln in lines)
        assert started < 2.0  # well under a second unloaded; slack for a busy CI
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=5) == 0
    finally:
        if p.poll() is None:
            p.kill()
