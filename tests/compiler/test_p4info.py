"""P4Info: p4c's id scheme, names, aliases and per-resource details."""

from __future__ import annotations

import pytest
from p4c_helpers import PROGRAMS, compile_program

from p4compiler.compiler import compile_file
from p4compiler.errors import CompileError
from p4compiler.p4info import jenkins_one_at_a_time


def by_name(items, name):
    return next(x for x in items if x.preamble.name == name)


def test_ids_match_published_p4c_output_for_the_basic_exercise() -> None:
    # Published p4c P4Info for the tutorials' basic.p4 (same names as our basic_ipv4.p4):
    # MyIngress.ipv4_lpm 37375156, ipv4_forward 28792405, drop 25652968, NoAction 21257015.
    info = compile_file(str(PROGRAMS / "basic_ipv4.p4")).p4info
    assert by_name(info.tables, "MyIngress.ipv4_lpm").preamble.id == 37375156
    assert by_name(info.actions, "MyIngress.ipv4_forward").preamble.id == 28792405
    assert by_name(info.actions, "MyIngress.drop").preamble.id == 25652968
    assert by_name(info.actions, "NoAction").preamble.id == 21257015
    table = by_name(info.tables, "MyIngress.ipv4_lpm")
    assert [r.id for r in table.action_refs] == [28792405, 25652968, 21257015]
    assert table.match_fields[0].name == "hdr.ipv4.dstAddr"
    assert table.size == 1024


def test_id_is_type_prefix_and_low_24_bits_of_jenkins_hash() -> None:
    info = compile_file(str(PROGRAMS / "fabric_snapshot" / "fabric.p4")).p4info
    for kind, items in ((0x02, info.tables), (0x01, info.actions), (0x12, info.counters)):
        for x in items:
            h = jenkins_one_at_a_time(x.preamble.name.encode())
            assert x.preamble.id == (kind << 24) | (h & 0xFFFFFF)


def test_fabric_p4info_lists_what_the_subnet_manager_programs() -> None:
    info = compile_file(str(PROGRAMS / "fabric_snapshot" / "fabric.p4")).p4info
    assert info.pkg_info.arch == "v1model"
    route = by_name(info.tables, "FabricIngress.dlid_route")
    assert route.size == 49152
    assert [(m.id, m.name, m.bitwidth) for m in route.match_fields] == [(1, "hdr.lrh.dlid", 16)]
    forward = by_name(info.actions, "FabricIngress.forward")
    assert [(p.id, p.name, p.bitwidth) for p in forward.params] == [(1, "port", 9)]
    names = {a.preamble.name for a in info.actions}
    assert {"FabricIngress.forward", "FabricIngress.no_route", "FabricIngress.punt_to_cpu",
            "FabricIngress.drop_with_reason"} <= names
    # Actions of an instantiated sub-control carry the instance name, as in p4c.
    assert "FabricIngress.fc_receive.take_credit" in names
    # Top-level externs keep their plain names.
    assert "port_down" in {r.preamble.name for r in info.registers}
    drops = by_name(info.counters, "FabricIngress.drop_counter")
    assert drops.size == 512 * 8 and drops.spec.unit == drops.spec.BOTH
    packet_in = next(c for c in info.controller_packet_metadata
                     if c.preamble.name == "packet_in")
    # p4c hashes the header type's name but shows the annotation's name.
    assert packet_in.preamble.id == (0x04 << 24) | (
        jenkins_one_at_a_time(b"packet_in_t") & 0xFFFFFF)
    assert [(m.id, m.name, m.bitwidth) for m in packet_in.metadata] == [
        (1, "ingress_port", 16), (2, "reason", 16)]


def test_id_annotations_win_and_get_the_type_prefix() -> None:
    r = compile_program("""
        @id(7) action a() { }
        @id(0x02000042) table t { key = { hdr.ipv4.dst: exact; } actions = { a; } }
        apply { t.apply(); }
    """)
    assert by_name(r.p4info.actions, "Ing.a").preamble.id == 0x01000007
    assert by_name(r.p4info.tables, "Ing.t").preamble.id == 0x02000042


