"""Helpers for compiler tests: build small v1model programs around a snippet."""

from __future__ import annotations

from pathlib import Path

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
    return compile_text(program(ingress, **kw), "test.p4")


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
