"""HoistTableApplies (the table part of p4c's SideEffectOrdering).

`t.apply().hit` / `.miss` used inside a larger expression (`?:`, `&&`, `||`, a call
argument, an arithmetic operand, ...) is evaluated into a `bool` temporary `tmp_N` by a
statement of its own, before the statement that uses it, left to right. An apply on
the right of `&&` / `||` or in a branch of `?:` runs only when the spec says that
operand is evaluated: the operator becomes an `if` that assigns the temporary.

A table key that applies another table is a `key_N` local, assigned just before each
apply of its table (p4c's SideEffectOrdering on keys).

Guarantees to the next pass: a table apply in an apply block only appears as a statement
(`t.apply();`), as an `if` condition or assigned value (`t.apply().hit`, `.miss`,
possibly negated), or as the expression of a `switch (t.apply().action_run)`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..typecheck_entities import TableEntity, TypedProgram
from ..typecheck_tree import _walk
from .temps import Temps, into_sub_controls


def _is_apply(x: Any) -> bool:
    return isinstance(x, ir.Call) and bool(x.target) and x.target[0] == "apply"


def _has_apply(e: Any) -> bool:
    return any(_is_apply(x) for x in _walk(e))


def _simple_hit(e: Any) -> bool:
    """`t.apply().hit`, `.miss`, or their negation: what the back end branches on."""
    while isinstance(e, ir.Unary) and e.op == "!":
        e = e.expr
    return isinstance(e, ir.Member) and e.member in ("hit", "miss") and _is_apply(e.expr)


class HoistTableApplies:
    name = "HoistTableApplies"

    def __init__(self, temps: Temps):
        self.temps = temps

    def run(self, program: TypedProgram) -> None:
        for b in program.blocks.values():
            if b.kind == "control" and b.body is not None:
                self.temps.block = b
                self.key_temps = self.hoist_keys(b.tables)
                b.body = ir.Block(tuple(self.stmts(b.body.stmts)), b.body.loc)

    def hoist_keys(self, tables: list[TableEntity]) -> dict[int, list[ir.Stmt]]:
        """A key that applies another table (`key = { u.apply().hit : exact; }`, p4c's
        issue 2362) becomes a `key_N` local, assigned just before every apply of the
        table, as p4c's SideEffectOrdering does: per table, those assignments."""
        out: dict[int, list[ir.Stmt]] = {}
        for t in tables:
            keys = []
            for k in t.keys:
                if _has_apply(k.expr):
                    tmp = self.temps.new("key", k.expr.type or ir.Bool(), k.expr.loc)
                    out.setdefault(id(t), []).append(ir.Assign(tmp, k.expr, k.expr.loc))
                    k = dataclasses.replace(k, expr=tmp)
                keys.append(k)
            t.keys = tuple(keys)
        return out

    def stmts(self, stmts: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            for x in self.stmt(s):
                for t in self.applied_here(x):
                    for assign in self.key_temps.get(id(t), ()):
                        out.extend(self.stmt(assign))
                out.append(x)
        return out

    def applied_here(self, s: ir.Stmt) -> list[Any]:
        """The tables a statement in the simple forms applies (not in nested blocks)."""
        if not self.key_temps:
            return []
        own = s.cond if isinstance(s, ir.If) else s.expr if isinstance(s, ir.Switch) \
            else s.rhs if isinstance(s, ir.Assign) else s.init if isinstance(s, ir.VarDecl) \
            else s.call if isinstance(s, ir.CallStmt) else None
        return [x.target[1] for x in _walk(own) if _is_apply(x)] if own is not None else []

    def block(self, s: ir.Stmt | None) -> Any:
        if s is None:
            return None
        got = self.stmt(s)
        return got[0] if len(got) == 1 else ir.Block(tuple(got), s.loc)

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.Block):
            return [ir.Block(tuple(self.stmts(s.stmts)), s.loc)]
        if isinstance(s, ir.CallStmt) and (sub := into_sub_controls(s.call, self.block)):
            return [ir.CallStmt(sub, s.loc)]
        if not _has_apply(s):
            return [s]
        pre: list[ir.Stmt] = []
        if isinstance(s, ir.If):
            cond = s.cond if _simple_hit(s.cond) else self.expr(s.cond, pre)
            s = ir.If(cond, self.block(s.then), self.block(s.other), s.loc)
        elif isinstance(s, ir.Switch):
            cases = tuple(dataclasses.replace(c, body=self.block(c.body)) for c in s.cases)
            expr = s.expr if isinstance(s.expr, ir.Member) and _is_apply(s.expr.expr) \
                else self.expr(s.expr, pre)
            s = dataclasses.replace(s, expr=expr, cases=cases)
        elif isinstance(s, ir.Assign) and not _simple_hit(s.rhs):
            s = ir.Assign(self.expr(s.lhs, pre), self.expr(s.rhs, pre), s.loc)
        elif isinstance(s, ir.VarDecl) and s.init is not None and not _simple_hit(s.init):
            s = dataclasses.replace(s, init=self.expr(s.init, pre))
        elif isinstance(s, ir.CallStmt) and not _is_apply(s.call):
            s = ir.CallStmt(self.expr(s.call, pre), s.loc)
        return pre + [s]

    def temp(self, t: ir.Type | None, value: ir.Expr | None, loc: Any,
             pre: list[ir.Stmt]) -> ir.Name:
        tmp = self.temps.new("tmp", t or ir.Bool(), loc)
        pre.append(Temps.decl(tmp, value, loc))
        return tmp

    def expr(self, e: Any, pre: list[ir.Stmt]) -> Any:
        """`e` without table applies; the statements computing them go to `pre`."""
        if not isinstance(e, ir.Expr) or not _has_apply(e):
            return e
        loc = e.loc
        if _simple_hit(e):
            return self.temp(ir.Bool(), e, loc, pre)
        if isinstance(e, ir.Binary) and e.op in ("&&", "||") and _has_apply(e.right):
            tmp = self.temp(ir.Bool(), self.expr(e.left, pre), loc, pre)
            inner: list[ir.Stmt] = []
            inner.append(ir.Assign(tmp, self.expr(e.right, inner), loc))
            test = tmp if e.op == "&&" else ir.Unary("!", tmp, loc, ir.Bool())
            pre.append(ir.If(test, ir.Block(tuple(inner), loc), None, loc))
            return tmp
        if isinstance(e, ir.Mux) and (_has_apply(e.then) or _has_apply(e.other)):
            cond = self.expr(e.cond, pre)
            tmp = self.temp(e.type, None, loc, pre)
            then: list[ir.Stmt] = []
            then.append(ir.Assign(tmp, self.expr(e.then, then), loc))
            other: list[ir.Stmt] = []
            other.append(ir.Assign(tmp, self.expr(e.other, other), loc))
            pre.append(ir.If(cond, ir.Block(tuple(then), loc), ir.Block(tuple(other), loc),
                             loc))
            return tmp
        return self.children(e, pre)

    def children(self, e: ir.Expr, pre: list[ir.Stmt]) -> ir.Expr:
        changes = {}
        for f in dataclasses.fields(e):
            if f.name in ("ref", "type", "loc", "target", "tref"):
                continue
            v = getattr(e, f.name)
            if isinstance(v, ir.Expr):
                changes[f.name] = self.expr(v, pre)
            elif isinstance(v, tuple) and v and isinstance(v[0], ir.Arg):
                changes[f.name] = tuple(dataclasses.replace(a, value=self.expr(a.value, pre))
                                        for a in v)
            elif isinstance(v, tuple) and v and isinstance(v[0], ir.Expr):
                changes[f.name] = tuple(self.expr(x, pre) for x in v)
        return dataclasses.replace(e, **changes) if changes else e
