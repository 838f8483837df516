"""A link fault on a host's own cable takes its interface down: the NIC's sends fail with
ENETDOWN while it lasts, and its next receive reports it once. The NIC keeps going, as
over a cut cable: the frames are lost on the failed link (logged as sent, counted in
`tx_link_down`), and the rest follows once it is up."""

import errno
import socket
import threading

from traffic.flow_control import FlowControl
from traffic.nic import Nic
from traffic.nic_config import FlowSpec, NicConfig, Workload

PEER_MAC = "02:00:00:00:00:02"
FRAMES = 60
DOWN = range(20, 35)  # the sends that find the interface down


class DownOnce:
    """The NIC's socket, whose first receive reports the interface going down, as an
    AF_PACKET socket does (its pending error, ENETDOWN, once)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.reported = sock, False

    def recv(self, size: int) -> bytes:
        if not self.reported:
            self.reported = True
            raise OSError(errno.ENETDOWN, "Network is down")
        return self.sock.recv(size)

    def __getattr__(self, name: str):
        return getattr(self.sock, name)


def test_frames_sent_while_the_host_link_is_down_are_lost_on_it_and_the_nic_carries_on():
    nic_end, wire = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    config = NicConfig(iface="test", mode=FlowControl.LOSSY, rate_pps=4000,
                       mac="02:00:00:00:00:01", lid=1)
    flows = (FlowSpec(flow=1, dst_mac=PEER_MAC, dlid=2, count=FRAMES),)
    port = DownOnce(nic_end)
    nic = Nic(config, Workload(flows=flows), sock=port)
    nic.until_done = True
    calls = 0

    def send(frame: bytes) -> int:
        nonlocal calls
        calls += 1
        if calls - 1 in DOWN:
            raise OSError(errno.ENETDOWN, "Network is down")
        return nic_end.send(frame)

    nic._send = send
    arrived: list[bytes] = []
    wire.settimeout(2)

    def read() -> None:
        try:
            while len(arrived) < FRAMES - len(DOWN):
                arrived.append(wire.recv(2048))
        except TimeoutError:
            pass

    wire.send(b"runt")  # something to read: the receive that reports the link down
    reader = threading.Thread(target=read)
    reader.start()
    try:
        summary = nic.run(10.0)
    finally:
        reader.join(timeout=5)
        nic.close()
        nic_end.close()
        wire.close()
    assert summary["sent"] == FRAMES  # every frame left the NIC, as over a cut cable
    assert summary["tx_link_down"] == len(DOWN)
    assert len(arrived) == FRAMES - len(DOWN)
    assert list(nic.sent_psn) == list(range(FRAMES))
    assert port.reported
