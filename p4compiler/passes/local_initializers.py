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

from .. import ir
from ..typecheck import TypedProgram
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
