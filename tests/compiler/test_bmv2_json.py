"""bmv2 JSON per construct: the facts a bmv2-compatible switch relies on."""

from __future__ import annotations

from p4c_helpers import action, compile_program, pipeline, table


def test_top_level_layout_follows_p4c() -> None:
    j = compile_program().json
    assert j["header_types"][0]["name"] == "scalars_0"
    sm = j["header_types"][1]
    assert sm["name"] == "standard_metadata"
    assert sm["fields"][0] == ["ingress_port", 9, False]
    assert sm["fields"][-1] == ["_padding", 3, False]
    assert [h["name"] for h in j["headers"][:4]] == ["scalars", "standard_metadata",
                                                    "ethernet", "ipv4"]
    assert j["errors"][:3] == [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2]]
    assert [p["name"] for p in j["pipelines"]] == ["ingress", "egress"]
    assert j["__meta__"]["version"] == [2, 23]
    assert ["intrinsic_metadata.mcast_grp", ["standard_metadata", "mcast_grp"]] in \
        j["field_aliases"]


def test_metadata_and_locals_live_in_scalars() -> None:
    r = compile_program("""
        apply { bit<16> x = hdr.ipv4.len; meta.flag = x == 5; meta.n = x; }
    """, meta="bool flag; bit<16> n;")
    fields = r.json["header_types"][0]["fields"]
    assert ["userMetadata.flag", 1, False] in fields
    assert ["userMetadata.n", 16, False] in fields
    assert ["x_0", 16, False] in fields
    assert sum(f[1] for f in fields) % 8 == 0
    prims = r.json["actions"][0]["primitives"]
    assert prims[1]["parameters"][1]["value"]["value"]["op"] == "b2d"


def test_wrap_around_arithmetic_is_masked() -> None:
    r = compile_program("""
        action a() { hdr.ipv4.ttl = hdr.ipv4.ttl - 1; hdr.ipv4.len = hdr.ipv4.len + hdr.ipv4.id; }
        apply { a(); }
    """)
    p = action(r, "Ing.a")["primitives"]
    dec = p[0]["parameters"][1]["value"]["value"]
    assert dec["op"] == "&" and dec["right"]["value"] == "0xff"
    assert dec["left"]["value"] == {"op": "+", "left": {"type": "field",
                                                        "value": ["ipv4", "ttl"]},
                                    "right": {"type": "hexstr", "value": "0xff"}}
    assert p[1]["parameters"][1]["value"]["value"]["right"]["value"] == "0xffff"


def test_signed_and_saturating_arithmetic() -> None:
    r = compile_program("""
        action a() {
            meta.s = meta.s + 1;
            hdr.ipv4.ttl = hdr.ipv4.ttl |+| 200;
        }
        apply { a(); }
    """, meta="int<8> s;")
    p = action(r, "Ing.a")["primitives"]
    assert p[0]["parameters"][1]["value"]["value"]["op"] == "two_comp_mod"
    assert p[1]["parameters"][1]["value"]["value"]["op"] == "usat_cast"


def test_casts_slices_and_concatenation() -> None:
    r = compile_program("""
        action a() {
            meta.w = hdr.ipv4.src[15:0] ++ hdr.ipv4.ttl;
            hdr.ipv4.tos[3:0] = 4w5;
            meta.b = (bit<8>)hdr.ipv4.len;
        }
        apply { a(); }
    """, meta="bit<24> w; bit<8> b;")
    p = action(r, "Ing.a")["primitives"]
    concat = p[0]["parameters"][1]["value"]["value"]
    assert concat["op"] == "&" and concat["left"]["value"]["op"] == "|"
    assert p[1]["parameters"][0]["value"] == ["ipv4", "tos"]
    assert p[1]["parameters"][1]["value"]["value"]["op"] == "|"
    assert p[2]["parameters"][1]["value"]["value"] == {
        "op": "&", "left": {"type": "field", "value": ["ipv4", "len"]},
        "right": {"type": "hexstr", "value": "0xff"}}


