"""fabric.p4 in the embedded switch, one frame at a time through Switch.process().

process() serves queues at once and gives up on a recirculating packet after a
few passes, so these tests see a held frame as "not transmitted, counted as
held"; release and FIFO order under real timing are in test_hold_netns.py.
"""

from __future__ import annotations

from fabric_harness import (
    FC_CREDIT,
    FC_LOSSY,
    FC_PFC,
    FcConfig,
    credit_frame,
    data_frame,
    psn_of,
)
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

from traffic.frames import CREDIT, pfc_frame

DROP_REASONS = 8
DROP_NO_ROUTE, DROP_HEADROOM = 0, 3
NUM_CLASSES = 8


def idx(port: int, cls: int) -> int:
    return port * NUM_CLASSES + cls


def data_out(outputs: list[tuple[int, bytes]]) -> list[tuple[int, int]]:
    """(port, psn) of the data frames among `outputs`."""
    return [(port, psn_of(f)) for port, f in outputs if f[12:14] == b"\x88\xb5"
            and f[15] == 1]


def pfc_out(outputs: list[tuple[int, bytes]]) -> list[tuple[int, Ether]]:
    return [(port, Ether(f)) for port, f in outputs if f[12:14] == b"\x88\x08"]


def credit_out(outputs: list[tuple[int, bytes]]) -> list[tuple[int, Ether]]:
    return [(port, Ether(f)) for port, f in outputs if f[12:14] == b"\x88\xb5"
            and f[15] == 2]


# ----------------------------------------------------------------- LOSSY, routing


def test_lossy_forwards_by_dlid_and_counts_per_class(fabric):
    fabric.route(5, 2)
    fabric.sl_to_vl(3, 3)
    out = fabric.send(1, data_frame(5, psn=7, sl=3))
    assert data_out(out) == [(2, 7)]
    assert Ether(out[0][1])["LRH"].vl == 3  # the SL -> VL table rewrites the VL
    assert fabric.counter("class_rx", idx(1, 0))[1] == 1  # arrived on VL 0
    assert fabric.counter("class_tx", idx(2, 3))[1] == 1  # left on VL 3


def test_unknown_dlid_is_dropped_and_counted_as_no_route(fabric):
    assert fabric.send(1, data_frame(99)) == []
    assert fabric.counter("FabricIngress.drop_counter",
                          1 * DROP_REASONS + DROP_NO_ROUTE)[1] == 1


def test_fast_reroute_uses_the_backup_while_the_primary_is_down(fabric):
    fabric.route(5, 2, backup=3)
    assert data_out(fabric.send(1, data_frame(5, psn=1))) == [(2, 1)]
    fabric.ports_down(2)
    assert data_out(fabric.send(1, data_frame(5, psn=2))) == [(3, 2)]
    fabric.ports_down()
    assert data_out(fabric.send(1, data_frame(5, psn=3))) == [(2, 3)]


def test_both_ports_down_drops_as_no_route(fabric):
    fabric.route(5, 2, backup=3)
    fabric.route(6, 2)
    fabric.ports_down(2, 3)
    assert fabric.send(1, data_frame(5)) == []
    assert fabric.send(1, data_frame(6)) == []
    assert fabric.counter("FabricIngress.drop_counter",
                          1 * DROP_REASONS + DROP_NO_ROUTE)[1] == 2


# ----------------------------------------------------------------------------- PFC


def test_received_pause_holds_only_that_priority_on_that_port(fabric):
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=10, xon=2, headroom=10))
    fabric.pause_quantum(2, 51200)  # 10 Mb/s
    fabric.route(5, 2)
    fabric.sl_to_vl(3, 3)
    pause = pfc_frame(1 << 3, [0, 0, 0, 0xFFFF, 0, 0, 0, 0])
    assert fabric.send(2, pause) == []  # consumed
    assert fabric.counter("pause_rx", idx(2, 3))[1] == 1

    assert data_out(fabric.send(1, data_frame(5, psn=1, sl=3))) == []  # priority 3: held
    assert fabric.register("fc_queue_tail", idx(2, 3)) == 1  # it took a ticket
    assert data_out(fabric.send(1, data_frame(5, psn=2, sl=0))) == [(2, 2)]  # priority 0 flows
    assert fabric.counter("FabricIngress.drop_counter", 1 * DROP_REASONS + 4)[1] == 0


def test_resume_ends_the_pause(fabric):
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=10, xon=2, headroom=10))
    fabric.route(5, 2)
    fabric.send(2, pfc_frame(1, [0xFFFF] + [0] * 7))
    fabric.send(2, pfc_frame(1, [0] * 8))  # resume before anything was held
    assert data_out(fabric.send(1, data_frame(5, psn=1))) == [(2, 1)]
    assert fabric.counter("pause_rx", idx(2, 0))[1] == 2


