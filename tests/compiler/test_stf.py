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
    # p4c's semantics: the expected bytes are a prefix unless the line ends with `$`
    assert exp.matches(bytes.fromhex("01ff030405")) and not exp.matches(bytes.fromhex("01ff03"))
    assert none.pattern is None
    assert len(script.setup) == 5


@pytest.mark.parametrize("line", [
    "add T k:1 A(",
    "packet 1 0g",
    "packet 1 ab*c",
    "frobnicate 1",
    "add T k:zz A()",
    "mirror 1",
])
def test_malformed_lines_name_the_line(line: str) -> None:
    with pytest.raises(stf.StfError) as e:
        stf.parse("\n" + line, "x.stf")
    assert str(e.value).startswith("x.stf:2:")


def test_range_keys_in_both_spellings() -> None:
    add = stf.parse("add t k:1..5 a()\nadd t k:0x10->0x20 a()", "x.stf").setup
    assert [(c.keys[0].value, c.keys[0].high) for c in add] == [(1, 5), (16, 32)]


def test_a_lone_last_digit_of_an_input_packet_is_a_byte() -> None:
    # p4c's runner converts input data two digits at a time (gauntlet_index_3's STF).
    pkt = stf.parse("packet 0 00 20 0\npacket 1 ab c", "x.stf").commands
    assert pkt[0].data == b"\x00\x20\x00" and pkt[1].data == b"\xab\x0c"


def test_p4c_dialect_entries() -> None:
    script = stf.parse("""
        ADD t_ternary 10 h.h.t:0x11** a_with_control_params(x:1) = h1
        add ipv4_da_lpm ipv4.dstAddr:0x0a010065 ingress.do_resubmit(new_ipv4_dstAddr:0x0a010001)
        add t h.h.count:0x04 nested_loop()
        add tbl data.$valid$:1 k:0x0a/8 r:010 setb1(val:0x7f, port:2)
    """)
    tern, lpm, exact, mixed = script.commands
    assert tern.priority == 10 and tern.table == "t_ternary"
    assert tern.keys == (stf.KeyMatch("h.h.t", "literal", 0x1100, mask=0xFF00, bits=16),)
    assert tern.action == stf.ActionCall("a_with_control_params", (("x", 1),))
    assert lpm.keys[0] == stf.KeyMatch("ipv4.dstAddr", "literal", 0x0A010065, mask=0xFFFFFFFF,
                                       bits=32)
    assert lpm.action.name == "ingress.do_resubmit" and lpm.priority is None
    assert exact.action == stf.ActionCall("nested_loop")
    assert mixed.keys[0] == stf.KeyMatch("data.$valid$", "exact", 1)
    assert mixed.keys[1] == stf.KeyMatch("k", "lpm", 0x0A, prefix_len=8)
    assert mixed.keys[2].value == 10  # a leading zero is decimal in STF


def test_quoted_names_keep_hash_signs_and_any_characters() -> None:
    # p4testgen quotes every name; @name annotations may give names with `#`, `(`, `)`
    # and non-ASCII characters (p4c's nonstandard_table_names-bmv2)
    script = stf.parse("""
        add "ig.t!@#$%^&*()_+=-p^1" "key#é":0x01 "set#b"("v":0x22)  # comment
        setdefault "ig.t◕‿◕" "ig.a"()
    """)
    add, default = script.commands
    assert add.table == "ig.t!@#$%^&*()_+=-p^1"
    assert add.keys[0].name == "key#é" and add.keys[0].value == 1
    assert add.action == stf.ActionCall("set#b", (("v", 0x22),))
    assert default.table == "ig.t◕‿◕" and default.action == stf.ActionCall("ig.a")


