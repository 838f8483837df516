"""Every fabric frame, declared once as data, and the two views derived from it.

`HEADERS` is the one declaration of the fabric's wire formats on the host side
(p4src/include/headers.p4 is the switch side; tests/traffic/test_frames.py
checks that both agree field by field). From it come:

* Scapy layers (`LRH`, `BTH`, `APP`, `CREDIT`, `PROBE`, `HELLO`) for building,
  parsing and printing frames anywhere speed does not matter;
* `FrameCodec`, a struct-based encoder/decoder for a fixed stack of headers,
  used on the hot path (the sender and the trace analysis never call Scapy per
  packet). `DATA_CODEC` is Ethernet + LRH + BTH + APP.

PFC pause frames are IEEE 802.1Qbb MAC control frames; Scapy already has them
(scapy.contrib.mac_control) and `pfc_frame` builds one.
"""

from __future__ import annotations

import enum
import struct
from collections import namedtuple
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.fields import BitField
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

ETHERTYPE_FABRIC = 0x88B5  # IEEE local experimental
ETHERTYPE_MAC_CONTROL = 0x8808
PFC_DST_MAC = "01:80:c2:00:00:01"
PFC_OPCODE = 0x0101
PFC_PAUSE_QUANTA = 0xFFFF  # what a receiver over XOFF sends (p4src: PFC_PAUSE_QUANTA)
CREDIT_DST_MAC = "ff:ff:ff:ff:ff:ff"  # link-local: a CREDIT frame never leaves its link
FC_FRAME_BYTES = 60  # flow-control frames are padded (switch: cut) to the Ethernet minimum


class Kind(enum.IntEnum):
    """LRH `kind`: what follows the local routing header."""

    DATA = 1
    CREDIT = 2
    PROBE = 3
    HELLO = 4


class CreditOp(enum.IntEnum):
    """credit_t `op` (InfiniBand's flow-control packet op: 0 normal, 1 init/request)."""

    NORMAL = 0
    REQUEST = 1  # "tell me your FCCL": the peer resyncs its ABR to our FCTBS and answers


# BTH opcodes (InfiniBand's values). A DATA-kind frame is one of:
OPCODE_UD = 0x00  # unreliable: nobody acknowledges it (the default)
OPCODE_RC_SEND = 0x04  # RC SEND Only: the receiver acknowledges, the sender retransmits
OPCODE_RC_ACK = 0x11  # RC Acknowledge: psn = next PSN expected; APP.chunk = syndrome
SYNDROME_ACK = 0x00
SYNDROME_NAK_SEQ = 0x60  # IB AETH "NAK: PSN sequence error": go back to psn + 1


@dataclass(frozen=True)
class HeaderSpec:
    """One header: its Scapy layer name, its P4 header type and its fields (name, bits)."""

    layer: str
    p4_name: str
    fields: tuple[tuple[str, int], ...]
    doc: str = ""

    @property
    def bits(self) -> int:
        return sum(bits for _, bits in self.fields)

    @property
    def size(self) -> int:
        return self.bits // 8

    def byte_offset(self, name: str) -> int:
        """Offset in bytes of a byte-aligned field within this header."""
        bits = 0
        for field_name, width in self.fields:
            if field_name == name:
                if bits % 8 or width % 8:
                    raise ValueError(f"{self.layer}.{name} is not byte-aligned")
                return bits // 8
            bits += width
        raise KeyError(f"{self.layer} has no field {name!r}")


# The declaration. Order of fields is wire order; widths are in bits.
HEADERS: dict[str, HeaderSpec] = {
    spec.layer: spec
    for spec in (
        HeaderSpec("Ethernet", "ethernet_t",
                   (("dst_addr", 48), ("src_addr", 48), ("ether_type", 16)),
                   "Ethernet II (Scapy's own Ether layer is used for building)"),
        HeaderSpec("LRH", "lrh_t",
                   (("vl", 4), ("sl", 4), ("kind", 8), ("dlid", 16), ("slid", 16),
                    ("pkt_len", 16)),
                   "local routing header, after InfiniBand's LRH; pkt_len = bytes after it"),
        HeaderSpec("BTH", "bth_t",
                   (("opcode", 8), ("dest_qp", 24), ("psn", 32)),
                   "base transport header, after InfiniBand's BTH; psn numbers a flow's frames"),
        HeaderSpec("APP", "app_t",
                   (("flow_id", 32), ("coll_id", 16), ("step", 16), ("chunk", 32),
                    ("send_ts", 64)),
                   "which collective step a chunk belongs to; send_ts is CLOCK_REALTIME ns"),
        HeaderSpec("CREDIT", "credit_t",
                   (("op", 4), ("fctbs", 12), ("vl", 4), ("fccl", 12)),
                   "InfiniBand flow-control packet: absolute counters modulo 4096"),
        HeaderSpec("PROBE", "probe_t",
                   (("origin_guid", 64), ("origin_port", 16), ("seq", 16)),
                   "SM discovery, sent as packet-out of one switch port"),
        HeaderSpec("HELLO", "hello_t", (("guid", 64),), "a host announces itself"),
        HeaderSpec("PFC", "pfc_t",
                   (("opcode", 16), ("class_enable", 16))
                   + tuple((f"quanta{i}", 16) for i in range(8)),
                   "802.1Qbb PFC; Scapy's MACControlClassBasedFlowControl is the layer"),
    )
}

