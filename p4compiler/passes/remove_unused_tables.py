"""RemoveUnusedTables (p4c's SimplifyControlFlow + RemoveUnusedDeclarations for tables).

An `if` whose condition folded to a constant keeps only the branch taken; then a table
that no apply block applies any more (never applied, or only in a branch constant
folding removed) is dropped from its block, so it leaves the bmv2 JSON and the P4Info
(and so do the actions only it referenced), as with p4c.

Guarantees to the next pass: no `if` on a literal condition in an apply block; every
table of a block is applied somewhere in it.
"""

from __future__ import annotations

from typing import Any

from .. import ir
from ..typecheck_entities import TypedProgram
from ..typecheck_tree import _rewrite, _walk
from .temps import Temps, into_sub_controls


def _fold_ifs(x: Any) -> Any:
    if isinstance(x, ir.If) and isinstance(x.cond, ir.BoolLit):
        taken = x.then if x.cond.value else x.other
        return taken if taken is not None else ir.Empty(x.loc)
    return into_sub_controls(x, lambda body: _rewrite(body, _fold_ifs))


def _applied(node: Any, out: set[int]) -> None:
    """ids of the tables applied in `node`, inside inlined sub-controls too."""
    for n in _walk(node):
        if isinstance(n, ir.Call) and n.target:
            if n.target[0] == "apply":
                out.add(id(n.target[1]))
            elif n.target[0] == "control_apply":
                for part in n.target[2:4]:
                    for x in part if isinstance(part, (tuple, list)) else (part,):
                        _applied(x, out)


class RemoveUnusedTables:
    name = "RemoveUnusedTables"

    def __init__(self, temps: Temps):
        self.temps = temps

    def run(self, program: TypedProgram) -> None:
        for b in program.blocks.values():
            if b.kind != "control" or b.body is None:
                continue
            b.body = _rewrite(b.body, _fold_ifs)
            used: set[int] = set()
            _applied(b.body, used)
            b.tables = [t for t in b.tables if id(t) in used]
