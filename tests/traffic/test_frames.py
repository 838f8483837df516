"""The fabric wire formats: Scapy layers, the fast codec and headers.p4 agree field by field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

from traffic import frames
from traffic.frames import APP, BTH, CREDIT, DATA_CODEC, HEADERS, HELLO, LRH, NOTIFY, PROBE, Kind

HEADERS_P4 = Path(__file__).resolve().parents[2] / "p4src" / "include" / "headers.p4"


def parse_p4_headers(text: str) -> dict[str, list[tuple[str, int]]]:
    """`header NAME { bit<N> f; ... }` blocks of a P4 file, typedefs resolved."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    typedefs = {m[1]: int(m[0]) for m in re.findall(r"typedef\s+bit<(\d+)>\s+(\w+)\s*;", text)}
    headers = {}
    for name, body in re.findall(r"header\s+(\w+)\s*\{(.*?)\}", text, flags=re.S):
        fields = []
        for ftype, fname in re.findall(r"(bit<\d+>|\w+)\s+(\w+)\s*;", body):
            width = re.fullmatch(r"bit<(\d+)>", ftype)
            fields.append((fname, int(width[1]) if width else typedefs[ftype]))
        headers[name] = fields
    return headers


P4_HEADERS = parse_p4_headers(HEADERS_P4.read_text())
SCAPY_LAYERS = {"LRH": LRH, "BTH": BTH, "APP": APP, "CREDIT": CREDIT, "PROBE": PROBE,
                "HELLO": HELLO, "NOTIFY": NOTIFY}


def test_every_p4_header_is_declared_on_the_host_side():
    declared = {spec.p4_name for spec in HEADERS.values()} | set(frames.CONTROLLER_HEADERS)
    assert set(P4_HEADERS) == declared


@pytest.mark.parametrize("layer", sorted(HEADERS))
def test_declaration_matches_headers_p4(layer):
    spec = HEADERS[layer]
    assert list(spec.fields) == P4_HEADERS[spec.p4_name]


@pytest.mark.parametrize("layer", sorted(SCAPY_LAYERS))
def test_scapy_layer_matches_headers_p4(layer):
    scapy_fields = [(f.name, f.size) for f in SCAPY_LAYERS[layer].fields_desc]
    assert scapy_fields == P4_HEADERS[HEADERS[layer].p4_name]


def test_fast_codec_field_order_and_widths_match_headers_p4():
    expected = [f for p4 in ("ethernet_t", "lrh_t", "bth_t", "app_t") for f in P4_HEADERS[p4]]
    assert list(DATA_CODEC.fields) == [name for name, _ in expected]
    assert [DATA_CODEC.widths[name] for name in DATA_CODEC.fields] == [b for _, b in expected]
    assert DATA_CODEC.size == sum(b for _, b in expected) // 8


def test_scapy_pfc_layout_matches_pfc_t():
    """Scapy's class-based flow-control layer has the bit layout of headers.p4's pfc_t."""
    scapy_bits = [f.size if hasattr(f, "size") else f.sz * 8
                  for f in MACControlClassBasedFlowControl.fields_desc]
    assert sum(scapy_bits) == sum(b for _, b in P4_HEADERS["pfc_t"])
    frame = bytes(frames.pfc_frame(0b1000_0101, [7, 0, 300, 0, 0, 0, 0, 65535]))
    codec = frames.FrameCodec("Pfc", ("Ethernet", "PFC"))
    pfc = codec.unpack(frame)
    assert pfc.dst_addr == frames.mac_to_int(frames.PFC_DST_MAC)
    assert pfc.ether_type == frames.ETHERTYPE_MAC_CONTROL
    assert pfc.opcode == frames.PFC_OPCODE
    assert pfc.class_enable == 0b1000_0101
    assert (pfc.quanta0, pfc.quanta2, pfc.quanta7) == (7, 300, 65535)


def test_kinds_match_headers_p4_constants():
    consts = dict(re.findall(r"const bit<8> KIND_(\w+)\s*=\s*(\d+);", HEADERS_P4.read_text()))
    assert {k: int(v) for k, v in consts.items()} == {k.name: k.value for k in Kind}


def test_ethertype_matches_headers_p4():
    m = re.search(r"ETHERTYPE_FABRIC\s*=\s*(0x[0-9A-Fa-f]+)", HEADERS_P4.read_text())
    assert int(m[1], 16) == frames.ETHERTYPE_FABRIC


@pytest.mark.parametrize("kind,layer", [(Kind.CREDIT, CREDIT), (Kind.PROBE, PROBE),
                                        (Kind.HELLO, HELLO), (Kind.DATA, BTH),
                                        (Kind.NOTIFY, NOTIFY)])
def test_scapy_dissects_each_kind(kind, layer):
    frame = Ether(bytes(Ether(src="02:00:00:00:00:01") / LRH(dlid=5) / layer()))
    assert frame[LRH].kind == kind
    assert frame.haslayer(layer)


def test_lrh_pkt_len_counts_bytes_after_the_lrh():
    frame = Ether() / LRH() / BTH() / APP() / (b"\0" * 100)
    assert Ether(bytes(frame))[LRH].pkt_len == 10 + 20 + 100


u = st.integers
data_fields = st.fixed_dictionaries({
    "dst_addr": u(0, 2**48 - 1), "src_addr": u(0, 2**48 - 1), "vl": u(0, 15), "sl": u(0, 15),
    "dlid": u(0, 0xFFFF), "slid": u(0, 0xFFFF), "opcode": u(0, 255), "pkey": u(0, 0xFFFF), "dest_qp": u(0, 2**24 - 1),
    "psn": u(0, 2**32 - 1), "flow_id": u(0, 2**32 - 1), "coll_id": u(0, 0xFFFF),
    "step": u(0, 0xFFFF), "chunk": u(0, 2**32 - 1), "send_ts": u(0, 2**64 - 1),
})


@given(data_fields, st.binary(max_size=64))
def test_fast_codec_and_scapy_build_the_same_bytes(values, payload):
    eth = {"dst": frames.int_to_mac(values["dst_addr"]), "src": frames.int_to_mac(values["src_addr"])}
    lrh = {k: values[k] for k in ("vl", "sl", "dlid", "slid")}
    bth = {k: values[k] for k in ("opcode", "pkey", "dest_qp", "psn")}
    app = {k: values[k] for k in ("flow_id", "coll_id", "step", "chunk", "send_ts")}
    scapy_bytes = bytes(Ether(**eth) / LRH(**lrh) / BTH(**bth) / APP(**app) / payload)
    fast = DATA_CODEC.pack(**values, ether_type=frames.ETHERTYPE_FABRIC, kind=Kind.DATA,
                           pkt_len=10 + 20 + len(payload)) + payload
    assert fast == scapy_bytes
    decoded = DATA_CODEC.unpack(scapy_bytes)
    assert {k: getattr(decoded, k) for k in values} == values


def test_fast_codec_rejects_unknown_fields():
    with pytest.raises(KeyError, match="no field"):
        DATA_CODEC.pack(not_a_field=1)


def test_pfc_frame_needs_eight_quanta():
    with pytest.raises(ValueError, match="8 quanta"):
        frames.pfc_frame(1, [1, 2])


def test_classification_offsets_come_from_the_declaration():
    assert frames.ETHER_TYPE_OFFSET == 12
    assert frames.LRH_KIND_OFFSET == 15
    with pytest.raises(ValueError, match="not byte-aligned"):
        DATA_CODEC.byte_offset("sl")
