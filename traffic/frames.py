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
# Every host and fabric link has Ethernet's MTU (the bytes after the 14-byte header).
ETHERNET_MTU = 1500
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
    SA = 5  # subnet administration: PathRecord queries, answers, notices
    NOTIFY = 6  # fault notification, switch to switch: "DLID unreachable through me"


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
                   (("opcode", 8), ("pkey", 16), ("dest_qp", 24), ("psn", 32)),
                   "base transport header, after InfiniBand's BTH; pkey: partition key (bit 15 "
                   "= the sender is a full member; 0xFFFF default partition); psn numbers a "
                   "flow's frames"),
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
        HeaderSpec("NOTIFY", "notify_t", (("op", 8), ("reserved", 8), ("epoch", 16)),
                   "fault notification between switches: the LRH DLID is unreachable "
                   "through the sender (p4src/include/notify.p4)"),
        HeaderSpec("PFC", "pfc_t",
                   (("opcode", 16), ("class_enable", 16))
                   + tuple((f"quanta{i}", 16) for i in range(8)),
                   "802.1Qbb PFC; Scapy's MACControlClassBasedFlowControl is the layer"),
        HeaderSpec("HOLD", "hold_t",
                   (("magic", 16), ("is_data", 1), ("held", 1), ("has_ticket", 1),
                    ("ticket", 32), ("arrival_ts", 48), ("verdict", 32), ("in_port", 9),
                    ("in_cls", 3), ("out_port", 9), ("cls", 3), ("pad", 5)),
                   "a held frame's field list FL_HOLD, in front of its Ethernet header while "
                   "it waits round a bmv2 switch's hold loop (p4src/include/hold_loop.p4); "
                   "never on a fabric link"),
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
NOTIFY = _scapy_layer(HEADERS["NOTIFY"])
HOLD = _scapy_layer(HEADERS["HOLD"])  # the first HEADERS["HOLD"].size bytes of a looped frame

bind_layers(Ether, LRH, type=ETHERTYPE_FABRIC)
bind_layers(LRH, BTH, kind=int(Kind.DATA))
bind_layers(LRH, CREDIT, kind=int(Kind.CREDIT))
bind_layers(LRH, PROBE, kind=int(Kind.PROBE))
bind_layers(LRH, HELLO, kind=int(Kind.HELLO))
bind_layers(LRH, NOTIFY, kind=int(Kind.NOTIFY))
bind_layers(HOLD, Ether)
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
DATA_HEADER_LEN = DATA_CODEC.size  # 14 + 8 + 10 + 20
CREDIT_CODEC = FrameCodec("Credit", ("Ethernet", "LRH", "CREDIT"))
PFC_CODEC = FrameCodec("Pfc", ("Ethernet", "PFC"))
# Where a frame says what it is, for code that classifies frames before decoding them.
ETHER_TYPE_OFFSET = DATA_CODEC.byte_offset("ether_type")
LRH_KIND_OFFSET = DATA_CODEC.byte_offset("kind")


def mac_to_int(mac: str) -> int:
    return int(mac.replace(":", "").replace("-", ""), 16)


def int_to_mac(value: int) -> str:
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


# --------------------------------------------------------------------------- subnet administration
# Management frames of LRH kind SA (controller/sa.py, traffic/sa_client.py): a
# host's PathRecord query, punted to the SM by the switch it is attached to; the
# SM's answer and its REPORT notices, sent as packet-out of the host's port.
# Like InfiniBand's SA MADs on VL15 they are never flow-controlled, never counted
# as data and never forwarded by DLID. Frame: Ethernet + LRH + SA + `count` x
# PATH_RECORD.

HEADERS["SA"] = HeaderSpec(
    "SA", "sa_t", (("method", 8), ("status", 8), ("attribute", 16), ("tid", 64), ("count", 16)),
    "subnet administration, after InfiniBand's SA MAD header; `count` path records follow")
HEADERS["PATH_RECORD"] = HeaderSpec(
    "PATH_RECORD", "path_record_t",
    (("sguid", 64), ("dguid", 64), ("slid", 16), ("dlid", 16), ("sl", 4), ("mtu", 4),
     ("rate", 8), ("dmac", 48), ("dname", 128)),
    "one path, after InfiniBand's PathRecord (port GUIDs for GIDs, plus MAC and host name)")

SA_ATTR_PATH_RECORD = 0x0035  # InfiniBand's PathRecord attribute id
SA_PERMISSIVE_LID = 0xFFFF  # a query's DLID: "the SM, wherever it is" (punted by kind anyway)
SA_BROADCAST_MAC = 0xFFFF_FFFF_FFFF
SA_NAME_BYTES = HEADERS["PATH_RECORD"].fields[-1][1] // 8


class SaMethod(enum.IntEnum):
    """sa_t `method`, InfiniBand's MAD method values."""

    GET = 0x01  # host -> SM: a PathRecord query (one record naming the destination)
    REPORT = 0x06  # SM -> host: these paths changed (InformInfo/trap report)
    GET_RESP = 0x81  # SM -> host: the answer, with the query's tid
    REPORT_RESP = 0x86  # host -> SM: REPORT received (same tid); the SM stops re-sending


class SaStatus(enum.IntEnum):
    """sa_t `status` of a GET_RESP."""

    OK = 0
    NO_SUCH_DESTINATION = 1  # no host with that GUID / LID / name in the subnet
    NO_PATH = 2  # the destination exists but the installed routes do not reach it
    BAD_REQUEST = 3  # malformed query, or the SM has no LIDs yet


class SaFrameError(ValueError):
    """Bytes that are not a well-formed SA frame."""


