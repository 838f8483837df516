"""P4Runtime ValueSetEntry on the real embedded switch: the parser value sets of
tests/compiler/programs/fidelity/value_sets.p4 written over P4Runtime, read back,
and seen by packets (P4Runtime spec: ValueSetEntry is MODIFY-only and replaces the
whole set; more members than the set's size is RESOURCE_EXHAUSTED)."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2
from test_p4runtime_support import DEVICE_ID, Client, write_errors

from p4compiler.compiler import compile_file
from p4switch.p4runtime_server import serve
from p4switch.switch import Switch

PROGRAM = (Path(__file__).resolve().parent.parent / "compiler" / "programs" / "fidelity"
           / "value_sets.p4")
ETH = bytes.fromhex("000000000001" "000000000000")


def tagged(etype: int, pcp: int, inner: int) -> bytes:
    return ETH + etype.to_bytes(2, "big") + ((pcp << 12) | 1).to_bytes(2, "big") + \
        inner.to_bytes(2, "big")


def path_of(sw: Switch, frame: bytes) -> int:
    """The parser's verdict the program writes into the source MAC's last byte
    (1: the pair set matched, 2: the constant case, 0: neither)."""
    [(port, out)] = sw.process(0, frame)
    assert port == 1
    return out[11]


@pytest.fixture(scope="module")
def compiled():
    return compile_file(str(PROGRAM))


@pytest.fixture
def rig(compiled):
    sw = Switch(ports={}, cpu_port=None, device_id=DEVICE_ID)
    server = serve(sw, "127.0.0.1:0", DEVICE_ID, None)
    c = Client(f"127.0.0.1:{server.port}")
    c.primary()
    c.set_pipeline(info=compiled.p4info, config=json.dumps(compiled.json).encode())
    ids = {vs.preamble.alias: vs.preamble.id for vs in compiled.p4info.value_sets}
    yield sw, c, ids
    c.close()
    server.stop(None)


def vs_entry(set_id: int, *members: tuple[bytes, ...]) -> p4runtime_pb2.ValueSetEntry:
    e = p4runtime_pb2.ValueSetEntry(value_set_id=set_id)
    for fields in members:
        m = e.members.add()
        for fid, value in enumerate(fields, 1):
            m.match.add(field_id=fid).exact.value = value
    return e


def write(c: Client, kind: str, entry: p4runtime_pb2.ValueSetEntry) -> None:
    c.write(p4runtime_pb2.Update(type=p4runtime_pb2.Update.Type.Value(kind),
                                 entity=p4runtime_pb2.Entity(value_set_entry=entry)))


def write_code(c: Client, kind: str, entry: p4runtime_pb2.ValueSetEntry) -> int:
    with pytest.raises(grpc.RpcError) as e:
        write(c, kind, entry)
    [err] = write_errors(e.value)
    return err.canonical_code


def test_modify_fills_the_set_packets_match_it_and_a_read_returns_it(rig):
    sw, c, ids = rig
    assert path_of(sw, tagged(0x8100, 5, 0x0800)) == 0  # the sets start empty
    write(c, "MODIFY", vs_entry(ids["pairs"], (b"\x08\x00", b"\x05"), (b"\x86\xdd", b"\x01")))
    assert path_of(sw, tagged(0x8100, 5, 0x0800)) == 1
    assert path_of(sw, tagged(0x8100, 1, 0x86DD)) == 1
    assert path_of(sw, tagged(0x8100, 1, 0x0800)) == 0
    [got] = c.read(p4runtime_pb2.Entity(value_set_entry=p4runtime_pb2.ValueSetEntry(
        value_set_id=ids["pairs"])))
    assert got.value_set_entry == vs_entry(ids["pairs"], (b"\x08\x00", b"\x05"),
                                           (b"\x86\xdd", b"\x01"))


def test_a_modify_replaces_the_whole_set_and_an_empty_one_clears_it(rig):
    sw, c, ids = rig
    write(c, "MODIFY", vs_entry(ids["types"], (b"\x99\x99",)))
    assert path_of(sw, tagged(0x9999, 0, 0x0800)) == 2  # tag parsed, then the const case
    write(c, "MODIFY", vs_entry(ids["types"], (b"\x88\x88",)))
    assert path_of(sw, tagged(0x9999, 0, 0x0800)) == 0
    assert path_of(sw, tagged(0x8888, 0, 0x0800)) == 2
    write(c, "MODIFY", vs_entry(ids["types"]))
    assert path_of(sw, tagged(0x8888, 0, 0x0800)) == 0


def test_a_read_of_set_zero_returns_every_set(rig):
    _, c, ids = rig
    write(c, "MODIFY", vs_entry(ids["types"], (b"\x00\x01",)))
    got = c.read(p4runtime_pb2.Entity(value_set_entry=p4runtime_pb2.ValueSetEntry()))
    assert {e.value_set_entry.value_set_id: len(e.value_set_entry.members) for e in got} == {
        ids["types"]: 1, ids["pairs"]: 0}


@pytest.mark.parametrize("kind,entry,code", [
    ("INSERT", lambda ids: vs_entry(ids["types"], (b"\x01",)), code_pb2.INVALID_ARGUMENT),
    ("DELETE", lambda ids: vs_entry(ids["types"]), code_pb2.INVALID_ARGUMENT),
    ("MODIFY", lambda ids: vs_entry(ids["types"], (b"\x01",), (b"\x02",), (b"\x03",)),
     code_pb2.RESOURCE_EXHAUSTED),                               # types holds 2
    ("MODIFY", lambda ids: vs_entry(ids["pairs"], (b"\x08\x00", b"\x10")),
     code_pb2.INVALID_ARGUMENT),                                 # pcp is 4 bits
    ("MODIFY", lambda ids: vs_entry(ids["pairs"], (b"\x08\x00",)),
     code_pb2.INVALID_ARGUMENT),                                 # a field is missing
    ("MODIFY", lambda ids: vs_entry(424242, (b"\x01",)), code_pb2.NOT_FOUND),
])
def test_bad_value_set_writes_get_the_specs_codes_and_change_nothing(rig, kind, entry, code):
    sw, c, ids = rig
    write(c, "MODIFY", vs_entry(ids["types"], (b"\x99\x99",)))
    assert write_code(c, kind, entry(ids)) == code
    assert path_of(sw, tagged(0x9999, 0, 0x0800)) == 2
