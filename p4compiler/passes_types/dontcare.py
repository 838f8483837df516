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
from ..typecheck import VarEntity


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
    def __init__(self, block: Any, taken: set[str], structs: dict[str, ir.StructLike]):
        self.block, self.taken, self.structs = block, taken, structs

    def fresh(self, t: ir.StructLike, loc: Any) -> ir.Name:
        n = 0
        while f"dontcare_hdr_{n}" in self.taken:
            n += 1
        name = f"dontcare_hdr_{n}"
        self.taken.add(name)
        ent = VarEntity(name, t, name)
        self.block.variables.append(ent)
        return ir.Name(name, loc, t, ent)

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
    taken = {v.unique for b in typed.blocks.values() for v in b.variables}
    structs = {s.name: s for s in typed.structs}
    for b in typed.blocks.values():
        if b.kind != "parser":
            continue
        r = _Rewriter(b, taken, structs)
        b.states = [dataclasses.replace(st, stmts=tuple(r.stmt(x) for x in st.stmts))
                    for st in b.states]