@dataclass(frozen=True)
class PathRecord:
    """How the host with `sguid`/`slid` reaches `dguid`/`dlid`: send with SL `sl`.

    A query fills what it knows of the destination (`dguid`, `dlid` or `dname`,
    looked up in that order); the SM's answer fills everything it knows.
    `dmac` is "aa:bb:.." or None; `mtu`/`rate` are IB codes, 0 = not given."""

    dlid: int = 0
    sl: int = 0
    slid: int = 0
    sguid: int = 0
    dguid: int = 0
    dname: str = ""
    dmac: str | None = None
    mtu: int = 0
    rate: int = 0


@dataclass(frozen=True)
class SaMessage:
    """One SA frame, decoded; `src_mac` and `slid` are from its Ethernet and LRH."""

    method: SaMethod
    tid: int
    status: SaStatus | int = SaStatus.OK
    records: tuple[PathRecord, ...] = ()
    src_mac: str = "00:00:00:00:00:00"
    slid: int = 0


SA_CODEC = FrameCodec("Sa", ("Ethernet", "LRH", "SA"))
PATH_RECORD_CODEC = FrameCodec("PathRecord", ("PATH_RECORD",))
# Path records per frame within one Ethernet MTU.
SA_MAX_RECORDS = (ETHERNET_MTU - (SA_CODEC.size - 14)) // PATH_RECORD_CODEC.size


def sa_frame(method: SaMethod, tid: int, records: Sequence[PathRecord] = (),
             status: SaStatus | int = SaStatus.OK, *, src_mac: int = 0,
             dst_mac: int = SA_BROADCAST_MAC, slid: int = 0,
             dlid: int = SA_PERMISSIVE_LID) -> bytes:
    """An SA frame: Ethernet + LRH (kind SA, VL 0, SL 0) + SA + the path records."""
    if len(records) > SA_MAX_RECORDS:
        raise ValueError(f"{len(records)} path records do not fit one frame "
                         f"(at most {SA_MAX_RECORDS})")
    body = b"".join(_pack_path_record(r) for r in records)
    return SA_CODEC.pack(
        dst_addr=dst_mac, src_addr=src_mac, ether_type=ETHERTYPE_FABRIC, kind=Kind.SA,
        dlid=dlid, slid=slid, pkt_len=SA_CODEC.size - 22 + len(body), method=method,
        status=status, attribute=SA_ATTR_PATH_RECORD, tid=tid, count=len(records)) + body


def parse_sa_frame(frame: bytes) -> SaMessage:
    """Decode an SA frame; SaFrameError says what is wrong with one that is not."""
    if len(frame) < SA_CODEC.size:
        raise SaFrameError(f"SA frame needs at least {SA_CODEC.size} bytes, got {len(frame)}")
    h = SA_CODEC.unpack(frame)
    if h.ether_type != ETHERTYPE_FABRIC or h.kind != Kind.SA:
        raise SaFrameError(f"not an SA frame: EtherType {h.ether_type:#06x}, LRH kind {h.kind}")
    try:
        method = SaMethod(h.method)
    except ValueError:
        raise SaFrameError(f"unknown SA method {h.method:#04x}") from None
    if h.attribute != SA_ATTR_PATH_RECORD:
        raise SaFrameError(f"unknown SA attribute {h.attribute:#06x} (PathRecord is "
                           f"{SA_ATTR_PATH_RECORD:#06x})")
    end = SA_CODEC.size + h.count * PATH_RECORD_CODEC.size
    if len(frame) < end:
        raise SaFrameError(f"SA frame announces {h.count} path records ({end} bytes), "
                           f"has {len(frame)} bytes")
    records = tuple(_unpack_path_record(frame, SA_CODEC.size + i * PATH_RECORD_CODEC.size)
                    for i in range(h.count))
    status = SaStatus(h.status) if h.status in SaStatus._value2member_map_ else h.status
    return SaMessage(method, h.tid, status, records, int_to_mac(h.src_addr), h.slid)


def _pack_path_record(r: PathRecord) -> bytes:
    name = r.dname.encode("ascii")
    if len(name) > SA_NAME_BYTES:
        raise ValueError(f"host name {r.dname!r} is longer than {SA_NAME_BYTES} bytes")
    return PATH_RECORD_CODEC.pack(
        sguid=r.sguid, dguid=r.dguid, slid=r.slid, dlid=r.dlid, sl=r.sl, mtu=r.mtu,
        rate=r.rate, dmac=mac_to_int(r.dmac) if r.dmac else 0,
        dname=int.from_bytes(name.ljust(SA_NAME_BYTES, b"\0"), "big"))


def _unpack_path_record(frame: bytes, offset: int) -> PathRecord:
    f = PATH_RECORD_CODEC.unpack(frame, offset)
    name = f.dname.to_bytes(SA_NAME_BYTES, "big").rstrip(b"\0")
    try:
        dname = name.decode("ascii")
    except UnicodeDecodeError:
        raise SaFrameError(f"path record at byte {offset}: host name {name!r} is not "
                           "ASCII") from None
    return PathRecord(dlid=f.dlid, sl=f.sl, slid=f.slid, sguid=f.sguid, dguid=f.dguid,
                      dname=dname, dmac=int_to_mac(f.dmac) if f.dmac else None, mtu=f.mtu,
                      rate=f.rate)


class _SaBase(_FabricLayer):
    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        """The path records are the payload; what follows them is Ethernet padding."""
        n = (self.count or 0) * PATH_RECORD_CODEC.size
        return s[:n], s[n:]


SA = _scapy_layer(HEADERS["SA"], _SaBase)
PATH_RECORD = _scapy_layer(HEADERS["PATH_RECORD"])
bind_layers(LRH, SA, kind=int(Kind.SA))
bind_layers(SA, PATH_RECORD)
bind_layers(PATH_RECORD, PATH_RECORD)
