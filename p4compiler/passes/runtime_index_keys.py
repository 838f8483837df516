"""RuntimeIndexKeys (p4c's SimplifyKey, then HSIndexSimplifier on what it creates).

A table key that reads a header-stack element with a run-time index
(`hdr.s[hdr.i.idx].a : exact`) becomes a `key_N` local, computed just before every apply
of its table by `if (idx == 0) key_N = hdr.s[0].a; else if (idx == 1) ...` (an index out
of range leaves it unchanged); the key keeps its name, so the P4Info does not change.

Runs after HoistTableApplies, so a table is applied only by `t.apply();`, an `if` on
`t.apply().hit`/`.miss`, an assigned value or a `switch` expression. Guarantees to the
back end: no table key has a run-time stack index.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import hs_index, ir
from ..typecheck_entities import TableEntity, TypedProgram
from ..typecheck_tree import _runtime_indices, _walk
from .temps import Temps, into_sub_controls


def _applied_tables(s: ir.Stmt) -> list[Any]:
    """The tables a statement applies itself (not in its nested statements)."""
    own = s.cond if isinstance(s, ir.If) else s.expr if isinstance(s, ir.Switch) \
        else s.rhs if isinstance(s, ir.Assign) else s.init if isinstance(s, ir.VarDecl) \
        else s.call if isinstance(s, ir.CallStmt) else None
    return [x.target[1] for x in _walk(own) if isinstance(x, ir.Call) and x.target
            and x.target[0] == "apply"] if own is not None else []


class RuntimeIndexKeys:
    name = "RuntimeIndexKeys"

    def __init__(self, temps: Temps):
        self.temps = temps
        self.computes: dict[int, list[ir.Stmt]] = {}

    def run(self, program: TypedProgram) -> None:
        for b in program.blocks.values():
            if b.kind == "control" and b.body is not None:
                self.temps.block = b
                self.computes = {}
                for t in b.tables:
                    if self.wants(t):
                        self.table(t)
                if self.computes:
                    b.body = ir.Block(tuple(self.stmts(b.body.stmts)), b.body.loc)

    def wants(self, t: TableEntity) -> bool:
        """Whether this pass rewrites the keys of `t` (every table here)."""
        return True

    def table(self, t: TableEntity) -> None:
        keys = []
        for k in t.keys:
            if _runtime_indices(k.expr):
                tmp = self.temps.new("key", k.expr.type or ir.Bool(), k.expr.loc)
                compute = hs_index.concretize(ir.Assign(tmp, k.expr, k.expr.loc),
                                              self.temps.new, Temps.decl)
                self.computes.setdefault(id(t), []).append(compute)
                k = dataclasses.replace(k, expr=tmp)
            keys.append(k)
        t.keys = tuple(keys)

    def stmts(self, stmts: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            for t in _applied_tables(s):
                out.extend(self.computes.get(id(t), ()))
            out.append(self.nested(s))
        return out

    def block(self, s: ir.Stmt | None) -> Any:
        if s is None:
            return None
        got = self.stmts((s,))
        return got[0] if len(got) == 1 else ir.Block(tuple(got), s.loc)

    def nested(self, s: ir.Stmt) -> ir.Stmt:
        """`s` with the computations inserted in the statements it contains."""
        if isinstance(s, ir.Block):
            return ir.Block(tuple(self.stmts(s.stmts)), s.loc)
        if isinstance(s, ir.If):
            return ir.If(s.cond, self.block(s.then), self.block(s.other), s.loc)
        if isinstance(s, ir.Switch):
            return dataclasses.replace(s, cases=tuple(
                dataclasses.replace(c, body=self.block(c.body)) for c in s.cases))
        if isinstance(s, ir.CallStmt) and (sub := into_sub_controls(s.call, self.block)):
            return ir.CallStmt(sub, s.loc)
        return s
