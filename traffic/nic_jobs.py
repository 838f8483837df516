"""What the NIC's transmit queues hold: flows being sent and RC retransmissions."""

from __future__ import annotations

from traffic.frames import (
    DATA_CODEC,
    ETHERTYPE_FABRIC,
    OPCODE_UD,
    Kind,
    mac_to_int,
)
from traffic.nic_config import (
    FlowSpec,
)
from traffic.sender import APP_LEN, BTH_LEN


class TxJob:
    """A flow being transmitted: the frame template and how far it got."""

    __slots__ = ("spec", "vl", "values", "payload", "sent", "chunks", "fpc", "first_ns",
                 "done_ns", "acked", "acked_ns")

    def __init__(self, spec: FlowSpec, vl: int, src_mac: int, slid: int,
                 opcode: int = OPCODE_UD, sl: int | None = None) -> None:
        self.spec = spec
        self.vl = vl
        values = {
            "dst_addr": mac_to_int(spec.dst_mac), "src_addr": src_mac,
            "ether_type": ETHERTYPE_FABRIC, "vl": vl, "sl": spec.sl if sl is None else sl, "kind": Kind.DATA,
            "dlid": spec.dlid, "slid": slid, "pkt_len": BTH_LEN + APP_LEN + spec.payload,
            "opcode": opcode, "pkey": spec.pkey, "dest_qp": spec.dest_qp, "psn": 0, "flow_id": spec.flow,
            "coll_id": spec.coll_id, "step": spec.step, "chunk": 0, "send_ts": 0,
        }
        self.values = [int(values[name]) for name in DATA_CODEC.fields]
        self.payload = bytes(spec.payload)
        self.sent = 0
        self.chunks = spec.chunks
        self.fpc = max(1, spec.frames_per_chunk)
        self.first_ns: int | None = None
        self.done_ns: int | None = None  # every frame sent once
        self.acked = 0  # RC: frames acknowledged
        self.acked_ns: int | None = None  # RC: every frame acknowledged

    def chunk_of(self, i: int) -> int:
        return i if self.chunks is None else self.chunks[i // self.fpc]


class Retransmission:
    """RC go-back-N: the flow's unacknowledged frames, sent again in PSN order.

    While it runs it stands in the class queue in place of the flow's jobs
    (parked), so that no new PSN overtakes a retransmitted one."""

    __slots__ = ("flow", "vl", "entries", "pos", "parked", "paused")

    def __init__(self, flow: int, vl: int, entries: list, paused: bool = False) -> None:
        self.flow = flow
        self.vl = vl
        self.entries = entries  # [(psn, job, frame index, first send ns)]
        self.pos = 0
        self.parked: list[TxJob] = []
        self.paused = paused  # started by a timeout while the flow's class was held


PSN_I = DATA_CODEC.fields.index("psn")
CHUNK_I = DATA_CODEC.fields.index("chunk")
TS_I = DATA_CODEC.fields.index("send_ts")
ACK_FIELDS = {name: DATA_CODEC.fields.index(name)
               for name in ("dst_addr", "vl", "sl", "dlid", "flow_id", "psn", "chunk", "send_ts",
                           "pkey", "step")}