# Headers that are P4Runtime controller metadata, not frames on a wire.
CONTROLLER_HEADERS = ("packet_in_t", "packet_out_t")


# --------------------------------------------------------------------------- Scapy


class _FabricLayer(Packet):
    """Base of the generated layers: fabric headers are fixed-size, no padding."""

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return s, b""


class _LRHBase(_FabricLayer):
    _PKT_LEN_AT = HEADERS["LRH"].byte_offset("pkt_len")

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        """pkt_len left unset is the number of bytes after the LRH."""
        if self.pkt_len is None:
            at = self._PKT_LEN_AT
            pkt = pkt[:at] + struct.pack("!H", len(pay)) + pkt[at + 2:]
        return pkt + pay


def _scapy_layer(spec: HeaderSpec, base: type[Packet] = _FabricLayer) -> type[Packet]:
    defaults = {"pkt_len": None, "kind": None}
    fields = [BitField(name, defaults.get(name, 0), bits) for name, bits in spec.fields]
    return type(spec.layer, (base,), {"name": spec.layer, "fields_desc": fields,
                                      "__doc__": spec.doc, "__module__": __name__})


LRH = _scapy_layer(HEADERS["LRH"], _LRHBase)
BTH = _scapy_layer(HEADERS["BTH"])
APP = _scapy_layer(HEADERS["APP"])
CREDIT = _scapy_layer(HEADERS["CREDIT"])
PROBE = _scapy_layer(HEADERS["PROBE"])
HELLO = _scapy_layer(HEADERS["HELLO"])

bind_layers(Ether, LRH, type=ETHERTYPE_FABRIC)
bind_layers(LRH, BTH, kind=int(Kind.DATA))
bind_layers(LRH, CREDIT, kind=int(Kind.CREDIT))
bind_layers(LRH, PROBE, kind=int(Kind.PROBE))
bind_layers(LRH, HELLO, kind=int(Kind.HELLO))
bind_layers(BTH, APP)


def pfc_frame(class_enable: int, quanta: Sequence[int], src: str = "00:00:00:00:00:00") -> Packet:
    """An 802.1Qbb pause: `class_enable` bit i pauses priority i for quanta[i] x 512 bit times.

    A quanta of 0 with the class enabled is a resume (XON).
    """
    if len(quanta) != 8:
        raise ValueError(f"PFC needs 8 quanta (one per priority), got {len(quanta)}")
    if not 0 <= class_enable <= 0xFF:
        raise ValueError(f"class_enable is an 8-bit vector, got {class_enable:#x}")
    per_class = {}
    for i, q in enumerate(quanta):
        per_class[f"c{i}_enabled"] = (class_enable >> i) & 1
        per_class[f"c{i}_pause_time"] = q
    return Ether(dst=PFC_DST_MAC, src=src, type=ETHERTYPE_MAC_CONTROL) / \
        MACControlClassBasedFlowControl(**per_class)


# --------------------------------------------------------------------------- fast codec

_STRUCT_UNITS = {8: "Q", 4: "I", 2: "H", 1: "B"}


class FrameCodec:
    """Struct-based pack/unpack of a fixed stack of headers (hot path).

    Fields that share bytes (vl/sl) or have odd widths (24-bit dest_qp, 48-bit
    MACs) are grouped into byte-aligned runs, each run read as whole struct
    units and split by shifts. The pack/unpack functions are generated once
    from the declaration; `source` shows them.
    """

    def __init__(self, name: str, layers: Sequence[str]) -> None:
        self.name = name
        self.layers = tuple(layers)
        specs = [HEADERS[layer] for layer in layers]
        self.fields: tuple[str, ...] = tuple(_unique_names(specs))
        self.size = sum(spec.size for spec in specs)
        self.Fields = namedtuple(f"{name}Fields", self.fields)  # noqa: PYI024
        widths = [bits for spec in specs for _, bits in spec.fields]
        self.widths = dict(zip(self.fields, widths, strict=True))
        fmt, unpack_src, pack_src = _generate(self.fields, widths)
        self.struct = struct.Struct(fmt)
        self.source = unpack_src + "\n" + pack_src
        namespace = {"_unpack_from": self.struct.unpack_from, "_pack": self.struct.pack,
                     "Fields": self.Fields}
        exec(compile(self.source, f"<FrameCodec {name}>", "exec"), namespace)  # noqa: S102
        self._unpack = namespace["unpack"]
        self._pack = namespace["pack"]

    def byte_offset(self, name: str) -> int:
        """Offset in bytes of a byte-aligned field from the start of the stack."""
        base = 0
        for layer in self.layers:
            spec = HEADERS[layer]
            names = [f for f, _ in spec.fields]
            if name in names:
                return base + spec.byte_offset(name)
            base += spec.size
        raise KeyError(f"{self.name} has no field {name!r}")

    def unpack(self, buf: bytes, offset: int = 0):
        """Decode the header stack at `offset`; raises struct.error when `buf` is too short."""
        return self._unpack(buf, offset)

    def pack(self, **values: int) -> bytes:
        """Encode the header stack; missing fields are 0. Payload is the caller's business."""
        unknown = set(values) - set(self.fields)
        if unknown:
            raise KeyError(f"{self.name} has no field(s) {sorted(unknown)}")
        return self._pack(*[values.get(f, 0) for f in self.fields])

    def pack_values(self, *values: int) -> bytes:
        """Positional `pack` in `fields` order, without checks (hot path)."""
        return self._pack(*values)


