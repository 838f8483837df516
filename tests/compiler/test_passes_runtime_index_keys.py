"""RuntimeIndexKeys: a key reading a stack element with a run-time index is a `key_N`
computed before each apply (the ctl_runtime_index_key program runs its packets)."""

from __future__ import annotations

from p4compiler.compiler import compile_text

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header i_t { bit<8> idx; }
header e_t { bit<8> a; }
struct headers { i_t i; e_t[2] s; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.s.next); transition accept; } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.i.idx = v; }
    table t { key = { hdr.s[hdr.i.idx].a : exact; hdr.s[hdr.i.idx].isValid() : exact; }
              actions = { set; } }
    apply { if (hdr.i.idx == 0) { t.apply(); } else { t.apply(); } }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def test_keys_read_their_temporaries_and_keep_their_names():
    r = compile_text(PROGRAM)
    t = next(x for p in r.json["pipelines"] for x in p["tables"] if x["name"] == "Ig.t")
    assert [k["target"] for k in t["key"]] == [["scalars", "key_0"], ["scalars", "key_1"]]
    info = next(x for x in r.p4info.tables if x.preamble.name == "Ig.t")
    assert [m.name for m in info.match_fields] == ["hdr.s[hdr.i.idx].a",
                                                   "hdr.s[hdr.i.idx].isValid()"]


def test_each_apply_computes_the_keys_first_branching_on_the_index():
    body = compile_text(PROGRAM).typed.blocks["ig"].body
    branches = body.stmts[0]
    for apply_branch in (branches.then, branches.other):
        stmts = apply_branch.stmts
        assert [type(s).__name__ for s in stmts] == ["If", "If", "CallStmt"]
        first = stmts[0]
        assert first.cond.right.value == 0 and first.then.lhs.name == "key_0"
        assert first.then.rhs.expr.index.value == 0
        assert first.other.cond.right.value == 1 and first.other.other is None