def test_if_inside_an_action_uses_absolute_jumps() -> None:
    r = compile_program("""
        action a() {
            if (hdr.ipv4.ttl == 0) { mark_to_drop(sm); } else { hdr.ipv4.ttl = 7; }
            hdr.ipv4.tos = 1;
        }
        apply { a(); }
    """)
    p = action(r, "Ing.a")["primitives"]
    assert [x["op"] for x in p] == ["_jump_if_zero", "mark_to_drop", "_jump", "assign",
                                    "assign"]
    assert p[0]["parameters"][1] == {"type": "hexstr", "value": "0x3"}
    assert p[2]["parameters"][0] == {"type": "hexstr", "value": "0x4"}
    assert p[0]["parameters"][0]["value"]["value"]["op"] == "b2d"


def test_direct_action_calls_become_hidden_tables_with_const_data() -> None:
    r = compile_program("""
        action set(bit<8> v) { hdr.ipv4.ttl = v; }
        apply { set(42); }
    """)
    t = table(r, "tbl_set")
    assert t["key"] == [] and t["actions"] == ["Ing.set"]
    assert t["default_entry"] == {"action_id": action(r, "Ing.set")["id"],
                                  "action_const": True, "action_data": ["0x2a"],
                                  "action_entry_const": True}
    assert pipeline(r)["init_table"] == "tbl_set"


def test_conditionals_and_next_tables() -> None:
    r = compile_program("""
        table t { key = { hdr.ipv4.dst: lpm; } actions = { NoAction; } }
        apply { if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) { t.apply(); } }
    """)
    p = pipeline(r)
    c = p["conditionals"][0]
    assert p["init_table"] == c["name"] == "node_2"
    assert c["expression"]["value"]["op"] == "and"
    assert c["true_next"] == "Ing.t" and c["false_next"] is None
    t = table(r, "Ing.t")
    assert t["match_type"] == "lpm" and t["max_size"] == 1024
    assert t["key"] == [{"match_type": "lpm", "name": "hdr.ipv4.dst",
                         "target": ["ipv4", "dst"], "mask": None}]
    assert t["next_tables"] == {"NoAction": None}
    # no default_action declared: p4c's front end adds `default_action = NoAction()`
    assert t["default_entry"] == {"action_id": action(r, "NoAction")["id"],
                                  "action_const": False, "action_data": [],
                                  "action_entry_const": False}


def test_switch_on_action_run_and_hit_miss() -> None:
    r = compile_program("""
        action a() { } action b() { }
        table t { key = { hdr.ipv4.dst: exact; } actions = { a; b; } }
        table u { key = { hdr.ipv4.src: exact; } actions = { a; } }
        table v { key = { hdr.ipv4.id: exact; } actions = { a; } }
        apply {
            switch (t.apply().action_run) {
                a: { u.apply(); }
                default: { }
            }
            if (!v.apply().hit) { hdr.ipv4.ttl = 0; }
        }
    """)
    t = table(r, "Ing.t")
    # NoAction is t's implicit (default-only) action, taken by the `default:` case
    assert t["next_tables"] == {"Ing.a": "Ing.u", "Ing.b": "Ing.v", "NoAction": "Ing.v"}
    v = table(r, "Ing.v")
    assert v["base_default_next"] is None
    assert v["next_tables"]["__HIT__"] is None
    assert v["next_tables"]["__MISS__"].startswith("tbl_")


def test_switch_on_a_value_becomes_conditionals() -> None:
    r = compile_program("""
        apply {
            switch (hdr.ipv4.proto) {
                6: { hdr.ipv4.ttl = 1; }
                17:
                18: { hdr.ipv4.ttl = 2; }
                default: { hdr.ipv4.ttl = 3; }
            }
        }
    """)
    conds = pipeline(r)["conditionals"]
    assert len(conds) == 2
    assert conds[1]["expression"]["value"]["op"] == "or"


