"""P4Runtime conformance: StreamChannel packet-out/in, digests, port status."""

from __future__ import annotations

import time

import pytest
from google.protobuf import any_pb2
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2
from test_p4runtime_support import IDS, Client, start_server, update

from p4switch.p4runtime.port_status import PortStatus, PortStatusSubscribe


@pytest.fixture
def sw():
    server, dp, addr = start_server()
    clients: list[Client] = []

    def client(election_id=1):
        c = Client(addr, election_id=election_id)
        clients.append(c)
        return c

    yield client, dp
    for c in clients:
        c.close()
    server.stop(None)


def packet_out(payload: bytes, **md: int) -> p4runtime_pb2.StreamMessageRequest:
    ids = {"egress_port": 1, "mcast": 2, "_pad": 3, "flags": 4}
    req = p4runtime_pb2.StreamMessageRequest()
    req.packet.payload = payload
    for name, value in md.items():
        req.packet.metadata.add(metadata_id=ids[name], value=value.to_bytes(2, "big"))
    return req


def wait_for(cond, timeout=2.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return False


def test_packet_out_puts_the_header_bits_msb_first_before_the_payload(sw):
    client, dp = sw
    c = client()
    s = c.primary()
    c.set_pipeline()
    s.send(packet_out(b"PAYLOAD", egress_port=3, mcast=1, flags=0xBEEF))
    assert wait_for(lambda: dp.packets_out)
    # egress_port(9)=3, mcast(1)=1, pad(6)=0 -> 0b000000011_1_000000 = 0x01C0
    assert dp.packets_out == [b"\x01\xc0\xbe\xef" + b"PAYLOAD"]


def test_packet_out_from_a_backup_is_refused_with_a_stream_error(sw):
    client, dp = sw
    a = client(election_id=2)
    a.primary()
    a.set_pipeline()
    b = client(election_id=1).stream()
    b.arbitrate(election_id=1)
    b.next("arbitration")
    b.send(packet_out(b"x", egress_port=1))
    err = b.next("error").error
    assert err.canonical_code == code_pb2.PERMISSION_DENIED
    assert err.packet_out.packet_out.payload == b"x"
    assert dp.packets_out == []


def test_packet_out_with_a_too_wide_value_is_invalid_argument(sw):
    client, dp = sw
    c = client()
    s = c.primary()
    c.set_pipeline()
    req = p4runtime_pb2.StreamMessageRequest()
    req.packet.payload = b"x"
    req.packet.metadata.add(metadata_id=1, value=b"\x02\x00")  # 512 does not fit 9 bits
    s.send(req)
    assert s.next("error").error.canonical_code == code_pb2.INVALID_ARGUMENT
    assert dp.packets_out == []


def test_packet_in_goes_to_the_primary_only_with_metadata_split(sw):
    client, dp = sw
    a = client(election_id=2)
    sa = a.primary()
    a.set_pipeline()
    sb = client(election_id=1).stream()
    sb.arbitrate(election_id=1)
    sb.next("arbitration")
    # ingress_port(9)=5, pad(7)=0, reason(16)=4 -> 0000010 1|0000000 0x0004
    dp.packet_in_handler(b"\x02\x80\x00\x04" + b"frame")
    pin = sa.next("packet").packet
    assert pin.payload == b"frame"
    assert [(m.metadata_id, m.value) for m in pin.metadata] == [(1, b"\x05"), (2, b"\x00"), (3, b"\x04")]
    assert sb.nothing()


def test_digests_are_batched_sent_to_the_primary_and_deduplicated_until_acked(sw):
    client, dp = sw
    c = client()
    s = c.primary()
    c.set_pipeline()
    d = p4runtime_pb2.DigestEntry(digest_id=IDS["learn_t"])
    d.config.max_list_size = 2
    d.config.max_timeout_ns = 10_000_000_000
    d.config.ack_timeout_ns = 10_000_000_000
    c.write(update("INSERT", digest_entry=d))
    dp.digest_handler("learn_t", (0x12, 3))
    dp.digest_handler("learn_t", (0x12, 3))  # duplicate while pending: suppressed
    dp.digest_handler("learn_t", (0x13, 4))
    dl = s.next("digest").digest
    assert dl.digest_id == IDS["learn_t"]
    assert [[m.bitstring for m in x.struct.members] for x in dl.data] == [
        [b"\x12", b"\x03"], [b"\x13", b"\x04"]]
    dp.digest_handler("learn_t", (0x12, 3))  # sent, not acked yet: suppressed
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = dl.digest_id, dl.list_id
    s.send(ack)
    # The server reads one stream's requests in order: once it answers this
    # re-arbitration, it has handled the ack (a sleep raced it under load).
    s.arbitrate(c.device_id, c.election_id)
    assert s.next("arbitration").arbitration.status.code == code_pb2.OK
    dp.digest_handler("learn_t", (0x12, 3))
    dp.digest_handler("learn_t", (0x14, 5))
    dl2 = s.next("digest").digest
    assert dl2.list_id != dl.list_id and len(dl2.data) == 2


def test_digest_timeout_flushes_a_partial_list_and_unconfigured_digests_are_dropped(sw):
    client, dp = sw
    c = client()
    s = c.primary()
    c.set_pipeline()
    dp.digest_handler("learn_t", (1, 1))
    assert s.nothing(0.2)
    d = p4runtime_pb2.DigestEntry(digest_id=IDS["learn_t"])
    d.config.max_list_size = 100
    d.config.max_timeout_ns = 50_000_000
    c.write(update("INSERT", digest_entry=d))
    dp.digest_handler("learn_t", (2, 2))
    assert len(s.next("digest").digest.data) == 1


def test_port_status_reaches_subscribed_streams_only(sw):
    client, dp = sw
    agent = client().stream()
    agent.arbitrate(election_id=None)  # a reader, never primary
    agent.next("arbitration")
    other = client(election_id=5).primary()
    dp.port_status_handler(2, False)
    sub = p4runtime_pb2.StreamMessageRequest()
    sub.other.Pack(PortStatusSubscribe())
    agent.send(sub)
    snapshot = PortStatus()
    assert agent.next("other").other.Unpack(snapshot)
    assert (snapshot.port, snapshot.up) == (2, False)
    dp.port_status_handler(2, True)
    ev = PortStatus()
    assert agent.next("other").other.Unpack(ev)
    assert (ev.port, ev.up) == (2, True) and ev.timestamp_ns > 0
    assert other.nothing()


def test_unknown_other_message_gets_unimplemented(sw):
    client, _ = sw
    s = client().primary()
    req = p4runtime_pb2.StreamMessageRequest()
    req.other.CopyFrom(any_pb2.Any(type_url="type.googleapis.com/x.Y", value=b""))
    s.send(req)
    assert s.next("error").error.canonical_code == code_pb2.UNIMPLEMENTED