def test_name_annotation_sets_the_control_plane_name() -> None:
    r = compile_program("""
        @name("fwd") action a(bit<9> port) { sm.egress_spec = port; }
        @name(".global_table") table t { key = { hdr.ipv4.dst: exact @name("dst_ip"); }
                                          actions = { a; } }
        apply { t.apply(); }
    """)
    t = by_name(r.p4info.tables, "global_table")
    assert t.match_fields[0].name == "dst_ip"
    assert by_name(r.p4info.actions, "Ing.fwd").preamble.alias == "fwd"
    assert any(x["name"] == "global_table" for x in r.json["pipelines"][0]["tables"])


def test_hidden_actions_and_scopes() -> None:
    r = compile_program("""
        action a() { }
        action b() { }
        @hidden action h() { }
        table t {
            key = { hdr.ipv4.dst: ternary; }
            actions = { @tableonly a; @defaultonly b; h; }
            const default_action = b();
            size = 64;
        }
        apply { t.apply(); }
    """)
    t = by_name(r.p4info.tables, "Ing.t")
    scopes = {r.id: r.scope for r in t.action_refs}
    a = by_name(r.p4info.actions, "Ing.a").preamble.id
    b = by_name(r.p4info.actions, "Ing.b").preamble.id
    assert scopes == {a: t.action_refs[0].TABLE_ONLY, b: t.action_refs[0].DEFAULT_ONLY}
    assert t.const_default_action_id == b
    assert t.size == 64
    assert t.match_fields[0].match_type == t.match_fields[0].TERNARY
    assert all(x.preamble.name != "Ing.h" for x in r.p4info.actions)


def test_alias_is_the_shortest_unique_suffix() -> None:
    r = compile_program("""
        action a() { }
        table t { key = { hdr.ipv4.dst: exact; } actions = { a; } }
        apply { t.apply(); }
    """, egress="""
        action a() { }
        table t { key = { hdr.ipv4.src: exact; } actions = { a; } }
        apply { t.apply(); }
    """)
    assert by_name(r.p4info.tables, "Ing.t").preamble.alias == "Ing.t"
    assert by_name(r.p4info.actions, "Eg.a").preamble.alias == "Eg.a"


def test_registers_meters_direct_resources_and_profiles() -> None:
    r = compile_program("""
        register<bit<48>>(16) last_seen;
        meter(32, MeterType.bytes) port_meter;
        direct_counter(CounterType.packets) hits;
        direct_meter<bit<2>>(MeterType.packets) flow_meter;
        action a(bit<9> port) {
            sm.egress_spec = port;
            last_seen.write(0, sm.ingress_global_timestamp);
            port_meter.execute_meter((bit<32>)sm.ingress_port, meta.color);
        }
        action m() { flow_meter.read(meta.color); }
        table t { key = { hdr.ipv4.dst: exact; } actions = { a; m; } counters = hits;
                  meters = flow_meter; support_timeout = true; }
        table sel { key = { hdr.ipv4.dst: exact; hdr.ipv4.src: selector; }
                    actions = { a; }
                    implementation = action_selector(HashAlgorithm.crc16, 32w128, 32w10); }
        apply { t.apply(); sel.apply(); }
    """, meta="bit<2> color;")
    info = r.p4info
    reg = by_name(info.registers, "Ing.last_seen")
    assert reg.size == 16 and reg.type_spec.bitstring.bit.bitwidth == 48
    assert by_name(info.meters, "Ing.port_meter").spec.unit == 1  # BYTES
    t = by_name(info.tables, "Ing.t")
    dc = by_name(info.direct_counters, "Ing.hits")
    dm = by_name(info.direct_meters, "Ing.flow_meter")
    assert dc.direct_table_id == t.preamble.id == dm.direct_table_id
    assert set(t.direct_resource_ids) == {dc.preamble.id, dm.preamble.id}
    assert t.idle_timeout_behavior == t.NOTIFY_CONTROL
    prof = by_name(info.action_profiles, "Ing.sel")
    sel = by_name(info.tables, "Ing.sel")
    assert prof.with_selector and prof.size == 128 and list(prof.table_ids) == [
        sel.preamble.id]
    assert sel.implementation_id == prof.preamble.id
    assert [m.name for m in sel.match_fields] == ["hdr.ipv4.dst"]
    assert prof.preamble.id >> 24 == 0x11 and reg.preamble.id >> 24 == 0x16


