"""DontCareExtracts: `pkt.extract<H>(_)` extracts into a fresh local header of type H
(p4c gives a don't-care out argument a temporary of the parameter's type).

Guarantees to the backend: every `extract` in a parser has a header (or `stack.next`)
argument; a `_` whose header type cannot be named is a compile error at the call.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..errors import CompileError
from ..passes.temps import Temps


def _is_extract(c: Any) -> bool:
    return (isinstance(c, ir.Call) and bool(c.target) and c.target[0] == "method"
            and c.target[1] == "packet_in" and c.target[2] in ("extract", "lookahead"))


def _header_type(call: ir.Call, structs: dict[str, ir.StructLike]) -> ir.StructLike:
    ta = call.type_args[0] if call.type_args else None
    t = structs.get(ta.name) if ta is not None and ta.kind == "name" else None
    if t is None or t.kind != "header":
        raise CompileError(call.loc, "extract(_): give the header type as a type argument, "
                           "e.g. pkt.extract<ethernet_t>(_)")
    return t


class _Rewriter:
    def __init__(self, temps: Temps, structs: dict[str, ir.StructLike]):
        self.temps, self.structs = temps, structs

    def fresh(self, t: ir.StructLike, loc: Any) -> ir.Name:
        return self.temps.new("dontcare_hdr", t, loc)

    def stmt(self, s: ir.Stmt) -> ir.Stmt:
        if isinstance(s, ir.Block):
            return dataclasses.replace(s, stmts=tuple(self.stmt(x) for x in s.stmts))
        if not (isinstance(s, ir.CallStmt) and _is_extract(s.call)
                and s.call.target[2] == "extract" and s.call.args
                and s.call.args[0].value is None):
            return s
        call = s.call
        tmp = self.fresh(_header_type(call, self.structs), call.loc)
        args = (dataclasses.replace(call.args[0], value=tmp),) + tuple(call.args[1:])
        return dataclasses.replace(s, call=dataclasses.replace(call, args=args))


def dont_care_extracts(typed: Any) -> None:
    temps = Temps(typed)
    structs = {s.name: s for s in typed.structs}
    for b in typed.blocks.values():
        if b.kind != "parser":
            continue
        temps.block = b
        r = _Rewriter(temps, structs)
        b.states = [dataclasses.replace(st, stmts=tuple(r.stmt(x) for x in st.stmts))
                    for st in b.states]
