"""The hold loop (p4src/include/hold_loop.p4) on the embedded switch, through
Switch.process(): configured as the SM does on bmv2, a held frame leaves by the hold
out port with the hold header carrying its FL_HOLD fields, and when it comes back in
by the hold in port it is restored and carries on as a recirculated frame would
(still held with its ticket, released in order, or discarded and counted).
Unconfigured (the default), held frames recirculate and nothing leaves by it."""

from __future__ import annotations

from fabric_harness import FC_CREDIT, FcConfig, credit_frame, data_frame, psn_of
from scapy.layers.l2 import Ether

from traffic.frames import BTH, HEADERS, HOLD

NUM_CLASSES = 8
DROP_REASONS = 8
DROP_NOT_FABRIC, DROP_LINK_DOWN = 1, 6
HOLD_BYTES = HEADERS["HOLD"].size


def idx(port: int, cls: int) -> int:
    return port * NUM_CLASSES + cls


def looped(fabric, outputs: list[tuple[int, bytes]]) -> list[bytes]:
    return [f for p, f in outputs if p == fabric.constants.hold_out_port]


def data_on(outputs: list[tuple[int, bytes]], port: int) -> list[int]:
    return [psn_of(f) for p, f in outputs if p == port and f[12:14] == b"\x88\xb5"
            and f[15] == 1]


def held_in_credit_mode(fabric) -> bytes:
    """psn 1 leaves by port 2, psn 2 finds no credit: the frame that goes round."""
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=1, credit_coalesce=1))
    fabric.route(5, 2)
    fabric.hold_loop()
    assert data_on(fabric.send(1, data_frame(5, psn=1)), 2) == [1]
    out = fabric.send(1, data_frame(5, psn=2))
    assert data_on(out, 2) == []
    [frame] = looped(fabric, out)
    return frame


def test_a_held_frame_leaves_by_the_hold_port_with_its_field_list(fabric):
    frame = held_in_credit_mode(fabric)
    hold = HOLD(frame[:HOLD_BYTES])
    assert hold.magic == 0x484C
    assert (hold.is_data, hold.held, hold.has_ticket, hold.ticket) == (1, 1, 1, 0)
    assert (hold.in_port, hold.in_cls, hold.out_port, hold.cls, hold.verdict) == (1, 0, 2, 0, 0)
    assert hold.arrival_ts > 0
    inner = Ether(frame[HOLD_BYTES:])  # the frame itself follows, unchanged
    assert inner[BTH].psn == 2
    assert fabric.counter("tickets_issued", idx(2, 0))[1] == 1


def test_back_from_the_loop_it_waits_again_with_its_ticket_then_leaves_in_order(fabric):
    frame = held_in_credit_mode(fabric)
    port_in = fabric.constants.hold_in_port
    # still no credit: round again, same ticket, nothing sent, no new ticket
    again = looped(fabric, fabric.send(port_in, frame))
    assert len(again) == 1
    hold = HOLD(again[0][:HOLD_BYTES])
    assert (hold.has_ticket, hold.ticket, hold.in_port, hold.out_port) == (1, 0, 1, 2)
    assert fabric.counter("tickets_issued", idx(2, 0))[1] == 1
    # a CREDIT frame from the neighbour on port 2 grants one more block
    assert fabric.send(2, credit_frame(vl=0, fccl=2)) == []
    out = fabric.send(port_in, again[0])
    assert data_on(out, 2) == [2]  # restored: sent as the head of its queue
    assert looped(fabric, out) == []
    assert not any(f[:2] == b"\x48\x4c" for _p, f in out)  # the hold header is gone
    assert fabric.register("fc_queue_head", idx(2, 0)) == 1
    assert fabric.counter("buffer_out", idx(1, 0))[1] == 2


def test_a_held_frame_for_a_dead_port_is_discarded_and_counted_where_it_came_in(fabric):
    frame = held_in_credit_mode(fabric)
    fabric.ports_down(2)
    out = fabric.send(fabric.constants.hold_in_port, frame)
    assert data_on(out, 2) == [] and looped(fabric, out) == []
    assert fabric.counter("FabricIngress.drop_counter",
                          1 * DROP_REASONS + DROP_LINK_DOWN)[1] == 1


def test_anything_else_on_the_hold_in_port_is_dropped(fabric):
    fabric.hold_loop()
    fabric.route(5, 2)
    junk = b"\x00" * HOLD_BYTES + bytes(data_frame(5, psn=9))
    port_in = fabric.constants.hold_in_port
    assert fabric.send(port_in, junk) == []
    assert fabric.counter("FabricIngress.drop_counter",
                          port_in * DROP_REASONS + DROP_NOT_FABRIC)[1] == 1


def test_without_the_configuration_held_frames_recirculate(fabric):
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=1, credit_coalesce=1))
    fabric.route(5, 2)
    fabric.send(1, data_frame(5, psn=1))
    out = fabric.send(1, data_frame(5, psn=2))
    assert data_on(out, 2) == [] and looped(fabric, out) == []
    assert fabric.counter("tickets_issued", idx(2, 0))[1] == 1
