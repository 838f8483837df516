"""SplitAggregateMux: `x = c ? a : b;` where x is a struct, header, header union or
stack (and a local declared with such an initialiser) becomes
`if (c) { x = a; } else { x = b; }`, as bmv2 has no conditional on aggregates (its
`?:` yields data). Only the chosen operand is evaluated, as the spec's `?:` does.

Guarantees to the next passes and the back end: no `?:` is the whole right-hand side of
an assignment of an aggregate, in apply blocks, actions and parser states.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..typecheck_entities import TypedProgram, VarEntity
from .temps import Temps, rewrite_bodies


def _aggregate(t: ir.Type | None) -> bool:
    u = ir.unwrap(t) if t is not None else None
    return isinstance(u, (ir.StructLike, ir.Stack))


def _assign(lhs: ir.Expr, rhs: ir.Expr, loc: Any) -> ir.Stmt:
    if not (isinstance(rhs, ir.Mux) and _aggregate(rhs.type)):
        return ir.Assign(lhs, rhs, loc)
    return ir.If(rhs.cond, ir.Block((_assign(lhs, rhs.then, loc),), loc),
                 ir.Block((_assign(lhs, rhs.other, loc),), loc), loc)


def _split(x: Any) -> Any:
    if isinstance(x, ir.Assign) and isinstance(x.rhs, ir.Mux) and _aggregate(x.rhs.type):
        return _assign(x.lhs, x.rhs, x.loc)
    if isinstance(x, ir.VarDecl) and isinstance(x.init, ir.Mux) and _aggregate(x.init.type):
        lhs = ir.Name(x.name, x.loc, x.type, VarEntity(x.name, x.type, x.name))  # type: ignore
        return ir.Block((dataclasses.replace(x, init=None), _assign(lhs, x.init, x.loc)),
                        x.loc)
    return None


class SplitAggregateMux:
    name = "SplitAggregateMux"

    def __init__(self, temps: Temps):
        self.temps = temps

    def run(self, program: TypedProgram) -> None:
        rewrite_bodies(program, _split)