def _unique_names(specs: Iterable[HeaderSpec]) -> list[str]:
    """Field names of a header stack, prefixed by layer where two layers share a name."""
    pairs = [(spec.layer, name) for spec in specs for name, _ in spec.fields]
    counts: dict[str, int] = {}
    for _, name in pairs:
        counts[name] = counts.get(name, 0) + 1
    return [name if counts[name] == 1 else f"{layer.lower()}_{name}" for layer, name in pairs]


def _generate(names: Sequence[str], widths: Sequence[int]) -> tuple[str, str, str]:
    """(struct format, unpack source, pack source) for fields of the given widths."""
    groups: list[list[tuple[str, int]]] = []  # byte-aligned runs of fields
    run: list[tuple[str, int]] = []
    for name, bits in zip(names, widths, strict=True):
        run.append((name, bits))
        if sum(b for _, b in run) % 8 == 0:
            groups.append(run)
            run = []
    if run:
        raise ValueError(f"header stack ends off a byte boundary: {run}")

    fmt = "!"
    unit_index = 0
    unpack_body: list[str] = []
    pack_units: list[str] = []
    for gi, group in enumerate(groups):
        nbytes = sum(b for _, b in group) // 8
        units = []  # (struct index, size in bytes) big-endian
        remaining = nbytes
        while remaining:
            size = next(s for s in (8, 4, 2, 1) if s <= remaining)
            fmt += _STRUCT_UNITS[size]
            units.append((unit_index, size))
            unit_index += 1
            remaining -= size
        # group value from its units
        parts, shift = [], nbytes * 8
        for index, size in units:
            shift -= size * 8
            parts.append(f"(u[{index}] << {shift})" if shift else f"u[{index}]")
        gexpr = " | ".join(parts)
        if len(group) == 1:
            unpack_body.append(f"    {group[0][0]} = {gexpr}")
        else:
            unpack_body.append(f"    g{gi} = {gexpr}")
        # fields from the group value, and the group value from fields
        shift = nbytes * 8
        field_exprs = []
        for name, bits in group:
            shift -= bits
            mask = (1 << bits) - 1
            if len(group) > 1:
                unpack_body.append(f"    {name} = (g{gi} >> {shift}) & {mask:#x}")
            field_exprs.append(f"(({name} & {mask:#x}) << {shift})" if shift
                               else f"({name} & {mask:#x})")
        gvalue = " | ".join(field_exprs)
        shift = nbytes * 8
        for _index, size in units:
            shift -= size * 8
            unit = f"({gvalue}) >> {shift}" if shift else f"{gvalue}"
            if len(units) > 1:
                unit = f"({unit}) & {(1 << size * 8) - 1:#x}"
            pack_units.append(unit)
    args = ", ".join(names)
    unpack_src = ("def unpack(buf, offset):\n    u = _unpack_from(buf, offset)\n"
                  + "\n".join(unpack_body) + f"\n    return Fields({args})\n")
    pack_src = (f"def pack({args}):\n    return _pack(\n        "
                + ",\n        ".join(pack_units) + ")\n")
    return fmt, unpack_src, pack_src


DATA_CODEC = FrameCodec("Data", ("Ethernet", "LRH", "BTH", "APP"))
DATA_HEADER_LEN = DATA_CODEC.size  # 14 + 8 + 8 + 20
CREDIT_CODEC = FrameCodec("Credit", ("Ethernet", "LRH", "CREDIT"))
PFC_CODEC = FrameCodec("Pfc", ("Ethernet", "PFC"))
# Where a frame says what it is, for code that classifies frames before decoding them.
ETHER_TYPE_OFFSET = DATA_CODEC.byte_offset("ether_type")
LRH_KIND_OFFSET = DATA_CODEC.byte_offset("kind")


def mac_to_int(mac: str) -> int:
    return int(mac.replace(":", "").replace("-", ""), 16)


def int_to_mac(value: int) -> str:
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))
