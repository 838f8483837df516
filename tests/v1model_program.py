"""The small v1model program that compiler and switch tests write around the part they
vary: one header h_t, parsed into hdr.h and emitted again, metadata meta_t, and the
controls P, V, I, E, C, D in V1Switch's order, each empty unless a test gives its part."""

from __future__ import annotations

import textwrap


def v1model_program(*, declarations: str = "", h_fields: str = "bit<8> a; bit<8> b;",
                    metadata: str = "", parser: str = "", ingress_locals: str = "",
                    ingress: str = "", egress: str = "", compute_checksum: str = "") -> str:
    """The program's text. `declarations` stand at top level before h_t, `parser` in the
    start state after h is extracted, `ingress_locals` in I before its apply block; each
    other part is the body of its control's apply block. A part a test leaves out adds
    no line, so a test finds its lines with line_of rather than by counting."""
    return "".join(line + "\n" for line in (
        "#include <core.p4>",
        "#include <v1model.p4>",
        declarations,
        f"header h_t {{ {h_fields} }}",
        "struct headers { h_t h; }",
        f"struct meta_t {_braced(metadata)}",
        "parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {",
        f"    state start {_braced('pkt.extract(hdr.h);', parser, 'transition accept;')}",
        "}",
        "control V(inout headers hdr, inout meta_t m) { apply { } }",
        "control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {",
        textwrap.indent(ingress_locals, "    "),
        f"    apply {_braced(ingress)}",
        "}",
        "control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {",
        f"    apply {_braced(egress)}",
        "}",
        "control C(inout headers hdr, inout meta_t m) {",
        f"    apply {_braced(compute_checksum)}",
        "}",
        "control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }",
        "V1Switch(P(), V(), I(), E(), C(), D()) main;",
    ) if line)


def _braced(*parts: str) -> str:
    """The parts, trimmed, as one block: `{ }` when every part is empty."""
    stmts = [p.strip() for p in parts if p.strip()]
    return "{ " + " ".join(stmts) + " }" if stmts else "{ }"


def line_of(text: str, needle: str) -> int:
    """The number (from 1) of the first line of `text` holding `needle`."""
    return position_of(text, needle)[0]


def position_of(text: str, needle: str) -> tuple[int, int]:
    """The line and column (each from 1) where `needle` first stands in `text`, as the
    compiler counts a location."""
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number, line.index(needle) + 1
    raise ValueError(f"{needle!r} is not in the program")
