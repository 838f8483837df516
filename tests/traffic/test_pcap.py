"""The streaming pcap reader: formats it reads and the errors it gives on bad files."""

from __future__ import annotations

import struct

import pytest

from traffic.pcap import PcapError, read_frames, write_pcap

FRAMES = [(1_700_000_000_123_456_789, b"\x01" * 60), (1_700_000_001_000_000_001, b"\x02" * 90)]


def test_nanosecond_pcap_round_trip(tmp_path):
    path = tmp_path / "a.pcap"
    assert write_pcap(path, FRAMES) == 2
    assert list(read_frames(path)) == FRAMES


@pytest.mark.parametrize("order", ["<", ">"])
def test_microsecond_pcap_in_either_byte_order(tmp_path, order):
    path = tmp_path / "us.pcap"
    with open(path, "wb") as f:
        f.write(struct.pack(order + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        f.write(struct.pack(order + "IIII", 10, 250, 4, 4) + b"abcd")
    assert list(read_frames(path)) == [(10_000_250_000, b"abcd")]


def _pcapng_block(btype: int, body: bytes) -> bytes:
    body += b"\0" * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def test_pcapng_with_nanosecond_interface(tmp_path):
    shb = _pcapng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    tsresol = struct.pack("<HHB3x", 9, 1, 9) + struct.pack("<HH", 0, 0)
    idb = _pcapng_block(1, struct.pack("<HHI", 1, 0, 256) + tsresol)
    ts = 1_700_000_000_123_456_789
    epb = _pcapng_block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, 5, 5) + b"hello")
    path = tmp_path / "a.pcapng"
    path.write_bytes(shb + idb + epb)
    assert list(read_frames(path)) == [(ts, b"hello")]


def test_truncated_record_names_file_and_offset_after_yielding_good_frames(tmp_path):
    path = tmp_path / "cut.pcap"
    write_pcap(path, FRAMES)
    path.write_bytes(path.read_bytes()[:-10])
    got = []
    with pytest.raises(PcapError) as err:
        for rec in read_frames(path):
            got.append(rec)
    assert got == FRAMES[:1]
    assert err.value.offset == 24 + 16 + 60
    assert str(path) in str(err.value) and "truncated record" in str(err.value)


def test_garbage_is_not_a_capture(tmp_path):
    path = tmp_path / "junk.pcap"
    path.write_bytes(b"this is not a pcap file")
    with pytest.raises(PcapError, match="not a pcap"):
        list(read_frames(path))


def test_corrupt_record_length_is_reported(tmp_path):
    path = tmp_path / "bad.pcap"
    write_pcap(path, FRAMES[:1])
    data = bytearray(path.read_bytes())
    data[24 + 8:24 + 12] = struct.pack("<I", 10**9)
    path.write_bytes(bytes(data))
    with pytest.raises(PcapError, match="corrupt") as err:
        list(read_frames(path))
    assert err.value.offset == 24


def test_reads_what_scapy_writes_as_pcapng(tmp_path):
    from scapy.layers.l2 import Ether
    from scapy.utils import PcapNgWriter

    from traffic.frames import APP, BTH, LRH

    frame = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01") / LRH() / BTH(psn=4) / APP()
    frame.time = 1_700_000_000.5
    writer = PcapNgWriter(str(tmp_path / "s.pcapng"))
    writer.write(frame)
    writer.close()
    [(ts, data)] = list(read_frames(tmp_path / "s.pcapng"))
    assert data == bytes(frame) and abs(ts - 1_700_000_000_500_000_000) < 1000
