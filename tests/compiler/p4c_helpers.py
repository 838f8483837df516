"""Helpers for compiler tests: build small v1model programs around a snippet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from p4compiler.compiler import CompileResult, compile_text

PROGRAMS = Path(__file__).parent / "programs"
REPO = Path(__file__).resolve().parents[2]

HEADERS = """
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags;
    bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
"""

TEMPLATE = """
{headers}
{decls}
struct metadata_t {{ {meta} }}
struct headers_t {{ ethernet_t ethernet; ipv4_t ipv4; {hdrs} }}
parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t sm) {{
{parser}
}}
control VC(inout headers_t hdr, inout metadata_t meta) {{ apply {{ }} }}
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {{
{ingress}
}}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {{
{egress}
}}
control CC(inout headers_t hdr, inout metadata_t meta) {{
{compute}
}}
control D(packet_out pkt, in headers_t hdr) {{
    apply {{ pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); }}
}}
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""

DEFAULT_PARSER = """
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etype) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 { pkt.extract(hdr.ipv4); transition accept; }
"""


def program(ingress: str = "apply { }", *, decls: str = "", meta: str = "", hdrs: str = "",
            parser: str = DEFAULT_PARSER, egress: str = "apply { }",
            compute: str = "apply { }") -> str:
    return TEMPLATE.format(headers=HEADERS, decls=decls, meta=meta, hdrs=hdrs, parser=parser,
                           ingress=ingress, egress=egress, compute=compute)


def compile_program(ingress: str = "apply { }", **kw: str) -> CompileResult:
    """Compile a snippet program; its JSON is always checked for dangling references."""
    result = compile_text(program(ingress, **kw), "test.p4")
    JsonChecker(result.json).check()
    return result


@pytest.fixture
def compile_p4():
    return compile_program


def action(result: CompileResult, name: str) -> dict:
    return next(a for a in result.json["actions"] if a["name"] == name)


def table(result: CompileResult, name: str, pipeline: str = "ingress") -> dict:
    p = next(p for p in result.json["pipelines"] if p["name"] == pipeline)
    return next(t for t in p["tables"] if t["name"] == name)


def pipeline(result: CompileResult, name: str = "ingress") -> dict:
    return next(p for p in result.json["pipelines"] if p["name"] == name)


LEAF_TYPES = {"field", "hexstr", "runtime_data", "local", "header", "header_stack",
              "stack_field", "expression", "bool", "string", "calculation", "counter_array",
              "meter_array", "register_array", "parameters_vector", "lookahead",
              "header_union", "regular", "stack", "payload"}


class JsonChecker:
    """What a bmv2 loader checks: every reference in the JSON resolves."""

    def __init__(self, j: dict[str, Any]):
        self.j = j
        types = {t["name"]: t for t in j["header_types"]}
        self.fields = {}
        for h in j["headers"]:
            names = [f[0] for f in types[h["header_type"]]["fields"]] + ["$valid$"]
            self.fields[h["name"]] = set(names)
        self.stacks = {s["name"]: s for s in j["header_stacks"]}
        self.arrays = {kind: {a["name"] for a in j[kind]}
                       for kind in ("counter_array", "meter_array", "register_array")
                       for kind in [kind + "s"]}
        self.calcs = {c["name"] for c in j["calculations"]}

    def value(self, v: Any, where: str, runtime: int | None = None) -> None:
        if v is None:
            return
        if "op" in v:
            assert set(v) >= {"op", "left", "right"}, where
            for side in ("left", "right", "cond"):
                if side in v:
                    self.value(v[side], where, runtime)
            return
        t = v["type"]
        assert t in LEAF_TYPES, (where, v)
        if t == "field":
            h, f = v["value"]
            assert f in self.fields.get(h, ()), (where, v)
        elif t == "header":
            assert v["value"] in self.fields, (where, v)
        elif t in ("header_stack", "stack"):
            assert v["value"] in self.stacks, (where, v)
        elif t == "stack_field":
            s, f = v["value"]
            elem = self.stacks[s]["header_ids"][0]
            assert f in self.fields[self.j["headers"][elem]["name"]], (where, v)
        elif t == "expression":
            self.value(v["value"], where, runtime)
        elif t in ("runtime_data", "local"):
            assert runtime is not None and 0 <= v["value"] < runtime, (where, v)
        elif t == "hexstr":
            int(v["value"], 16)
        elif t in ("counter_array", "meter_array", "register_array"):
            assert v["value"] in self.arrays[t + "s"], (where, v)
        elif t == "calculation":
            assert v["value"] in self.calcs, (where, v)
        elif t == "parameters_vector":
            for x in v["value"]:
                self.value(x, where, runtime)

    def check(self) -> None:
        j = self.j
        ids = [a["id"] for a in j["actions"]]
        assert ids == list(range(len(ids)))
        for a in j["actions"]:
            n = len(a["runtime_data"])
            for i, p in enumerate(a["primitives"]):
                where = f"{a['name']}[{i}]"
                for param in p["parameters"]:
                    self.value(param, where, n)
                if p["op"] in ("_jump", "_jump_if_zero"):
                    target = int(p["parameters"][-1]["value"], 16)
                    assert 0 <= target <= len(a["primitives"]), where
        for parser in j["parsers"]:
            states = {s["name"] for s in parser["parse_states"]}
            assert parser["init_state"] in states
            for s in parser["parse_states"]:
                for op in s["parser_ops"]:
                    for param in op["parameters"]:
                        if "op" in param:  # "primitive" wraps a whole primitive
                            for x in param["parameters"]:
                                self.value(x, s["name"])
                        else:
                            self.value(param, s["name"])
                for k in s["transition_key"]:
                    self.value(k, s["name"])
                for t in s["transitions"]:
                    assert t["next_state"] is None or t["next_state"] in states
        for d in j["deparsers"]:
            for h in d["order"]:
                assert h in self.fields
        actions_by_id = {a["id"]: a["name"] for a in j["actions"]}
        for p in j["pipelines"]:
            nodes = {t["name"] for t in p["tables"]} | {c["name"] for c in p["conditionals"]}
            assert p["init_table"] is None or p["init_table"] in nodes
            for t in p["tables"]:
                assert [actions_by_id[i] for i in t["action_ids"]] == t["actions"]
                for nxt in list(t["next_tables"].values()) + [t["base_default_next"]]:
                    assert nxt is None or nxt in nodes, (t["name"], nxt)
                for k in t["key"]:
                    self.value({"type": "field", "value": k["target"]}, t["name"])
                if "default_entry" in t:
                    assert t["default_entry"]["action_id"] in t["action_ids"]
            for c in p["conditionals"]:
                assert c["expression"]["type"] == "expression"
                self.value(c["expression"], c["name"])
                for nxt in (c["true_next"], c["false_next"]):
                    assert nxt is None or nxt in nodes
        for c in j["checksums"]:
            assert c["calculation"] in self.calcs
            self.value({"type": "field", "value": c["target"]}, c["name"])
            self.value(c["if_cond"], c["name"])
