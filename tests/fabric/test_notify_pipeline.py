"""Fault notification in fabric.p4 (p4src/include/notify.p4), one frame at a time.

A switch with no live port left for a DLID drops the frame (no_route) and floods
a NOTIFY for that DLID out of its switch ports (the sender's among them); a switch
that takes a NOTIFY on port p stops using p for that DLID (its backup), and if
that leaves it without a way there, floods the NOTIFY on in turn; until the SM's
next route epoch."""

from __future__ import annotations

from fabric_harness import Fabric, data_frame, notify_frame
from scapy.layers.l2 import Ether

from traffic.frames import LRH, NOTIFY, Kind

DROP_REASONS = 8
DROP_NO_ROUTE = 0
SWITCH_PORTS = (2, 3, 4)  # port 1 faces a host


def data_out(outputs):
    return [port for port, f in outputs if f[12:14] == b"\x88\xb5" and f[15] == Kind.DATA]


def notifies(outputs):
    return [(port, Ether(f)) for port, f in outputs
            if f[12:14] == b"\x88\xb5" and f[15] == Kind.NOTIFY]


def test_no_live_port_left_drops_counts_and_notifies_every_switch_neighbour(fabric):
    fabric.notify(SWITCH_PORTS, epoch=7)
    fabric.route(5, 2)
    fabric.ports_down(2)
    out = fabric.send(3, data_frame(5))
    assert data_out(out) == []
    assert fabric.counter("FabricIngress.drop_counter", 3 * DROP_REASONS + DROP_NO_ROUTE)[1] == 1
    sent = notifies(out)
    assert sorted(port for port, _f in sent) == [2, 3, 4]  # the sender's port 3 among them
    for port, frame in sent:
        assert frame[LRH].dlid == 5 and frame[NOTIFY].op == 1 and frame[NOTIFY].epoch == 7
        assert frame.src == f"02:00:00:ff:00:0{port}" and len(bytes(frame)) <= 60
    assert fabric.counter("notify_tx", 3)[1] == 1


def test_no_notification_to_a_host_port_or_when_off(fabric):
    fabric.route(5, 2)
    fabric.ports_down(2)
    assert notifies(fabric.send(3, data_frame(5))) == []  # notify_config never written: off
    fabric.notify(SWITCH_PORTS, epoch=1)
    assert notifies(fabric.send(1, data_frame(5))) == []  # port 1 is a host port


def test_a_notified_port_is_down_for_that_dlid_only(fabric):
    fabric.notify(SWITCH_PORTS, epoch=1)
    fabric.route(5, 2, backup=3)
    fabric.route(6, 2, backup=3)
    assert fabric.send(2, notify_frame(5, epoch=1)) == []  # consumed; the backup is alive
    assert fabric.counter("notify_rx", 2)[1] == 1
    assert data_out(fabric.send(1, data_frame(5))) == [3]  # the backup
    assert data_out(fabric.send(1, data_frame(6))) == [2]  # other DLIDs keep the primary


def test_a_notification_that_leaves_no_way_is_flooded_on_at_once(fabric):
    fabric.notify(SWITCH_PORTS, epoch=1)
    fabric.route(5, 2)  # no backup: this switch cannot reach 5 any more
    out = fabric.send(2, notify_frame(5, epoch=1))
    assert sorted(port for port, _f in notifies(out)) == [2, 3, 4]
    assert notifies(fabric.send(2, notify_frame(5, epoch=1))) == []  # once: nothing changed
    fabric.route(6, 2)
    assert notifies(fabric.send(2, notify_frame(6, epoch=2))) == []  # another epoch: ignored
    assert notifies(fabric.send(3, notify_frame(99, epoch=1))) == []  # a DLID we do not route
    assert fabric.counter("FabricIngress.drop_counter", 3 * DROP_REASONS + DROP_NO_ROUTE)[1] == 0


def test_a_notified_switch_without_alternative_drops_and_notifies_again(fabric):
    fabric.notify(SWITCH_PORTS, epoch=1)
    fabric.route(5, 2)
    fabric.send(2, notify_frame(5, epoch=1))
    out = fabric.send(4, data_frame(5))
    assert data_out(out) == []
    assert (4, 5) in [(port, f[LRH].dlid) for port, f in notifies(out)]


def test_primary_and_backup_both_notified_dead(fabric):
    fabric.notify(SWITCH_PORTS, epoch=1)
    fabric.route(5, 2, backup=3)
    fabric.send(2, notify_frame(5, epoch=1))
    fabric.send(3, notify_frame(5, epoch=1))
    out = fabric.send(4, data_frame(5))
    assert data_out(out) == [] and 4 in [p for p, _f in notifies(out)]


def test_a_new_epoch_replaces_the_patch_and_stale_notifications_are_ignored(fabric):
    fabric.notify(SWITCH_PORTS, epoch=1)
    fabric.route(5, 2, backup=3)
    fabric.send(2, notify_frame(5, epoch=1))
    assert data_out(fabric.send(1, data_frame(5))) == [3]
    fabric.notify(SWITCH_PORTS, epoch=2)  # the SM's global reroute is installed
    assert data_out(fabric.send(1, data_frame(5))) == [2]
    fabric.send(2, notify_frame(5, epoch=1))  # from before the reroute
    assert data_out(fabric.send(1, data_frame(5))) == [2]
    assert fabric.counter("notify_rx", 2)[1] == 2  # both counted, the stale one ignored


def test_notify_copies_take_the_queue_the_sm_gives_them(compiled):
    # 8 priority queues, NOTIFY in the top one (the runs' setting): every copy leaves;
    # a priority beyond the switch's queues is dropped and counted, as bmv2 drops it
    fabric = Fabric(compiled[0], priority_queues=8)
    fabric.notify(SWITCH_PORTS, epoch=3, queue=7)
    fabric.route(5, 2)
    fabric.ports_down(2)
    assert sorted(p for p, _f in notifies(fabric.send(3, data_frame(5)))) == [2, 3, 4]
    four = Fabric(compiled[0], priority_queues=4)
    four.notify(SWITCH_PORTS, epoch=3, queue=7)
    four.route(5, 2)
    four.ports_down(2)
    assert notifies(four.send(3, data_frame(5))) == []
    assert sum(four.sw.tm.ports[p].drops.bad_priority for p in SWITCH_PORTS) == 3


def test_a_notification_from_a_port_off_the_route_takes_no_place_in_the_record(fabric):
    """The record holds two ports per DLID, the route's primary and backup. An
    aggregation switch of fattree:6 has three cores, and all three notify when the
    pod's aggregation below loses its down-link; the one the route does not use
    took a slot, the third notification then overwrote the primary's, and the switch
    sent into the dead core again (230 ms gaps in about one 45-switch run in five)."""
    fabric.notify(SWITCH_PORTS, epoch=1)
    fabric.route(5, 2, backup=3)
    fabric.send(4, notify_frame(5, epoch=1))  # not a way this switch routes 5
    fabric.send(2, notify_frame(5, epoch=1))
    assert data_out(fabric.send(1, data_frame(5))) == [3]
    out = fabric.send(3, notify_frame(5, epoch=1))  # now no way is left: flood on
    assert sorted(port for port, _f in notifies(out)) == [2, 3, 4]
    out = fabric.send(1, data_frame(5))
    assert data_out(out) == []
    assert fabric.counter("FabricIngress.drop_counter", 1 * DROP_REASONS + DROP_NO_ROUTE)[1] == 1