def test_p4c_dialect_expectations_and_control_commands() -> None:
    script = stf.parse("""
        expect 1 01 **** ** ** ** $
        expect 2
        packet 0 01 1111
                 00 00 b0
        mc_mgrp_create 1113
        mc_node_create 400 6 7
        mc_node_associate 1113 0
        mirroring_add 5 4
        mirroring_add_mc 6 1113
        register_write r 3 0x10
        register_reset r
        check_counter cnt(2) packets == 3
        check_counter cnt(4)
        meter_array_set_rates m 0.5:10 1:20
        add t k:1 \\
            a()
        wait
        no_packet
    """)
    exact, anyp, pkt, *rest = script.commands
    assert exact.exact and exact.pattern == "01" + "*" * 10
    assert exact.matches(bytes.fromhex("011111000000")) and not exact.matches(bytes(7))
    assert anyp.any and anyp.pattern is None
    assert pkt.data == bytes.fromhex("011111 0000b0")
    ops = [c.op for c in rest if isinstance(c, stf.Control)]
    assert ops == ["mc_mgrp_create", "mc_node_create", "mc_node_associate", "mirroring_add",
                   "mirroring_add_mc", "register_write", "register_reset",
                   "meter_array_set_rates", "wait", "no_packet"]
    node = next(c for c in rest if getattr(c, "op", "") == "mc_node_create")
    assert node.args == (400, 6, 7)
    checks = [c for c in rest if isinstance(c, stf.CounterCheck)]
    assert checks[0] == stf.CounterCheck("cnt", 2, "packets", "==", 3, checks[0].line)
    assert checks[1].value == 0 and checks[1].op == "=="
    add = next(c for c in rest if isinstance(c, stf.AddEntry))
    assert add.action.name == "a" and add.keys[0].value == 1
    assert script.ports() == {0, 1, 2}


def test_entry_names_counter_writes_and_removes() -> None:
    """p4c's `add ... = ID` and `check_counter C(ID)` (also `$ID`, as p4c's own example
    writes it), `remove NAME`, and simple_switch_CLI's counter/meter commands."""
    script = stf.parse("""
        add t 3 k:1 a(x:2) = first
        add t k:2 a(x:3) = $second priority:4
        check_counter c($first) bytes >= 7
        check_counter c(second)
        remove second
        remove all
        counter_write c 1 5 100
        counter_reset c
        counter_read c 1
        meter_set_rates m 0 0.5:1 1:2
        meter_get_rates m 0
        mirroring_get 4
    """)
    first, second, check1, check2, rm, rmall, *rest = script.commands
    assert (first.handle, first.priority, second.handle, second.priority) == \
        ("first", 3, "$second", 4)
    assert second.action.params == (("x", 3),)
    assert (check1.entry, check1.what, check1.op, check1.value) == ("$first", "bytes", ">=", 7)
    assert check2.entry == "second" and check2.value == 0
    assert (rm.op, rm.args, rmall.op) == ("remove_entry", ("second",), "remove_all")
    assert [(c.op, c.args) for c in rest[:3]] == [
        ("counter_write", ("c", 1, 5, 100)), ("counter_reset", ("c",)), ("counter_read", ("c", 1))]
    assert rest[3].args == ("m", 0, ((0.5, 1), (1.0, 2)))
    assert [c.op for c in rest[4:]] == ["meter_get_rates", "mirroring_get"]