def test_const_entries_with_priorities_and_match_kinds() -> None:
    r = compile_program("""
        action a(bit<8> v) { hdr.ipv4.ttl = v; }
        table t {
            key = { hdr.ipv4.dst: ternary; hdr.ipv4.proto: range; }
            actions = { a; NoAction; }
            const entries = {
                (0x0a000000 &&& 0xff000000, 1 .. 10): a(1);
                (_, _): a(2) @priority(100);
                (0x0b000001, 6): NoAction();
            }
        }
        apply { t.apply(); }
    """)
    t = table(r, "Ing.t")
    assert t["match_type"] == "range"
    e = t["entries"]
    assert e[0]["match_key"] == [
        {"match_type": "ternary", "key": "0x0a000000", "mask": "0xff000000"},
        {"match_type": "range", "start": "0x01", "end": "0x0a"}]
    assert e[0]["action_entry"]["action_data"] == ["0x1"]
    assert [x["priority"] for x in e] == [1, 100, 3]
    assert e[1]["match_key"][0]["mask"] == "0x00000000"
    assert r.p4info.tables[0].is_const_table


def test_optional_keys_are_ternary_keys_for_bmv2() -> None:
    # bmv2 has no "optional" match type: value -> full mask, `_` -> zero mask.
    r = compile_program("""
        action a(bit<8> v) { hdr.ipv4.ttl = v; }
        table t {
            key = { hdr.ipv4.proto: optional; hdr.ipv4.tos: optional; }
            actions = { a; }
            const entries = { (6, _): a(1); (_, 3): a(2); }
        }
        apply { t.apply(); }
    """)
    t = table(r, "Ing.t")
    assert t["match_type"] == "ternary"
    assert [k["match_type"] for k in t["key"]] == ["ternary", "ternary"]
    assert t["entries"][0]["match_key"] == [
        {"match_type": "ternary", "key": "0x06", "mask": "0xff"},
        {"match_type": "ternary", "key": "0x00", "mask": "0x00"}]
    mf = r.p4info.tables[0].match_fields
    assert [f.match_type for f in mf] == [mf[0].OPTIONAL, mf[0].OPTIONAL]


def test_counters_meters_registers() -> None:
    r = compile_program("""
        counter(64, CounterType.packets) c;
        direct_counter(CounterType.bytes) dc;
        meter(8, MeterType.packets) m;
        register<bit<32>>(16) reg;
        action a() {
            c.count((bit<32>)sm.ingress_port);
            m.execute_meter(32w1, meta.color);
            reg.read(meta.v, 3);
            reg.write(3, meta.v + 1);
            meta.v = reg.read(4);
            dc.count();
        }
        table t { key = { hdr.ipv4.dst: exact; } actions = { a; } counters = dc; }
        apply { t.apply(); }
    """, meta="bit<2> color; bit<32> v;")
    j = r.json
    assert {"name": "Ing.c", "size": 64, "is_direct": False} .items() <= j["counter_arrays"][0].items()
    assert j["counter_arrays"][1]["binding"] == "Ing.t" and j["counter_arrays"][1]["is_direct"]
    assert table(r, "Ing.t")["with_counters"] is True
    assert j["meter_arrays"][0]["type"] == "packets" and j["meter_arrays"][0]["rate_count"] == 2
    assert j["register_arrays"][0] == {**j["register_arrays"][0], "size": 16, "bitwidth": 32}
    ops = [p["op"] for p in action(r, "Ing.a")["primitives"]]
    assert ops == ["count", "execute_meter", "register_read", "register_write",
                   "register_read"]


def test_direct_meter_reads_into_its_result_target() -> None:
    r = compile_program("""
        direct_meter<bit<2>>(MeterType.bytes) dm;
        action a() { dm.read(meta.color); }
        table t { key = { hdr.ipv4.dst: exact; } actions = { a; } meters = dm; }
        apply { t.apply(); }
    """, meta="bit<2> color;")
    m = r.json["meter_arrays"][0]
    assert m["is_direct"] and m["binding"] == "Ing.t"
    assert m["result_target"] == ["scalars", "userMetadata.color"]
    assert table(r, "Ing.t")["direct_meters"] == "Ing.dm"