def test_digest_has_type_info() -> None:
    r = compile_program("""
        action learn() { digest<learn_t>(1, { hdr.ethernet.src, sm.ingress_port }); }
        table t { key = { hdr.ethernet.src: exact; } actions = { learn; NoAction; }
                  default_action = learn(); }
        apply { t.apply(); }
    """, decls="struct learn_t { bit<48> mac; bit<9> port; }")
    d = r.p4info.digests[0]
    assert d.preamble.name == "learn_t" and d.preamble.id >> 24 == 0x17
    assert d.type_spec.struct.name == "learn_t"
    members = r.p4info.type_info.structs["learn_t"].members
    assert [(m.name, m.type_spec.bitstring.bit.bitwidth) for m in members] == [
        ("mac", 48), ("port", 9)]
    assert r.json["learn_lists"][0]["name"] == "learn_t"


def test_resources_are_listed_in_program_order_as_p4c() -> None:
    """p4c's P4Info lists what it finds in order, not by id: tables by block and
    declaration; actions block by block, the top-level ones a block uses first (in
    program order), then the block's own (as p4c's issue1352-bmv2 and
    custom-type-restricted-fields outputs show)."""
    r = compile_program("""
        action zeta() { }
        action beta() { }
        table t2 { key = { hdr.ipv4.dst: exact; } actions = { alpha; zeta; NoAction; } }
        table t1 { key = { hdr.ipv4.src: exact; } actions = { beta; omega; } }
        apply { t2.apply(); t1.apply(); }
    """, decls="action omega() { }\naction alpha() { }")
    info = r.p4info
    assert [t.preamble.name for t in info.tables] == ["Ing.t2", "Ing.t1"]
    assert [a.preamble.name for a in info.actions] == [
        "NoAction", "omega", "alpha", "Ing.zeta", "Ing.beta"]


def test_pkginfo_annotation_on_main() -> None:
    from p4c_helpers import program

    from p4compiler.compiler import compile_text

    text = program().replace("V1Switch(P()", '@pkginfo(name="fabric", version="1.2")\nV1Switch(P()')
    info = compile_text(text, "t.p4").p4info
    assert (info.pkg_info.name, info.pkg_info.version, info.pkg_info.arch) == (
        "fabric", "1.2", "v1model")


def test_non_const_entries_are_initial_entries() -> None:
    r = compile_program("""
        action a() { }
        table t {
            key = { hdr.ipv4.dst: ternary; }
            actions = { a; }
            entries = { @priority(7) 0x0a000000 &&& 0xff000000: a(); }
        }
        apply { t.apply(); }
    """)
    t = r.p4info.tables[0]
    assert t.has_initial_entries and not t.is_const_table
    assert r.json["pipelines"][0]["tables"][0]["entries"][0]["priority"] == 7


def test_type_and_p4runtime_translation_give_type_name_and_new_types() -> None:
    r = compile_program("""
        action fwd(port_t port, plain_t x, @name("q") vlan_t v) {
            sm.egress_spec = (bit<9>)port; hdr.ipv4.ttl = (bit<8>)x; hdr.ipv4.tos = (bit<8>)v;
        }
        table t { key = { meta.p: exact; meta.s: exact; } actions = { fwd; } }
        apply { t.apply(); }
    """, decls="""
        @p4runtime_translation("fabriclab.org/v1/port_t", 32) type bit<9> port_t;
        @p4runtime_translation("fabriclab.org/v1/vlan_t", bit<16>) type bit<12> vlan_t;
        @p4runtime_translation("fabriclab.org/v1/name_t", string) type bit<8> name_t;
        type bit<10> plain_t;
    """, meta="port_t p; name_t s;")
    info = r.p4info
    t = by_name(info.tables, "Ing.t")
    assert (t.match_fields[0].type_name.name, t.match_fields[0].bitwidth) == ("port_t", 32)
    assert (t.match_fields[1].type_name.name, t.match_fields[1].bitwidth) == ("name_t", 0)
    params = {p.name: p for p in by_name(info.actions, "Ing.fwd").params}
    assert (params["port"].type_name.name, params["port"].bitwidth) == ("port_t", 32)
    assert (params["x"].type_name.name, params["x"].bitwidth) == ("plain_t", 10)
    assert params["q"].bitwidth == 16
    nt = info.type_info.new_types
    assert nt["port_t"].translated_type.uri == "fabriclab.org/v1/port_t"
    assert nt["port_t"].translated_type.sdn_bitwidth == 32
    assert nt["vlan_t"].translated_type.sdn_bitwidth == 16
    assert nt["name_t"].translated_type.HasField("sdn_string")
    assert nt["plain_t"].original_type.bitstring.bit.bitwidth == 10
    # the data plane keeps the P4 width
    j = next(a for a in r.json["actions"] if a["name"] == "Ing.fwd")
    assert [p["bitwidth"] for p in j["runtime_data"]] == [9, 10, 12]


