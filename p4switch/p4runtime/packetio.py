"""Packet-in / packet-out: the @controller_header metadata <-> header bytes.

The header's fields are laid out MSB-first in P4Info order (the P4 header's
field order), as bmv2's deparser emits and its parser extracts them.
"""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from . import bytestrings
from .errors import invalid
from .p4info import ControllerHeader


def packet_out_frame(header: ControllerHeader | None, msg: p4runtime_pb2.PacketOut) -> bytes:
    """The frame to inject on the CPU port: packet_out header then payload.

    A metadata field the controller leaves out is sent as 0; an unknown id, a
    repeated id or a value wider than its field is INVALID_ARGUMENT.
    """
    if header is None:
        if len(msg.metadata):
            raise invalid("the program has no packet_out controller header, metadata given")
        return msg.payload
    by_id = {f.id: f for f in header.fields}
    values: dict[int, int] = {}
    for md in msg.metadata:
        f = by_id.get(md.metadata_id)
        if f is None:
            raise invalid(f"packet_out: unknown metadata id {md.metadata_id}")
        if md.metadata_id in values:
            raise invalid(f"packet_out: metadata '{f.name}' given twice")
        values[md.metadata_id] = bytestrings.decode(md.value, f.bitwidth, f"packet_out.{f.name}")
    word = 0
    for f in header.fields:
        word = (word << f.bitwidth) | values.get(f.id, 0)
    return word.to_bytes(header.bitwidth // 8, "big") + msg.payload


def packet_in_message(header: ControllerHeader | None, frame: bytes) -> p4runtime_pb2.PacketIn:
    """Split a CPU-port frame into PacketIn metadata (packet_in header) and payload."""
    msg = p4runtime_pb2.PacketIn()
    if header is None:
        msg.payload = frame
        return msg
    nbytes = header.bitwidth // 8
    if len(frame) < nbytes:
        msg.payload = frame
        return msg
    word = int.from_bytes(frame[:nbytes], "big")
    shift = header.bitwidth
    for f in header.fields:
        shift -= f.bitwidth
        md = msg.metadata.add()
        md.metadata_id = f.id
        md.value = bytestrings.encode((word >> shift) & ((1 << f.bitwidth) - 1))
    msg.payload = frame[nbytes:]
    return msg