def test_action_profiles_and_selectors() -> None:
    r = compile_program("""
        action a(bit<9> p) { sm.egress_spec = p; }
        table t { key = { hdr.ipv4.dst: exact; } actions = { a; }
                  implementation = action_profile(32w64); }
        table s { key = { hdr.ipv4.dst: lpm; hdr.ipv4.src: selector; hdr.ipv4.proto: selector; }
                  actions = { a; }
                  implementation = action_selector(HashAlgorithm.crc32, 32w256, 32w14); }
        apply { t.apply(); s.apply(); }
    """)
    t, s = table(r, "Ing.t"), table(r, "Ing.s")
    assert t["type"] == "indirect" and t["action_profile"] == "Ing.t"
    assert s["type"] == "indirect_ws" and len(s["key"]) == 1
    profiles = {p["name"]: p for p in pipeline(r)["action_profiles"]}
    assert profiles["Ing.t"]["max_size"] == 64
    assert profiles["Ing.s"]["selector"]["algo"] == "crc32"
    assert [x["value"] for x in profiles["Ing.s"]["selector"]["input"]] == [
        ["ipv4", "src"], ["ipv4", "proto"]]


def test_a_selector_shared_by_tables_hashes_one_input() -> None:
    """bmv2 hashes one input per action selector: tables sharing one must give it the
    same selector keys (p4c's SharedActionSelectorCheck), else an error at the selector."""
    import pytest

    from p4compiler.errors import CompileError

    text = """
        action a() { }
        action_selector(HashAlgorithm.crc16, 32w64, 32w14) sel;
        table s1 { key = { hdr.ipv4.dst: exact; hdr.ipv4.src: selector; }
                   actions = { a; } implementation = sel; }
        table s2 { key = { hdr.ipv4.proto: exact; KEY: selector; }
                   actions = { a; } implementation = sel; }
        apply { s1.apply(); s2.apply(); }
    """
    r = compile_program(text.replace("KEY", "hdr.ipv4.src"))
    (prof,) = pipeline(r)["action_profiles"]
    assert [x["value"] for x in prof["selector"]["input"]] == [["ipv4", "src"]]
    with pytest.raises(CompileError, match="Action selector sel is used by multiple tables "
                                           "with different selector inputs"):
        compile_program(text.replace("KEY", "hdr.ipv4.dst"))


def test_v1model_externs_map_to_bmv2_primitives() -> None:
    r = compile_program("""
        action a() {
            clone(CloneType.I2E, 5);
            clone_preserving_field_list(CloneType.I2E, 6, 1);
            resubmit_preserving_field_list(1);
            recirculate_preserving_field_list(1);
            random(meta.r, 0, 255);
            hash(meta.h, HashAlgorithm.crc16, 16w0, { hdr.ipv4.src, hdr.ipv4.dst }, 32w1024);
            truncate(64);
            log_msg("ttl={}", { hdr.ipv4.ttl });
            assert(hdr.ipv4.isValid());
            digest<d_t>(1, { hdr.ipv4.src });
        }
        apply { a(); }
    """, meta="@field_list(1) bit<8> r; bit<16> h;", decls="struct d_t { bit<32> src; }")
    p = action(r, "Ing.a")["primitives"]
    assert [x["op"] for x in p] == [
        "clone_ingress_pkt_to_egress", "clone_ingress_pkt_to_egress", "resubmit",
        "recirculate", "modify_field_rng_uniform", "modify_field_with_hash_based_offset",
        "truncate", "log_msg", "assert", "generate_digest"]
    # a plain clone preserves an empty list (bmv2 looks every clone's list up); ids from 1
    assert p[0]["parameters"][1] == {"type": "hexstr", "value": "0x1"}
    assert r.json["field_lists"][0] == {"id": 1, "name": "empty", "elements": []}
    assert p[1]["parameters"][1] == {"type": "hexstr", "value": "0x2"}
    assert r.json["field_lists"][1] == {"id": 2, "name": "field_list1", "elements": [
        {"type": "field", "value": ["scalars", "userMetadata.r"]}]}
    assert p[5]["parameters"][2] == {"type": "calculation", "value": "calc"}
    assert r.json["calculations"][0]["algo"] == "crc16"
    assert p[7]["parameters"][0] == {"type": "string", "value": "ttl={}"}
    assert r.json["learn_lists"][0]["elements"] == [{"type": "field",
                                                     "value": ["ipv4", "src"]}]