def test_serializable_enums_in_digests_and_registers_get_type_info() -> None:
    r = compile_program("""
        register<Kind>(4) kinds;
        apply {
            kinds.write(0, Kind.B);
            digest<learn_t>(1, { hdr.ethernet.src, Kind.A });
        }
    """, decls="""
        enum bit<8> Kind { A = 1, B = 0x20 }
        struct learn_t { bit<48> mac; Kind kind; }
    """)
    info = r.p4info
    se = info.type_info.serializable_enums["Kind"]
    assert se.underlying_type.bitwidth == 8
    assert [(m.name, m.value) for m in se.members] == [("A", b"\x01"), ("B", b"\x20")]
    members = {m.name: m for m in info.type_info.structs["learn_t"].members}
    assert members["kind"].type_spec.serializable_enum.name == "Kind"
    assert members["mac"].type_spec.bitstring.bit.bitwidth == 48
    reg = by_name(info.registers, "Ing.kinds")
    assert reg.type_spec.serializable_enum.name == "Kind"


def test_an_instance_reached_twice_is_listed_once():
    # a control instance passed to two wrappers (P4_16 10.3): its register is one object
    from pathlib import Path

    p4 = Path(__file__).resolve().parents[1] / "differential" / "programs" / "ctl_control_ctor_arg.p4"
    info = compile_file(str(p4)).p4info
    ids = [r.preamble.id for r in info.registers]
    assert [r.preamble.name for r in info.registers] == ["I.bump.seen"] and len(set(ids)) == 1


def test_action_selector_has_no_max_group_size_unless_annotated() -> None:
    # p4c leaves max_group_size unset (0: no limit) on an action_selector.
    info = compile_program("""
        action a(bit<9> port) { sm.egress_spec = port; }
        table sel { key = { hdr.ipv4.dst: exact; hdr.ipv4.src: selector; }
                    actions = { a; }
                    implementation = action_selector(HashAlgorithm.crc16, 32w128, 32w10); }
        apply { sel.apply(); }
    """).p4info
    assert by_name(info.action_profiles, "Ing.sel").max_group_size == 0


def test_name_on_implementation_property_names_the_profile() -> None:
    # p4c takes @name on the property as the profile's whole name (action_profile-bmv2).
    r = compile_program("""
        action a(bit<9> port) { sm.egress_spec = port; }
        table t { key = { hdr.ipv4.dst: exact; } actions = { a; }
                  @name("ap") implementation = action_profile(32w128); }
        table u { key = { hdr.ipv4.dst: exact; } actions = { a; }
                  implementation = action_profile(32w64); }
        apply { t.apply(); u.apply(); }
    """)
    names = {p.preamble.name for p in r.p4info.action_profiles}
    assert names == {"ap", "Ing.u"}
    ap = by_name(r.p4info.action_profiles, "ap")
    assert by_name(r.p4info.tables, "Ing.t").implementation_id == ap.preamble.id
    assert ap.size == 128
    json_names = {p["name"] for pipe in r.json["pipelines"] for p in pipe["action_profiles"]}
    assert json_names == names


def test_is_valid_key_on_a_union_member_is_named_dollar_valid() -> None:
    # p4c: `hdr.u.short.isValid()` is the match field `hdr.u.short.$valid$`, also inside a
    # stack of unions (issue561-1-bmv2, issue561-4-bmv2); a plain header keeps isValid().
    info = compile_program("""
        action a() { }
        table t { key = { hdr.u.short.isValid(): exact; hdr.us[1].byte.isValid(): exact;
                          hdr.ipv4.isValid(): exact; }
                  actions = { a; } }
        apply { t.apply(); }
    """, decls="""
        header short_t { bit<16> v; }
        header byte_t { bit<8> v; }
        header_union u_t { short_t short; byte_t byte; }
    """, hdrs="u_t u; u_t[2] us;").p4info
    t = by_name(info.tables, "Ing.t")
    assert [(m.name, m.bitwidth) for m in t.match_fields] == [
        ("hdr.u.short.$valid$", 1), ("hdr.us[1].byte.$valid$", 1), ("hdr.ipv4.isValid()", 1)]


