"""The NIC's transmit side serves its classes by the port's VL arbitration table."""

import socket
import threading
from collections import Counter

from traffic.flow_control import FlowControl
from traffic.frames import DATA_CODEC, DATA_HEADER_LEN
from traffic.nic import Nic
from traffic.nic_config import FlowSpec, NicConfig, Workload
from traffic.vl_arbitration import VlArbitration

PEER_MAC = "02:00:00:00:00:02"


def transmit_order(arbitration: VlArbitration | None, frames_per_class: int = 120) -> list[int]:
    """Run a NIC with two backlogged classes (SL0 -> VL0, SL1 -> VL1) over a socketpair;
    the VLs of the frames in the order they left."""
    nic_end, wire = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    payload = 64 - DATA_HEADER_LEN  # one 64-byte weight unit per frame
    flows = tuple(FlowSpec(flow=sl + 1, dst_mac=PEER_MAC, dlid=2, count=frames_per_class,
                           sl=sl, payload=payload) for sl in (0, 1))
    config = NicConfig(iface="test", mode=FlowControl.LOSSY, rate_pps=4000,
                       mac="02:00:00:00:00:01", lid=1, vl_arbitration=arbitration)
    nic = Nic(config, Workload(flows=flows), sock=nic_end)
    nic.until_done = True
    vls: list[int] = []
    wire.settimeout(5)

    def read() -> None:
        while len(vls) < 2 * frames_per_class:
            frame = wire.recv(2048)
            vls.append(DATA_CODEC.unpack(frame)[DATA_CODEC.fields.index("vl")])

    reader = threading.Thread(target=read)
    reader.start()
    try:
        nic.run(10.0)
    finally:
        reader.join(timeout=10)
        nic.close()
        nic_end.close()
        wire.close()
    return vls


def test_weights_3_to_1_give_class_0_three_frames_in_four_while_both_wait():
    vls = transmit_order(VlArbitration(low=((0, 3), (1, 1))))
    assert Counter(vls[:80]) == {0: 60, 1: 20}
    assert Counter(vls) == {0: 120, 1: 120}  # the rest drains once class 0 is done


def test_without_a_table_classes_alternate_frame_by_frame():
    vls = transmit_order(None)
    assert Counter(vls[:80]) == {0: 40, 1: 40}


def test_high_table_with_limit_zero_interleaves_one_high_frame_per_low_frame():
    vls = transmit_order(VlArbitration(high=((1, 255),), low=((0, 255),), high_limit=0))
    assert vls[:10] in ([1, 0] * 5, [0, 1] * 5)


def test_a_class_the_table_does_not_serve_still_drains():
    vls = transmit_order(VlArbitration(low=((0, 1),)), frames_per_class=20)
    assert vls[:20] == [0] * 20 and vls[20:] == [1] * 20
