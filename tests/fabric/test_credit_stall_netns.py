"""CREDIT mode never strands a held frame: a switch that stalls for longer than
HEAD_LOST_NS (a descheduled process on a loaded machine) must not take its live
queue head for lost, and a frame whose ticket was skipped queues again instead
of recirculating for good while it holds its ingress buffer (the stall of a
link under sustained overload: the upstream never got that credit back).

Needs root; creates only `lkts<port>`/`lktn<port>` veth pairs in the current
namespace and removes them by name afterwards, even when a test fails.
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from fabric_harness import FC_CREDIT, FcConfig, credit_frame, data_frame
from test_hold_netns import Neighbour

PORTS = (1, 2)
HEAD_LOST_S = 1.0  # headers.p4 HEAD_LOST_NS
IN_INDEX, OUT_INDEX = 1 * 8 + 0, 2 * 8 + 0  # (port, class 0)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create veth pairs")


def _remove_links() -> None:
    for port in PORTS:
        subprocess.run(["ip", "link", "del", f"lkts{port}"], capture_output=True)


@pytest.fixture
def held(compiled):
    """A started switch (dlid 5 -> port 2, CREDIT, buffer 4) holding frames 5-8 of
    1-8 from port 1 for want of credit on port 2; and its two neighbours."""
    from fabric_harness import Fabric

    _remove_links()
    fabric = neighbours = None
    try:
        for port in PORTS:
            subprocess.run(["ip", "link", "add", f"lkts{port}", "type", "veth", "peer", "name",
                            f"lktn{port}"], check=True, capture_output=True)
            for end in (f"lkts{port}", f"lktn{port}"):
                subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{end}.disable_ipv6=1"],
                               capture_output=True)
                subprocess.run(["ip", "link", "set", end, "up"], check=True, capture_output=True)
        fabric = Fabric(compiled[0], ports={port: f"lkts{port}" for port in PORTS})
        fabric.route(5, 2)
        fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=4, credit_coalesce=1))
        neighbours = {port: Neighbour(f"lktn{port}") for port in PORTS}
        fabric.sw.start()
        time.sleep(0.2)  # carrier seen up
        for psn in range(1, 9):
            neighbours[1].send(data_frame(5, psn=psn))
        assert neighbours[2].data_psns(0.2) == [1, 2, 3, 4]  # the initial credit
        yield fabric, neighbours
    finally:
        if fabric is not None:
            fabric.sw.stop()
        for n in (neighbours or {}).values():
            n.close()
        _remove_links()


def stall(fabric, seconds: float) -> None:
    """The switch's data plane does nothing for `seconds`, as a descheduled process."""
    with fabric.sw._lock:
        time.sleep(seconds)


def test_a_switch_stalled_longer_than_head_lost_releases_every_held_frame_in_order(held):
    fabric, nb = held
    for _ in range(3):  # whichever held frame comes by first after the stall
        stall(fabric, HEAD_LOST_S + 0.2)
        time.sleep(0.05)
    nb[2].send(credit_frame(vl=0, fccl=8))
    assert nb[2].data_psns(0.5) == [5, 6, 7, 8]
    assert fabric.register("fc_buffer", IN_INDEX) == 0
    assert fabric.sw.tm.recirculating() == 0
    assert fabric.counter("class_rx", IN_INDEX)[1] == fabric.counter("class_tx", OUT_INDEX)[1] == 8


def test_a_live_frame_whose_ticket_was_skipped_queues_again(held):
    fabric, nb = held
    # Tickets 0-3 wait; the head ticket is skipped as if its frame had been lost.
    assert fabric.register("fc_queue_tail", OUT_INDEX) == 4
    fabric.sw.register_write("fc_queue_head", OUT_INDEX, 1)
    time.sleep(0.05)
    nb[2].send(credit_frame(vl=0, fccl=8))
    assert nb[2].data_psns(0.5) == [6, 7, 8, 5]  # 5 went to the back of the queue
    assert fabric.register("fc_buffer", IN_INDEX) == 0
    assert fabric.sw.tm.recirculating() == 0
    assert fabric.register("fc_queue_head", OUT_INDEX) == fabric.register(
        "fc_queue_tail", OUT_INDEX)