def test_serializable_enum_as_a_key_is_listed_in_type_info() -> None:
    # p4c lists a serializable enum used as a match field's type in type_info (with only
    # the bitwidth on the field: table-key-serenum-bmv2); one only used in a header is not.
    info = compile_program("""
        action a() { }
        table t { key = { hdr.e.kind: exact; } actions = { a; } }
        apply { t.apply(); }
    """, decls="""
        enum bit<16> Kind { A = 0x0800, B = 0x86dd }
        enum bit<8> Unused { X = 1 }
        header e_t { Kind kind; Unused other; }
    """, hdrs="e_t e;").p4info
    t = by_name(info.tables, "Ing.t")
    assert (t.match_fields[0].bitwidth, t.match_fields[0].type_name.name) == (16, "")
    assert list(info.type_info.serializable_enums) == ["Kind"]
    kind = info.type_info.serializable_enums["Kind"]
    assert kind.underlying_type.bitwidth == 16
    assert [(m.name, m.value) for m in kind.members] == [("A", b"\x08\x00"), ("B", b"\x86\xdd")]


def test_a_type_of_a_type_has_the_underlying_bits_as_original_type() -> None:
    # p4c (issue1739-bmv2): `type Addr_t Addr2_t;` with `type bit<32> Addr_t;` gives
    # Addr2_t the original_type bit<32>, not a reference to Addr_t.
    info = compile_program("""
        action a(Addr2_t x) { hdr.ipv4.src = (bit<32>)(Addr_t)x; }
        table t { key = { hdr.ipv4.dst: exact; } actions = { a; } }
        apply { t.apply(); }
    """, decls="type bit<32> Addr_t; type Addr_t Addr2_t;").p4info
    param = by_name(info.actions, "Ing.a").params[0]
    assert (param.type_name.name, param.bitwidth) == ("Addr2_t", 32)
    spec = info.type_info.new_types["Addr2_t"].original_type
    assert spec.WhichOneof("type_spec") == "bitstring" and spec.bitstring.bit.bitwidth == 32


def test_action_called_from_the_apply_block_is_listed_without_params() -> None:
    # p4c (gauntlet_side_effect_order_1-bmv2, gauntlet_index_4-bmv2) lists an action the
    # apply block calls, directional parameters or not, with no params (its mid end makes
    # them locals); one only another action calls is not listed; a table's keeps its data.
    info = compile_program("""
        action inner(bit<8> v) { hdr.ipv4.ttl = v; }
        action outer() { inner(8w3); }
        action bump(inout bit<8> x, bit<8> by) { x = x + by; }
        action mark(bit<8> tos) { hdr.ipv4.tos = tos; }
        action set_ttl(bit<8> ttl) { hdr.ipv4.ttl = ttl; }
        table t { key = { hdr.ipv4.dst: exact; } actions = { set_ttl; } }
        apply { bump(hdr.ipv4.ttl, 8w1); mark(8w4); outer(); set_ttl(8w9); t.apply(); }
    """).p4info
    params = {a.preamble.name: [p.name for p in a.params] for a in info.actions}
    assert params == {"Ing.bump": [], "Ing.mark": [], "Ing.outer": [],
                      "Ing.set_ttl": ["ttl"], "NoAction": []}


def test_directly_applied_control_is_named_after_its_type() -> None:
    # p4c (issue1566-bmv2): `E.apply(...)` without an instance declares one the control
    # plane sees as `Outer.E` (cIngress.E.c1.stats), in the JSON too.
    decls = """
        control Count(inout bit<8> x) {
            counter(8, CounterType.packets) stats;
            apply { stats.count(0); x = x + 1; }
        }
    """
    r = compile_program("apply { Count.apply(hdr.ipv4.ttl); Count.apply(hdr.ipv4.tos); }",
                        decls=decls)
    assert [c.preamble.name for c in r.p4info.counters] == ["Ing.Count.stats"]
    assert [c["name"] for c in r.json["counter_arrays"]] == ["Ing.Count.stats"]