def test_crossing_xoff_sends_a_valid_8021qbb_pause_upstream(fabric):
    """Downstream paused -> frames pile up in the buffer of ingress port 1 ->
    at XOFF the switch pauses port 1; beyond the headroom it drops, counted."""
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=3, xon=1, headroom=2))
    fabric.route(5, 2)
    fabric.send(2, pfc_frame(1, [0xFFFF] + [0] * 7))

    pauses = []
    for psn in range(1, 6):
        out = fabric.send(1, data_frame(5, psn=psn))
        assert data_out(out) == []
        pauses += pfc_out(out)
    assert len(pauses) == 1  # once per crossing
    port, frame = pauses[0]
    assert port == 1
    assert frame.dst == "01:80:c2:00:00:01"
    assert frame.type == 0x8808
    pfc = frame[MACControlClassBasedFlowControl]
    assert pfc._op_code == 0x0101
    assert pfc.c0_enabled == 1 and pfc.c0_pause_time == 0xFFFF
    assert not any(getattr(pfc, f"c{i}_enabled") for i in range(1, 8))
    assert fabric.counter("pause_tx", idx(1, 0))[1] == 1
    assert fabric.register("buffer_peak", idx(1, 0)) == 5

    assert fabric.send(1, data_frame(5, psn=6)) == []  # xoff + headroom used up
    assert fabric.counter("FabricIngress.drop_counter",
                          1 * DROP_REASONS + DROP_HEADROOM)[1] == 1


def test_pause_frames_are_not_data(fabric):
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=3, xon=1, headroom=2))
    fabric.send(2, pfc_frame(1, [0xFFFF] + [0] * 7))
    assert fabric.counter("class_rx", idx(2, 0)) == (0, 0)
    assert fabric.counter("FabricIngress.drop_counter", 2 * DROP_REASONS + 1)[1] == 0


def test_a_paced_link_lets_through_only_its_backlog_bound(fabric):
    """The link pacer (links shaped after the pipeline): frames leave while the link's
    virtual queue is under the bound, then wait, ticketed, as if paused."""
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=10, xon=2, headroom=10))
    second = 1_000_000_000  # (set_pace's parameters are bit<32> ns: at most 4.29 s)
    fabric.link_pace(2, second, 5 * second // 2)  # drains nothing within the test
    fabric.route(5, 2)
    fabric.route(6, 3)
    sent = [data_out(fabric.send(1, data_frame(5, psn=psn))) for psn in range(1, 6)]
    assert sent == [[(2, 1)], [(2, 2)], [(2, 3)], [], []]  # queued 0, 1, 2 s: go; 3: wait
    assert fabric.register("fc_queue_tail", idx(2, 0)) == 2  # the two waiting took tickets
    assert fabric.counter("class_tx", idx(2, 0))[1] == 3
    assert data_out(fabric.send(1, data_frame(6, psn=9))) == [(3, 9)]  # port 3: no pacer


def test_without_a_pacer_the_gate_does_not_pace(fabric):
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=10, xon=2, headroom=10))
    fabric.route(5, 2)
    sent = [data_out(fabric.send(1, data_frame(5, psn=psn))) for psn in range(1, 6)]
    assert sent == [[(2, psn)] for psn in range(1, 6)]
    assert fabric.register("pace_drained_ns", 2) == 0


def test_lossy_mode_ignores_pauses(fabric):
    fabric.set_mode(FcConfig(mode=FC_LOSSY))
    fabric.route(5, 2)
    fabric.send(2, pfc_frame(1, [0xFFFF] + [0] * 7))
    assert data_out(fabric.send(1, data_frame(5, psn=1))) == [(2, 1)]


# -------------------------------------------------------------------------- CREDIT


def test_credit_mode_sends_only_within_the_credit_limit(fabric):
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=2, credit_coalesce=1))
    fabric.route(5, 2)
    assert data_out(fabric.send(1, data_frame(5, psn=1))) == [(2, 1)]
    assert data_out(fabric.send(1, data_frame(5, psn=2))) == [(2, 2)]
    out = fabric.send(1, data_frame(5, psn=3))
    assert data_out(out) == []  # no credit left: held
    assert fabric.register("fc_fctbs", idx(2, 0)) == 2
    # ... and it asks the neighbour for its credit limit (op 1)
    requests = [(p, f[CREDIT]) for p, f in credit_out(out) if f[CREDIT].op == 1]
    assert [(p, c.vl, c.fctbs) for p, c in requests] == [(2, 0, 2)]


