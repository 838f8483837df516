"""The STF-like test script format (p4compiler.stf)."""

from __future__ import annotations

import pytest

from p4compiler import stf


def test_parses_entries_packets_and_expectations() -> None:
    script = stf.parse("""
        # comment
        add MyIngress.t hdr.ipv4.dstAddr:0x0a000000/8 meta.x:7 MyIngress.fwd(port:2, mac:0x0a) priority:5
        add MyIngress.acl hdr.ipv4.protocol:6&&&0xff hdr.tcp.dstPort:80..90 MyIngress.deny()
        setdefault MyIngress.t MyIngress.drop()
        mcast 1 2 3
        mirror 5 7
        packet 1 0102 0304   # trailing comment
        expect 2 01** 0304
        expect 3 none
    """)
    add, acl, default, mcast, mirror, pkt, exp, none = script.commands
    assert add.table == "MyIngress.t" and add.priority == 5
    assert add.keys == (stf.KeyMatch("hdr.ipv4.dstAddr", "lpm", 0x0A000000, prefix_len=8),
                        stf.KeyMatch("meta.x", "exact", 7))
    assert add.action == stf.ActionCall("MyIngress.fwd", (("port", 2), ("mac", 10)))
    assert acl.keys[0] == stf.KeyMatch("hdr.ipv4.protocol", "ternary", 6, mask=0xFF)
    assert acl.keys[1] == stf.KeyMatch("hdr.tcp.dstPort", "range", 80, high=90)
    assert default.action.name == "MyIngress.drop"
    assert mcast == stf.McastGroup(1, (2, 3), mcast.line)
    assert mirror.session == 5 and mirror.port == 7
    assert pkt.port == 1 and pkt.data == bytes.fromhex("01020304")
    assert exp.matches(bytes.fromhex("01ff0304")) and not exp.matches(bytes.fromhex("02ff0304"))
    assert not exp.matches(bytes.fromhex("01ff030405"))
    assert none.pattern is None
    assert len(script.setup) == 5


@pytest.mark.parametrize("line", [
    "add T k:1 A(",
    "packet 1 0g",
    "packet 1 abc",
    "frobnicate 1",
    "add T k:zz A()",
    "mirror 1",
])
def test_malformed_lines_name_the_line(line: str) -> None:
    with pytest.raises(stf.StfError) as e:
        stf.parse("\n" + line, "x.stf")
    assert str(e.value).startswith("x.stf:2:")
