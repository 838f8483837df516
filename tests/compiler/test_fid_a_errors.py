"""Compile-time diagnostics around issue 18's fid_a features: out-of-range literals wrap
with a warning (P4_16 8.9.1), bad varbit and generic-struct use and a table written
with a parameter list (P4_16 14.2 has none) are clear errors at their location."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from tests.v1model_program import line_of, v1model_program


def program_with(top: str = "", locals_: str = "", body: str = "", parser: str = "") -> str:
    return v1model_program(declarations=top, parser=parser, ingress_locals=locals_,
                           ingress=f"{body} sm.egress_spec = 1;")


def compile_with(top: str = "", locals_: str = "", body: str = "", parser: str = ""):
    return compile_text(program_with(top, locals_, body, parser), "fa.p4")


def _assigned_constants(json_program: dict) -> list[int]:
    out = []
    for action in json_program["actions"]:
        for prim in action["primitives"]:
            if prim["op"] == "assign" and prim["parameters"][1]["type"] == "hexstr":
                out.append(int(prim["parameters"][1]["value"], 16))
    return out


def test_out_of_range_literals_wrap_with_a_warning() -> None:
    result = compile_with(body="hdr.h.a = 8w300; hdr.h.b = (bit<8>)8s200;")
    assert any("300: value does not fit in bit<8>, it wraps to 44" in w
               for w in result.warnings)
    assert any("it wraps to -56" in w for w in result.warnings)
    assert sorted(_assigned_constants(result.json)) == [1, 44, 200]  # 1: egress_spec


def test_two_varbit_fields_are_refused_by_the_bmv2_backend_only_when_used() -> None:
    unused = "header vh { varbit<8> x; varbit<8> y; }"
    compile_with(top=unused)  # the front end accepts the type (as p4c's)
    with pytest.raises(CompileError) as e:
        compile_with(top=unused, locals_="vh v;", body="v.setInvalid();")
    assert "vh: a header with more than one varbit field is not supported" in e.value.message


def test_a_wrapped_signed_literal_folds_as_negative() -> None:
    result = compile_with(body="if (8s200 < 0) { hdr.h.a = 7; } else { hdr.h.a = 9; }")
    assert 7 in _assigned_constants(result.json)
    assert 9 not in _assigned_constants(result.json)


@pytest.mark.parametrize(("top", "locals_", "message"), [
    ("struct S<T> { T f; }", "S<bit<8>, bit<8>> s;", "S takes 1 type arguments, got 2"),
    ("struct S<T> { T f; }", "S s;", "S is generic: give its type arguments (S<T>)"),
    ("", "table t() { actions = { NoAction; } }",
     "a table declaration takes no parameter list"),
    ("", "varbit<8> v; bit<8> x = v;", "cannot implicitly cast varbit<8> to bit<8>"),
])
def test_bad_uses_are_clear_errors_at_their_line(top, locals_, message) -> None:
    with pytest.raises(CompileError) as e:
        compile_with(top, locals_)
    assert message in e.value.message
    assert e.value.loc.line == line_of(program_with(top, locals_), locals_)


EXTRACTS = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> x; }
header v_t { varbit<16> d; }
struct headers { h_t h; v_t v; }
struct meta_t { }
parser P(packet_in pkt, out headers h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); EXTRACT transition accept; }
}
control V(inout headers h, inout meta_t m) { apply { } }
control I(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control E(inout headers h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); pkt.emit(h.v); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize(("extract", "message"), [
    ("pkt.extract(h.v);", "extract: v_t has a varbit field; use the two-argument extract"),
    ("pkt.extract(h.h, 8);", "extract: h_t has no varbit field"),
])
def test_extract_arity_must_match_the_varbit_field(extract: str, message: str) -> None:
    with pytest.raises(CompileError) as e:
        compile_text(EXTRACTS.replace("EXTRACT", extract), "ex.p4")
    assert message in e.value.message
    assert e.value.loc.line == 9


def test_a_varbit_extract_with_its_length_compiles() -> None:
    text = EXTRACTS.replace("EXTRACT", "pkt.extract(h.v, (bit<32>)h.h.x * 8);")
    ops = [op["op"] for s in compile_text(text, "ex.p4").json["parsers"][0]["parse_states"]
           for op in s["parser_ops"]]
    assert ops == ["extract", "extract_VL"]


def test_a_header_not_in_whole_bytes_is_refused_where_it_has_an_instance() -> None:
    # as p4c-bm2-ss: "Found header with fields totaling 9 bits. BMv2 target only supports
    # headers with fields totaling a multiple of 8 bits" (p4c's p4_16_bmv_errors/
    # header-not-multiple-of-bytes-bmv2.p4), at the type, for a local as for a parsed one
    odd = "header odd_t { bit<8> a; bit<1> v; }"
    compile_with(top=odd)  # an unused type is no layout
    for kw in ({"locals_": "odd_t o;", "body": "o.setInvalid();"},
               {"parser": "odd_t o; pkt.extract(o);"}):
        with pytest.raises(CompileError) as e:
            compile_with(top=odd, **kw)
        assert "odd_t: found header with fields totaling 9 bits" in e.value.message
        assert "multiple of 8 bits" in e.value.message
        assert e.value.loc.line > 0


def test_a_varbit_header_counts_its_maximum_width_and_is_not_padded() -> None:
    # p4c adds the varbit's maximum to the header's width: 4 + 12 bits is whole bytes,
    # and a header type gets no padding field (only structs laid out as headers do)
    text = EXTRACTS.replace("header v_t { varbit<16> d; }",
                            "header v_t { bit<4> p; varbit<12> d; }")
    j = compile_text(text.replace("EXTRACT", "pkt.extract(h.v, 4);"), "ex.p4").json
    (ht,) = [h for h in j["header_types"] if h["name"] == "v_t"]
    assert ht["fields"] == [["p", 4, False], ["d", "*"]]
    with pytest.raises(CompileError) as e:
        compile_text(text.replace("varbit<12>", "varbit<16>").replace("EXTRACT", ""), "ex.p4")
    assert "v_t: found header with fields totaling 20 bits" in e.value.message


@pytest.mark.parametrize("parser", ["hdr.h.a = (bit<8>)pkt.length();",
                                    "bit<32> n = pkt.length(); hdr.h.a = (bit<8>)n;"])
def test_packet_length_is_refused_by_name_on_bmv2(parser: str) -> None:
    with pytest.raises(CompileError) as e:
        compile_with(parser=parser)
    assert "packet_in.length() is not supported on bmv2" in e.value.message
    assert e.value.loc.line == line_of(program_with(parser=parser), "state start")


def test_a_direct_counter_or_meter_has_exactly_one_table() -> None:
    # as p4c-bm2-ss: "Direct counters cannot be attached to multiple tables" (p4c's
    # p4_16_bmv_errors/reused-counter-bmv2.p4) and "direct meter is not associated with
    # any table via 'meters' table property" (issue1829-2-bmv2.p4), at the instance
    tables = ("action a() { m_read(); } table t1 { key = { hdr.h.a : exact; } "
              "actions = { a; } PROP = c; } table t2 { key = { hdr.h.b : exact; } "
              "actions = { a; } PROP = c; }")
    for ext, prop, read in (("direct_counter(CounterType.packets) c;", "counters", ""),
                            ("direct_meter<bit<8>>(MeterType.packets) c;", "meters",
                             "c.read(hdr.h.b);")):
        locals_ = ext + " " + tables.replace("PROP", prop).replace("m_read();", read)
        with pytest.raises(CompileError) as e:
            compile_with(locals_=locals_, body="t1.apply(); t2.apply();")
        assert f"I.c: direct {prop} cannot be attached to multiple tables I.t1 and I.t2" \
            in e.value.message
        assert e.value.loc.line == line_of(program_with(locals_=locals_), ext)  # the instance
        one = locals_.replace(f" {prop} = c; }}", " }", 1)  # t1 without it: fine
        compile_with(locals_=one, body="t1.apply(); t2.apply();")
    with pytest.raises(CompileError) as e:
        compile_with(locals_="direct_meter<bit<8>>(MeterType.packets) dm;")
    assert "I.dm: direct meter is not associated with any table via 'meters' table " \
           "property" in e.value.message
    # an unattached direct counter stays a warning
    r = compile_with(locals_="direct_counter(CounterType.packets) dc;")
    assert any("I.dc: direct counter not used by any table" in w for w in r.warnings)


@pytest.mark.parametrize("where", ["top", "locals_"])
def test_an_extern_without_a_constructor_cannot_be_instantiated(where: str) -> None:
    # as p4c: "p: type packet_in has no matching constructor" (p4c's negative test
    # p4_16_bmv_errors/packet_in-bmv2.p4); we accepted the instance
    with pytest.raises(CompileError) as e:
        compile_with(**{where: "packet_in() pp;"})
    assert "pp: type packet_in has no matching constructor" in e.value.message
    assert e.value.loc.line > 0


OWN_ARCH = """
extern packet_in { }
extern packet_out { }
struct standard_metadata_t { }
enum HashAlgorithm { csum16 }
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data,
                             in M max);