def test_credit_frames_return_as_the_receive_buffer_drains(fabric):
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=8, credit_coalesce=1))
    fabric.route(5, 2)
    out = fabric.send(1, data_frame(5, psn=1))
    credits = [(p, f[CREDIT]) for p, f in credit_out(out)]
    assert [(p, c.op, c.vl) for p, c in credits] == [(1, 0, 0)]
    # received 1 block (ABR = 1), buffer empty again: FCCL = 1 + 8
    assert credits[0][1].fccl == 9
    assert fabric.counter("credit_tx", idx(1, 0))[1] == 1
    assert fabric.counter("class_rx", idx(1, 0))[1] == 1
    assert fabric.counter("credit_rx", idx(1, 0))[1] == 0


def test_a_credit_frame_sets_the_credit_limit_and_is_consumed(fabric):
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=1, credit_coalesce=1))
    fabric.route(5, 2)
    assert fabric.send(2, credit_frame(vl=0, fccl=3)) == []
    assert fabric.register("fc_fccl", idx(2, 0)) == 3
    assert fabric.counter("credit_rx", idx(2, 0))[1] == 1
    sent = [psn for psn in range(1, 6) if data_out(fabric.send(1, data_frame(5, psn=psn)))]
    assert sent == [1, 2, 3]


def test_credit_counters_wrap_modulo_4096(fabric):
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=4, credit_coalesce=1))
    fabric.route(5, 2)
    fabric.sw.register_write("fc_fctbs", idx(2, 0), 4094)
    fabric.send(2, credit_frame(vl=0, fccl=(4094 + 2) % 4096))  # 2 blocks of credit
    sent = [psn for psn in range(1, 4) if data_out(fabric.send(1, data_frame(5, psn=psn)))]
    assert sent == [1, 2]
    assert fabric.register("fc_fctbs", idx(2, 0)) == 0


def test_a_credit_request_is_answered_with_our_fccl(fabric):
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=6, credit_coalesce=4))
    out = fabric.send(3, credit_frame(vl=2, fccl=0, fctbs=17, op=1))
    credits = [(p, f[CREDIT]) for p, f in credit_out(out)]
    assert [(p, c.op, c.vl, c.fccl) for p, c in credits] == [(3, 0, 2, (17 + 6) % 4096)]


def test_two_switches_in_credit_mode_keep_a_link_flowing(compiled):
    """A's port 2 is cabled to B's port 1, B's port 2 to a host that returns a
    credit per frame: CREDIT frames flow back hop by hop, so A keeps sending far
    past its initial credit without a single drop or hold."""
    from fabric_harness import Fabric

    a, b = Fabric(compiled[0]), Fabric(compiled[0])
    for switch in (a, b):
        switch.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=2, credit_coalesce=1))
        switch.route(5, 2)
    delivered = []
    for psn in range(1, 21):
        for port, frame in a.send(1, data_frame(5, psn=psn)):
            if port != 2:
                continue  # A's credits to the sender on its port 1
            for b_port, b_frame in b.send(1, frame):
                if b_port == 1:
                    assert a.send(2, b_frame) == []  # a credit frame, consumed by A
                elif data_out([(b_port, b_frame)]):
                    delivered.append(psn_of(b_frame))
                    b.send(2, credit_frame(vl=0, fccl=(len(delivered) + 2) % 4096))
    assert delivered == list(range(1, 21))
    assert a.register("fc_fctbs", idx(2, 0)) == 20
    assert a.register("fc_fccl", idx(2, 0)) == 22  # B's ABR 20 + 2 free blocks
    assert b.counter("credit_tx", idx(1, 0))[1] == 20


def test_abr_counts_every_frame_received_and_resyncs_only_to_a_request(fabric):
    # IB's ABR counts every block received, so a frame dropped here (no route, no room)
    # does not shrink the neighbour's credit. An update's FCTBS is not trusted: on a
    # tc-shaped link it overtook data still queued after the sender's pipeline. A
    # request keeps its place among the data: ABR resyncs to its FCTBS (frames the
    # neighbour sent and we never received, lost on a cut link), and it is answered.
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=8, credit_coalesce=1))
    fabric.route(5, 2)
    fabric.send(1, data_frame(5, psn=1))
    fabric.send(1, data_frame(99, psn=2))  # no route: dropped before admission
    assert fabric.register("fc_abr", idx(1, 0)) == 2
    assert fabric.send(1, credit_frame(vl=0, fccl=40, fctbs=9)) == []  # an update
    assert fabric.register("fc_abr", idx(1, 0)) == 2
    assert fabric.register("fc_fccl", idx(1, 0)) == 40
    answer = fabric.send(1, credit_frame(vl=0, fccl=40, fctbs=5, op=1))  # a request
    assert fabric.register("fc_abr", idx(1, 0)) == 5
    [(port, frame)] = answer
    assert port == 1 and Ether(frame)[CREDIT].op == 0
    assert Ether(frame)[CREDIT].fccl == 5 + 8  # ABR + free (frame 1 has left)


