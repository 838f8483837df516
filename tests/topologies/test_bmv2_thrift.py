"""bmv2's Thrift runtime API as link_rates and Bmv2Runtime use it, against real
`simple_switch` (built with Thrift; p4ref's simple_switch_grpc is not)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from topologies import link_rates
from topologies.ports import free_tcp_port

pytestmark = pytest.mark.bmv2
TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "fabric"))


@pytest.fixture(scope="module")
def simple_switch(tmp_path_factory):
    """The Thrift port of a simple_switch running fabric.p4 (embedded compiler's JSON)."""
    if not (shutil.which("simple_switch") and shutil.which("simple_switch_CLI")):
        pytest.skip("needs simple_switch and simple_switch_CLI on PATH")
    from fabric_harness import FABRIC_P4

    from p4compiler.compiler import compile_file

    program = compile_file(str(FABRIC_P4)).json
    path = tmp_path_factory.mktemp("ss") / "fabric.json"
    path.write_text(json.dumps(program))
    port = free_tcp_port()
    proc = subprocess.Popen(["simple_switch", "--device-id", "9", "--thrift-port", str(port),
                             str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not link_rates.thrift_listening(port):
            assert proc.poll() is None, "simple_switch exited"
            assert time.monotonic() < deadline, "simple_switch never listened on Thrift"
            time.sleep(0.1)
        yield port
    finally:
        proc.terminate()  # the process this fixture started, by its handle
        proc.wait(timeout=10)


def test_link_rates_go_to_bmv2_queues_when_the_switch_has_thrift(simple_switch):
    rates = [link_rates.PortRate(1, "unused-if", 300, 64),
             link_rates.PortRate(2, "unused-if", 500, 32)]
    assert link_rates.apply(simple_switch, rates) == \
        "bmv2 set_queue_rate/set_queue_depth (Thrift)"


@pytest.mark.timing
def test_a_runtime_session_sets_a_default_action_reads_registers_and_names_refusals(
        simple_switch):
    from controller.bmv2_runtime import Bmv2Runtime, Bmv2RuntimeError

    with Bmv2Runtime(simple_switch) as runtime:
        runtime.set_default_action("FabricIngress.port_liveness",
                                   "FabricIngress.set_ports_down", 1 << 3)
        cells = runtime.register_read("buffer_peak")
        assert len(cells) == 512 * 8 and set(cells) == {0}
        with pytest.raises(Bmv2RuntimeError, match="no_such_register"):
            runtime.register_read("no_such_register")
        started = time.perf_counter()
        runtime.set_queue_rate(1, 1000)
        assert time.perf_counter() - started < 1.0  # a round trip, not a CLI start


def test_nothing_listening_means_no_thrift():
    assert not link_rates.thrift_listening(free_tcp_port())