def test_directly_applied_control_cannot_share_a_name_with_another_instance() -> None:
    decls = """
        control Count(inout bit<8> x) {
            counter(8, CounterType.packets) stats;
            apply { stats.count(0); }
        }
    """
    # An instance named like its type is the one `Count.apply` applies, as in p4c.
    r = compile_program("Count() Count; apply { Count.apply(hdr.ipv4.ttl); }", decls=decls)
    assert [c.preamble.name for c in r.p4info.counters] == ["Ing.Count.stats"]
    with pytest.raises(CompileError, match="two control instances are named Ing.Count"):
        compile_program("""
            @name("Count") Count() c;
            apply { c.apply(hdr.ipv4.ttl); Count.apply(hdr.ipv4.tos); }
        """, decls=decls)


def test_every_table_has_its_initial_default_action() -> None:
    # Newer p4c writes initial_default_action on every table: the implicit NoAction
    # (drop-bmv2) or the declared one with its arguments in full width
    # (default-action-arg-bmv2: add(10, 0) on bit<32> gives "\0\0\0\n", "\0\0\0\0").
    info = compile_program("""
        action add(bit<32> va, bit<9> vb, bool on) { hdr.ipv4.src = va; sm.egress_spec = vb; }
        table t { key = { hdr.ipv4.dst: exact; } actions = { add; }
                  const default_action = add(10, 0x101, true); }
        table u { key = { hdr.ipv4.dst: exact; } actions = { add; } }
        apply { t.apply(); u.apply(); }
    """).p4info
    add = by_name(info.actions, "Ing.add").preamble.id
    t = by_name(info.tables, "Ing.t").initial_default_action
    assert t.action_id == add
    assert [(a.param_id, a.value) for a in t.arguments] == [
        (1, b"\x00\x00\x00\x0a"), (2, b"\x01\x01"), (3, b"\x01")]
    u = by_name(info.tables, "Ing.u").initial_default_action
    assert (u.action_id, list(u.arguments)) == (by_name(info.actions, "NoAction").preamble.id, [])


def test_initial_default_action_gives_a_serializable_enum_argument_its_value() -> None:
    info = compile_program("""
        action set_kind(Kind k) { hdr.ethernet.etype = (bit<16>)k; }
        table t { key = { hdr.ipv4.dst: exact; } actions = { set_kind; }
                  default_action = set_kind(Kind.B); }
        apply { t.apply(); }
    """, decls="enum bit<16> Kind { A = 0x0800, B = 0x86dd }").p4info
    t = by_name(info.tables, "Ing.t")
    assert t.const_default_action_id == 0
    assert [(a.param_id, a.value) for a in t.initial_default_action.arguments] == [
        (1, b"\x86\xdd")]


def test_annotations_on_an_inline_implementation_configure_its_profile() -> None:
    # p4c's action_profile_max_group_size_annotation sample: @max_group_size on the
    # `implementation` property sets the selector's max_group_size (an action profile
    # without a selector has none), is not a preamble annotation, and a selector's size
    # semantics are sum_of_weights.
    info = compile_program("""
        action a(bit<9> port) { sm.egress_spec = port; }
        table t { key = { hdr.ipv4.dst: exact; } actions = { a; }
                  @name("ap") @max_group_size(200) implementation = action_profile(32w128); }
        table s { key = { hdr.ipv4.src: selector; } actions = { a; }
                  @name("ap_ws") @max_group_size(200)
                  implementation = action_selector(HashAlgorithm.identity, 32w1024, 32w10); }
        apply { t.apply(); s.apply(); }
    """).p4info
    ap, ws = by_name(info.action_profiles, "ap"), by_name(info.action_profiles, "ap_ws")
    assert (ap.max_group_size, ap.HasField("sum_of_weights")) == (0, False)
    assert (ws.max_group_size, ws.HasField("sum_of_weights")) == (200, True)
    assert list(ap.preamble.annotations) == list(ws.preamble.annotations) == []


def test_selector_size_semantics_sum_of_members_with_a_member_weight() -> None:
    info = compile_program("""
        action a(bit<9> port) { sm.egress_spec = port; }
        @max_group_size(8) @selector_size_semantics("sum_of_members") @max_member_weight(4)
        action_selector(HashAlgorithm.crc16, 32w64, 32w16) sel;
        table s { key = { hdr.ipv4.src: selector; } actions = { a; } implementation = sel; }
        apply { s.apply(); }
    """).p4info
    ws = by_name(info.action_profiles, "Ing.sel")
    assert ws.max_group_size == 8 and ws.sum_of_members.max_member_weight == 4
    assert not ws.HasField("sum_of_weights") and list(ws.preamble.annotations) == []