parser Parser<H, M>(packet_in b, out H parsedHdr, inout M meta,
                    inout standard_metadata_t standard_metadata);
control VerifyChecksum<H, M>(inout H hdr, inout M meta);
control Ingress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control Egress<H, M>(inout H hdr, inout M meta, inout standard_metadata_t standard_metadata);
control ComputeChecksum<H, M>(inout H hdr, inout M meta);
control Deparser<H>(packet_out b, in H hdr);
package V1Switch<H, M>(Parser<H, M> p, VerifyChecksum<H, M> vr, Ingress<H, M> ig,
                       Egress<H, M> eg, ComputeChecksum<H, M> ck, Deparser<H> dep);
struct headers_t { }
struct metadata_t { bit<16> result; bit<16> b; }
parser P(packet_in b, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t sm) { state start { transition accept; } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply { hash(meta.result, HashAlgorithm.csum16, 16w0, { meta.b }, 16w1); }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply { }
}
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out b, in headers_t hdr) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_a_hash_algorithm_must_be_v1model_s_own() -> None:
    # a program declaring its own HashAlgorithm (no v1model.p4): p4c turns enums that
    # v1model.p4 does not declare into bit<32> and refuses the algorithm ("32w0: expected
    # a HashAlgorithm member", p4c's p4_16_bmv_errors/issue5464-hash-bmv2.p4); we used
    # the member's name
    with pytest.raises(CompileError) as e:
        compile_text(OWN_ARCH, "own.p4")
    assert "HashAlgorithm.csum16: expected a HashAlgorithm member of v1model.p4" \
        in e.value.message
    assert e.value.loc.line == 23  # the hash call
    # v1model.p4's own HashAlgorithm is fine
    compile_with(locals_="bit<16> r;",
                 body="hash(r, HashAlgorithm.csum16, 16w0, { hdr.h.a }, 16w1);")