def test_parser_select_masks_ranges_tuples_and_value_sets() -> None:
    r = compile_program(parser="""
        value_set<bit<16>>(4) custom;
        state start {
            pkt.extract(hdr.ethernet);
            transition select(hdr.ethernet.etype, hdr.ethernet.dst[7:0]) {
                (0x0800, 0x01 &&& 0x0f): parse_ipv4;
                (0x0800, _): parse_ipv4;
                (0x86dd .. 0x86df, 0): reject;
                default: next;
            }
        }
        state next {
            verify(hdr.ethernet.src != 0, error.PacketTooShort);
            transition select(hdr.ethernet.etype) { custom: parse_ipv4; default: accept; }
        }
        state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
    """)
    states = {s["name"]: s for s in r.json["parsers"][0]["parse_states"]}
    start = states["start"]
    assert start["transition_key"][0] == {"type": "field", "value": ["ethernet", "etype"]}
    tr = start["transitions"]
    assert tr[0] == {"type": "hexstr", "value": "0x080001", "mask": "0xffff0f",
                     "next_state": "parse_ipv4"}
    assert tr[1]["mask"] == "0xffff00"
    assert tr[2]["value"] == "0x86dc00"[:0] + "0x86dd00" and tr[2]["next_state"] == "reject"
    assert tr[3]["value"] == "0x86de00" and tr[3]["mask"] == "0xfffeff"
    assert tr[-1]["type"] == "default" and tr[-1]["next_state"] == "next"
    assert states["next"]["parser_ops"][0]["op"] == "verify"
    assert states["next"]["transitions"][0] == {"type": "parse_vset", "value": "P.custom",
                                                "mask": None, "next_state": "parse_ipv4"}
    assert r.json["parse_vsets"] == [{"name": "P.custom", "id": 0, "compressed_bitwidth": 16}]
    assert states["reject"]["parser_ops"][0]["op"] == "verify"
    assert r.p4info.value_sets[0].preamble.name == "P.custom"


def test_varbit_extract_and_header_unions() -> None:
    r = compile_program(parser="""
        state start {
            pkt.extract(hdr.ethernet);
            pkt.extract(hdr.opts, (bit<32>)hdr.ethernet.etype[3:0] * 32);
            transition select(hdr.ethernet.etype) {
                1: one;
                default: accept;
            }
        }
        state one { pkt.extract(hdr.u.a); transition accept; }
    """, decls="""
        header opts_t { varbit<320> data; }
        header a_t { bit<8> x; }
        header b_t { bit<16> y; }
        header_union u_t { a_t a; b_t b; }
    """, hdrs="opts_t opts; u_t u;")
    types = {t["name"]: t for t in r.json["header_types"]}
    assert types["opts_t"]["fields"] == [["data", "*"]] and types["opts_t"]["max_length"] == 40
    ops = r.json["parsers"][0]["parse_states"][0]["parser_ops"]
    assert ops[1]["op"] == "extract_VL"
    assert r.json["header_unions"][0]["name"] == "u"
    assert {h["name"] for h in r.json["headers"]} >= {"u.a", "u.b", "opts"}


def test_functions_enums_typedefs_and_newtypes() -> None:
    r = compile_program("""
        action a() {
            hdr.ipv4.ttl = dec(hdr.ipv4.ttl);
            meta.c = Color.GREEN;
            meta.p = (port_id_t)9w3;
        }
        apply { a(); }
    """, decls="""
        enum bit<8> Color { RED = 1, GREEN = 2 }
        type bit<9> port_id_t;
        typedef bit<8> byte_t;
        function byte_t dec(in byte_t x) { return x - 1; }
    """, meta="Color c; port_id_t p;")
    p = action(r, "Ing.a")["primitives"]
    assert p[0]["parameters"][1]["value"]["value"]["op"] == "&"
    assert p[1]["parameters"][1] == {"type": "hexstr", "value": "0x02"}
    assert r.json["enums"] == [{"name": "Color", "entries": [["RED", 1], ["GREEN", 2]]}]


def test_exit_and_return_in_apply() -> None:
    r = compile_program("""
        table t { key = { hdr.ipv4.dst: exact; } actions = { NoAction; } }
        apply {
            if (!hdr.ipv4.isValid()) { return; }
            if (hdr.ipv4.ttl == 0) { exit; }
            t.apply();
        }
    """)
    conds = pipeline(r)["conditionals"]
    assert conds[0]["true_next"] is None
    exits = [a for a in r.json["actions"] if any(p["op"] == "exit" for p in a["primitives"])]
    assert len(exits) == 1


