"""Streaming pcap / pcapng reading (and pcap writing) with struct, no Scapy.

`read_frames(path)` yields (timestamp ns, frame bytes) one record at a time, so
a capture of millions of frames is never held in memory. Classic pcap in both
byte orders with micro- or nanosecond timestamps, and pcapng (section header,
interface description with if_tsresol, enhanced and simple packet blocks) are
read. A truncated or corrupt file raises `PcapError` naming the file and the
byte offset of the bad record, after every good record before it was yielded:
the analysis keeps what it got and marks its result partial.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from pathlib import Path

LINKTYPE_ETHERNET = 1
MAX_SNAPLEN = 262144  # larger record lengths mean a corrupt file

_PCAP_MAGIC = {  # magic as read little-endian -> (byte order, ticks per second)
    0xA1B2C3D4: ("<", 1_000_000),
    0xA1B23C4D: ("<", 1_000_000_000),
    0xD4C3B2A1: (">", 1_000_000),
    0x4D3CB2A1: (">", 1_000_000_000),
}
_PCAPNG_SHB = 0x0A0D0D0A
_PCAPNG_BYTE_ORDER_MAGIC = 0x1A2B3C4D


class PcapError(Exception):
    """A capture file that cannot be read past `offset`."""

    def __init__(self, path: Path | str, offset: int, what: str) -> None:
        super().__init__(f"{path}: at byte {offset}: {what}")
        self.path = str(path)
        self.offset = offset
        self.what = what


def read_frames(path: Path | str) -> Iterator[tuple[int, bytes]]:
    """(timestamp in ns since the epoch, frame bytes) for every Ethernet frame in the file."""
    with open(path, "rb") as f:
        head = f.read(4)
        if len(head) < 4:
            raise PcapError(path, 0, f"file too short for a capture header ({len(head)} bytes)")
        (magic,) = struct.unpack("<I", head)
        if magic in _PCAP_MAGIC:
            yield from _read_pcap(path, f, *_PCAP_MAGIC[magic])
        elif magic == _PCAPNG_SHB:
            yield from _read_pcapng(path, f)
        else:
            raise PcapError(path, 0, f"not a pcap or pcapng file (magic {magic:#010x})")


def _read_pcap(path, f, order: str, ticks: int) -> Iterator[tuple[int, bytes]]:
    rest = f.read(20)
    if len(rest) < 20:
        raise PcapError(path, 4, "truncated pcap file header")
    _major, _minor, _zone, _sigfigs, _snaplen, linktype = struct.unpack(order + "HHiIII", rest)
    if linktype & 0xFFFF != LINKTYPE_ETHERNET:
        raise PcapError(path, 20, f"link type {linktype}, expected Ethernet ({LINKTYPE_ETHERNET})")
    record = struct.Struct(order + "IIII")
    scale = 1_000_000_000 // ticks
    offset = 24
    read = f.read
    while True:
        hdr = read(16)
        if not hdr:
            return
        if len(hdr) < 16:
            raise PcapError(path, offset, f"truncated record header ({len(hdr)} of 16 bytes)")
        sec, frac, caplen, _origlen = record.unpack(hdr)
        if caplen > MAX_SNAPLEN:
            raise PcapError(path, offset, f"record length {caplen} exceeds {MAX_SNAPLEN}: corrupt")
        data = read(caplen)
        if len(data) < caplen:
            raise PcapError(path, offset, f"truncated record ({len(data)} of {caplen} bytes)")
        yield sec * 1_000_000_000 + frac * scale, data
        offset += 16 + caplen


def _read_pcapng(path, f) -> Iterator[tuple[int, bytes]]:
    offset = 0
    order = "<"
    resolutions: list[tuple[int, bool]] = []  # per interface: (ticks per second, is Ethernet)
    f.seek(0)
    while True:
        head = f.read(8)
        if not head:
            return
        if len(head) < 8:
            raise PcapError(path, offset, "truncated block header")
        if struct.unpack("<I", head[:4])[0] == _PCAPNG_SHB:
            bom = f.read(4)
            if len(bom) < 4:
                raise PcapError(path, offset, "truncated section header")
            order = "<" if struct.unpack("<I", bom)[0] == _PCAPNG_BYTE_ORDER_MAGIC else ">"
            if struct.unpack(order + "I", bom)[0] != _PCAPNG_BYTE_ORDER_MAGIC:
                raise PcapError(path, offset, "bad pcapng byte-order magic")
            f.seek(-4, 1)
            resolutions = []
        btype, blen = struct.unpack(order + "II", head)
        if blen < 12 or blen % 4 or blen > MAX_SNAPLEN + 64:
            raise PcapError(path, offset, f"block length {blen} is not valid: corrupt")
        body = f.read(blen - 8)
        if len(body) < blen - 8:
            raise PcapError(path, offset, f"truncated block ({len(body) + 8} of {blen} bytes)")
        body = body[:-4]  # trailing copy of the block length
        if btype == 1:  # interface description
            linktype = struct.unpack(order + "H", body[:2])[0]
            resolutions.append((_if_tsresol(body[8:], order), linktype == LINKTYPE_ETHERNET))
        elif btype == 6:  # enhanced packet
            iface, ts_hi, ts_lo, caplen, _orig = struct.unpack(order + "IIIII", body[:20])
            if iface >= len(resolutions):
                raise PcapError(path, offset, f"packet on undeclared interface {iface}")
            ticks, is_ethernet = resolutions[iface]
            if caplen > len(body) - 20:
                raise PcapError(path, offset, f"record length {caplen} exceeds its block")
            if is_ethernet:
                yield ((ts_hi << 32) | ts_lo) * 1_000_000_000 // ticks, body[20:20 + caplen]
        elif btype == 3:  # simple packet: no timestamp, no capture length
            if resolutions and resolutions[0][1]:
                orig = struct.unpack(order + "I", body[:4])[0]
                yield 0, body[4:4 + orig]
        offset += blen


def _if_tsresol(options: bytes, order: str) -> int:
    """Ticks per second of an interface from its if_tsresol option (default microseconds)."""
    pos = 0
    while pos + 4 <= len(options):
        code, length = struct.unpack(order + "HH", options[pos:pos + 4])
        if code == 0:
            break
        if code == 9 and length >= 1:
            v = options[pos + 4]
            return 2 ** (v & 0x7F) if v & 0x80 else 10 ** v
        pos += 4 + length + (-length % 4)
    return 1_000_000


def write_pcap(path: Path | str, frames: Iterable[tuple[int, bytes]]) -> int:
    """Write (ts ns, frame) records as a nanosecond pcap of Ethernet frames; returns the count."""
    n = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, MAX_SNAPLEN, LINKTYPE_ETHERNET))
        for ts, data in frames:
            sec, nsec = divmod(ts, 1_000_000_000)
            f.write(struct.pack("<IIII", sec, nsec, len(data), len(data)))
            f.write(data)
            n += 1
    return n
