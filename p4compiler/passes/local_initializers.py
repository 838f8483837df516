"""LocalInitializers: control-level locals declared with an initialiser outside `apply`
(`bit<8> c = 8w12;`) are assigned at the start of the apply block, in declaration order,
as p4c's front end moves them (P4_16 spec: a control's local declarations are
initialised each time the control is applied).

(An inlined sub-control's locals are initialised at the start of its inlined body by
the type checker's control inliner, so at each of its applies.)

Guarantees to the next pass: control-level variables have no initialiser left; their
initial values are ordinary statements of the apply block.
"""

from __future__ import annotations

from dataclasses import fields, replace

from .. import ir
from ..typecheck_entities import TypedProgram
from .temps import Temps


class LocalInitializers:
    name = "LocalInitializers"

    def __init__(self, temps: Temps):
        self.temps = temps

    def run(self, program: TypedProgram) -> None:
        for b in program.blocks.values():
            if b.kind != "control" or b.body is None or not b.local_decls:
                continue
            inits = tuple(d for prefix, d in b.local_decls
                          if prefix is None and d.init is not None)
            if inits:
                b.body = ir.Block(inits + b.body.stmts, b.body.loc)
            b.local_decls = []


def move_initializers_with_calls(d: ir.ControlDecl) -> ir.ControlDecl:
    """Syntax-level form of the same move, for a control whose local initialisers call
    something (`Headers tmp = { { a, f(a), 1 } };` where `f` writes `a`): the calls
    must be inlined in evaluation order like any apply-block statement, so every
    initialiser of the control becomes an assignment at the start of its apply block
    (declaration order kept) before type checking, as p4c's MoveInitializers does."""
    decls = [x for x in d.locals if isinstance(x, ir.VarDecl) and x.init is not None]
    if not any(_has_call(x.init) for x in decls):
        return d
    moved = tuple(ir.Assign(ir.Name(x.name, x.loc), x.init, x.loc) for x in decls)
    local = tuple(replace(x, init=None) if isinstance(x, ir.VarDecl) else x
                  for x in d.locals)
    return replace(d, locals=local, body=replace(d.body, stmts=moved + d.body.stmts))


def _has_call(e: object) -> bool:
    if isinstance(e, ir.Call):
        return True
    if isinstance(e, ir.Node):
        return any(_has_call(getattr(e, f.name)) for f in fields(e))
    if isinstance(e, tuple):
        return any(_has_call(x) for x in e)
    return False