def test_header_stacks_push_pop_and_emit() -> None:
    r = compile_program("""
        action a() { hdr.tags.push_front(1); hdr.tags[0].setValid(); hdr.tags[0].v = 1;
                     hdr.tags.pop_front(2); }
        apply { a(); }
    """, decls="header tag_t { bit<16> v; }", hdrs="tag_t[3] tags;")
    ops = [(p["op"], p["parameters"][0]) for p in action(r, "Ing.a")["primitives"]]
    assert ops[0] == ("push", {"type": "header_stack", "value": "tags"})
    assert ops[1] == ("add_header", {"type": "header", "value": "tags[0]"})
    assert r.json["header_stacks"][0]["size"] == 3


def test_checksums_verify_and_update() -> None:
    r = compile_program(compute="""
        apply {
            update_checksum(hdr.ipv4.isValid(), { hdr.ipv4.version, hdr.ipv4.ihl, 8w0 },
                            hdr.ipv4.csum, HashAlgorithm.csum16);
            update_checksum_with_payload(true, { hdr.ipv4.src }, hdr.ipv4.id,
                                         HashAlgorithm.csum16);
        }
    """)
    c = r.json["checksums"]
    assert c[0]["target"] == ["ipv4", "csum"] and c[0]["update"] and not c[0]["verify"]
    assert c[0]["if_cond"]["value"]["op"] == "d2b"
    assert c[1]["if_cond"] is None
    calc = r.json["calculations"]
    assert calc[0]["input"][2] == {"type": "hexstr", "value": "0x00", "bitwidth": 8}
    assert calc[1]["input"][-1]["type"] == "payload"


def test_computed_table_keys_go_through_a_temporary() -> None:
    r = compile_program("""
        table t { key = { hdr.ipv4.dst + 1: exact @name("hdr.ipv4.dst + 1");
                          hdr.ipv4.isValid(): exact;
                          hdr.ipv4.src[31:24]: ternary; }
                  actions = { NoAction; } }
        apply { if (true) { t.apply(); } }
    """)
    p = pipeline(r)
    assert p["conditionals"] == []
    assert p["init_table"] == "tbl_key_t"
    t = table(r, "Ing.t")
    assert t["key"][0]["target"] == ["scalars", "key_0"]
    assert t["key"][0]["name"] == "hdr.ipv4.dst + 1"
    assert t["key"][1]["target"] == ["ipv4", "$valid$"]
    # A slice goes through a temporary of its own width: P4Runtime gives its value in
    # that width, which real bmv2 cannot match against the whole field under a mask.
    assert t["key"][2]["target"] == ["scalars", "key_1"] and t["key"][2]["mask"] is None
    assert r.p4info.tables[0].match_fields[2].bitwidth == 8
    assert r.p4info.tables[0].match_fields[1].name == "hdr.ipv4.isValid()"


def test_named_arguments_and_struct_fields_in_headers() -> None:
    from p4compiler.compiler import compile_text

    text = """
    #include <v1model.p4>
    struct pair_t { bit<4> lo; bit<4> hi; }
    header h_t { bit<8> a; pair_t p; }
    struct Headers { h_t h; }
    struct Meta { }
    parser p(packet_in b, out Headers h, inout Meta m, inout standard_metadata_t sm) {
        state start { b.extract(hdr = h.h); transition accept; }
    }
    control c(inout Headers h, inout Meta m) { apply { } }
    control ig(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
        action set() { h.h.p.hi = 3; }
        table t { key = { h.h.a: exact; } actions = { set; } default_action = set; }
        apply { t.apply(); }
    }
    control eg(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply { } }
    control d(packet_out b, in Headers h) { apply { b.emit(h.h); } }
    V1Switch<Headers, Meta>(dep = d(), p = p(), vr = c(), ig = ig(), eg = eg(), ck = c()) main;
    """
    r = compile_text(text, "named.p4")
    types = {t["name"]: t for t in r.json["header_types"]}
    assert types["h_t"]["fields"] == [["a", 8, False], ["p_lo", 4, False], ["p_hi", 4, False]]
    prims = next(a for a in r.json["actions"] if a["name"] == "ig.set")["primitives"]
    assert prims[0]["parameters"][0] == {"type": "field", "value": ["h", "p_hi"]}
    assert table(r, "ig.t")["default_entry"]["action_data"] == []
    assert r.json["parsers"][0]["parse_states"][0]["parser_ops"][0]["op"] == "extract"