@pytest.mark.parametrize("line, message", [
    ("expect 1 01 $ 02", "'$' may only end"),
    ("mc_node_associate 1", "takes 2 operands"),
    ("check_counter c(1x)", "neither a number nor an entry's NAME"),
    ("meter_array_set_rates m 5", "RATE:BURST"),
    ("remove 3", "remove takes 'all' or an entry's NAME"),
    ("remove a b", "remove takes 'all' or an entry's NAME"),
    ("wait 3", "no operands"),
    ("table_dump t", "unsupported STF command 'table_dump' at line 2"),
    ("act_prof_create_group p 3", "takes a name and 0 handle(s)"),
    ("act_prof_add_member_to_group p 1", "takes a name and 2 handle(s)"),
    ("table_indirect_add t k:1 m", "TABLE [PRIORITY] KEY:VALUE ... HANDLE"),
    ("act_prof_create_member p", "expected ACTION"),
    ("act_prof_modify_member p a(x:1)", "PROFILE MEMBER ACTION"),
    ("act_prof_delete_member p", "takes a name and 1 handle(s)"),
    ("act_prof_remove_member_from_group p 1", "takes a name and 2 handle(s)"),
    ("act_prof_delete_group p 1 2", "takes a name and 1 handle(s)"),
])
def test_malformed_p4c_lines_name_the_line(line: str, message: str) -> None:
    with pytest.raises(stf.StfError) as e:
        stf.parse("# first\n" + line, "y.stf")
    assert str(e.value).startswith("y.stf:2:") and message in str(e.value)


def test_mutated_scripts_parse_or_raise_stf_error() -> None:
    """Bounded fuzz: dropped/duplicated tokens and random bytes never escape as
    anything but StfError."""
    import random

    base = """add t 10 h.a:0x0a** k:0x0a/8 r:1..5 x:0x1&&&0xf act(p:1, q:0x2) = e1
setdefault t act(p:3)
mc_mgrp_create 1
mc_node_create 7 1 2
mc_node_associate 1 0
mirroring_add 5 4
register_write r 1 2
check_counter c(1) packets == 2
meter_array_set_rates m 0.5:10
act_prof_create_member p a(x:1)
act_prof_create_group p
act_prof_add_member_to_group p 0 0
table_indirect_add_with_group t 3 k:0x0a** 0
table_indirect_set_default t 0
packet 0 0102 03
expect 1 01** $
expect 2
wait
"""
    tokens = base.replace("\n", " \n ").split(" ")
    rng = random.Random(18)
    for _ in range(400):
        t = list(tokens)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(t))
            op = rng.randrange(3)
            if op == 0:
                del t[i]
            elif op == 1:
                t.insert(i, t[rng.randrange(len(t))])
            else:
                t[i] = "".join(chr(rng.randrange(32, 127)) for _ in range(rng.randint(1, 5)))
        try:
            stf.parse(" ".join(t), "f.stf")
        except stf.StfError as e:
            assert str(e).startswith("f.stf:")


def test_action_profile_changes() -> None:
    script = stf.parse("""
        act_prof_modify_member p 2 a(x:5)
        act_prof_delete_member p 1
        act_prof_remove_member_from_group p 3 0
        act_prof_delete_group p 0
    """)
    mod, dele, rm, delg = script.commands
    assert (mod.op, mod.target, mod.handles, mod.call.params) == \
        ("act_prof_modify_member", "p", (2,), (("x", 5),))
    assert (dele.handles, rm.handles, delg.handles) == ((1,), (3, 0), (0,))
    assert script.setup == script.commands


def test_action_profile_commands() -> None:
    """simple_switch_CLI's act_prof_* / table_indirect_* with STF's action and key forms."""
    script = stf.parse("""act_prof_create_member ig.p set_o(v:0x11, port:2)
act_prof_create_group sel_t
act_prof_add_member_to_group sel_t 0 1
table_indirect_add t k:1 h.b:0x0a** 0
table_indirect_add_with_group t 7 k:2 1
table_indirect_set_default t 3
table_indirect_set_default_with_group t 0
""")
    c = script.commands
    assert all(isinstance(x, stf.ProfileCommand) for x in c) and script.setup == c
    assert c[0].target == "ig.p" and c[0].call == stf.ActionCall("set_o", (("v", 0x11),
                                                                          ("port", 2)))
    assert c[2].handles == (0, 1)
    assert [k.name for k in c[3].keys] == ["k", "h.b"] and c[3].handles == (0,)
    assert c[3].priority is None and c[4].priority == 7 and c[4].handles == (1,)
    assert c[5].handles == (3,) and c[6].op == "table_indirect_set_default_with_group"