# ----------------------------------------------------------------- QoS: class queues


def test_tx_queues_puts_a_data_frame_in_the_queue_of_its_vl(fabric):
    from p4switch.runtime_api import ActionCall

    tm = fabric.sw.tm
    tm.nprio = 8  # as --priority-queues 8
    queued = []
    enqueue = tm.enqueue
    tm.enqueue = lambda port, S, now: queued.append((port, S[tm.s_prio])) or enqueue(port, S, now)
    fabric.sw.port_set_params(2, rate_pps=1000)  # rate-limited: frames go through the queues
    fabric.route(5, 2)
    fabric.sl_to_vl(3, 3)
    assert data_out(fabric.send(1, data_frame(5, psn=1, sl=3))) == [(2, 1)]
    assert queued == [(2, 0)]  # tx_queues off (the default): one queue
    fabric.sw.table_set_default("FabricIngress.tx_queues",
                                ActionCall("FabricIngress.set_tx_queues", (1,)))
    assert data_out(fabric.send(1, data_frame(5, psn=2, sl=3))) == [(2, 2)]
    assert queued[1:] == [(2, 3)]  # priority = VL 3


# ----------------------------------------------------------------- partitions


DROP_PKEY = 7


def test_partitions_are_enforced_at_host_facing_ports_and_violations_counted(fabric):
    fabric.route(2, 2)
    fabric.route(1, 1)
    # port 1: host A, full member of 0x0001; port 2: host B, limited member of 0x0001
    # and full member of 0x0002; port 3 leads to another switch (not checked)
    fabric.partition_ports({1: {0x0001: True}, 2: {0x0001: False, 0x0002: True}})
    assert data_out(fabric.send(1, data_frame(2, psn=1, pkey=0x8001))) == [(2, 1)]
    assert data_out(fabric.send(2, data_frame(1, psn=2, pkey=0x0001))) == [(1, 2)]  # A full
    violations = [
        (1, data_frame(2, psn=3, pkey=0x8002)),  # A is not in 0x0002
        (1, data_frame(2, psn=4, pkey=0x0001)),  # limited to limited
        (2, data_frame(1, psn=5, pkey=0x8001)),  # B claims a full membership it lacks
        (3, data_frame(2, psn=6, pkey=0x0001)),  # from the fabric: limited sender to limited B
        (3, data_frame(1, psn=7, pkey=0x8002)),  # from the fabric: A is not in 0x0002
        (1, data_frame(2, psn=8)),               # the default partition, not configured here
    ]
    for port, frame in violations:
        assert data_out(fabric.send(port, frame)) == []
    assert data_out(fabric.send(3, data_frame(2, psn=9, pkey=0x0002))) == [(2, 9)]  # B full
    counted = {p: fabric.counter("FabricIngress.drop_counter", p * DROP_REASONS + DROP_PKEY)[1]
               for p in (1, 2, 3)}
    assert counted == {1: 3, 2: 1, 3: 2}  # every violation, at the port it came in on


def test_without_partitions_any_pkey_is_forwarded(fabric):
    fabric.route(2, 2)
    assert data_out(fabric.send(1, data_frame(2, psn=1, pkey=0x1234))) == [(2, 1)]


def test_the_step_counters_give_the_flow_control_registers(fabric):
    """bmv2 reads counters only: the registers derived from them match the registers."""
    from controller.readout import REGISTER_COUNTERS, registers_from_counters

    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=2, credit_coalesce=1))
    fabric.route(5, 2)
    for psn in range(1, 5):  # two go, two wait for credit (tickets taken, buffer held)
        fabric.send(1, data_frame(5, psn=psn))
    for port in (1, 2):
        counts = {name: fabric.counter(name, idx(port, 0))[1] for name in REGISTER_COUNTERS}
        derived = registers_from_counters(counts)
        derived.pop("blocked_ns")  # in quanta: tests/fabric/test_hold_netns.py, timed
        assert derived == {name: fabric.register(name, idx(port, 0)) for name in derived}
    assert registers_from_counters(
        {name: fabric.counter(name, idx(1, 0))[1] for name in REGISTER_COUNTERS}
    )["fc_buffer"] == 2  # the two frames still held for input 1


def test_the_readout_counts_blocked_time_in_the_quantum_fabric_p4_uses():
    import re
    from pathlib import Path

    from controller.readout import BLOCKED_QUANTUM_NS

    source = (Path(__file__).parents[2] / "p4src" / "include" / "telemetry.p4").read_text()
    shift = re.search(r"BLOCKED_QUANTUM_SHIFT\s*=\s*(\d+);", source)
    assert shift and BLOCKED_QUANTUM_NS == 1 << int(shift.group(1))