def test_if_in_a_parser_state_splits_the_state() -> None:
    r = compile_program(meta="bit<8> kind;", parser="""
        state start {
            pkt.extract(hdr.ethernet);
            if (hdr.ethernet.etype == 0x0800) {
                meta.kind = 4;
            } else {
                meta.kind = 0;
            }
            transition select(meta.kind) { 4: parse_ipv4; default: accept; }
        }
        state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
    """)
    states = {s["name"]: s for s in r.json["parsers"][0]["parse_states"]}
    start = states["start"]
    assert [t["next_state"] for t in start["transitions"]] == ["start_true", "start_false"]
    assert start["transitions"][0]["value"] == "0x01"
    assert states["start_true"]["transitions"][0]["next_state"] == "start_join"
    assert states["start_join"]["transition_key"] == [
        {"type": "field", "value": ["scalars", "userMetadata.kind"]}]


def test_hit_assigned_to_a_variable() -> None:
    r = compile_program("""
        table t { key = { hdr.ipv4.dst: exact; } actions = { NoAction; } }
        apply {
            bool found = t.apply().hit;
            if (!found) { hdr.ipv4.ttl = 0; }
        }
    """)
    t = table(r, "Ing.t")
    hit, miss = t["next_tables"]["__HIT__"], t["next_tables"]["__MISS__"]
    hit_action = action(r, table(r, hit)["actions"][0])
    assert hit_action["primitives"][0]["parameters"] == [
        {"type": "field", "value": ["scalars", "found_0"]},
        {"type": "expression", "value": {"type": "expression", "value": {
            "op": "b2d", "left": None, "right": {"type": "bool", "value": True}}}}]
    assert table(r, miss)["base_default_next"] == table(r, hit)["base_default_next"]


def test_lookahead_statement_still_peeks() -> None:
    # bmv2 fails a too-short packet with PacketTooShort even when the value is dropped.
    r = compile_program("apply { }", parser="""
        state start { pkt.lookahead<bit<40>>(); transition accept; }
    """)
    ops = r.json["parsers"][0]["parse_states"][0]["parser_ops"]
    assert ops[0]["op"] == "set"
    assert ops[0]["parameters"][1] == {"type": "lookahead", "value": [0, 40]}


def test_assert_and_assume_take_data() -> None:
    # bmv2's assert/assume read data: b2d(condition), two expression levels as p4c.
    r = compile_program("apply { assert(hdr.ipv4.ttl != 0); assume(true); }")
    prims = {p["op"]: p for a in r.json["actions"] for p in a["primitives"]}
    for op in ("assert", "assume"):
        param = prims[op]["parameters"][0]
        assert param["type"] == "expression"
        assert param["value"]["type"] == "expression"
        assert param["value"]["value"]["op"] == "b2d"


def test_log_msg_lists_the_fields_of_a_header_or_struct_as_p4c_flattens_them() -> None:
    """p4c's FlattenLogMsg: a header or struct item's `{}` becomes `(name:{},...)` over
    its fields (nested structs in parentheses); bmv2 aborts on a "header" element."""
    r = compile_program("""
        action a() { log_msg("e={} m={} t={}", { hdr.ethernet, meta, hdr.ipv4.ttl }); }
        apply { a(); }
    """, meta="bit<8> n; in_t i;", decls="struct in_t { bit<4> x; bool b; }")
    p = action(r, "Ing.a")["primitives"][0]["parameters"]
    assert p[0] == {"type": "string", "value":
                    "e=(dst:{},src:{},etype:{}) m=(n:{},i:(x:{},b:{})) t={}"}
    assert [x["value"] for x in p[1]["value"]] == [
        ["ethernet", "dst"], ["ethernet", "src"], ["ethernet", "etype"],
        ["scalars", "userMetadata.n"], ["scalars", "userMetadata.i.x"],
        ["scalars", "userMetadata.i.b"], ["ipv4", "ttl"]]
