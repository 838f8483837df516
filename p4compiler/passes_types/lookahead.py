"""HoistLookaheads: a `pkt.lookahead<T>()` (or `pkt.lookahead<H>().field`) nested inside
a larger expression of a parser state is read into a fresh local just before the
statement (or, for a select key, at the end of the state) that uses it.

Guarantees to the backend: every lookahead in a parser is either the whole right-hand
side of an assignment or a whole select key, the two forms bmv2's `set` and select
`lookahead` key express.  Correct because lookahead does not move the packet cursor: the
hoisted read sees the same bits as the original position.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..passes.temps import Temps


def is_lookahead(e: Any) -> bool:
    return (isinstance(e, ir.Call) and bool(e.target) and e.target[0] == "method"
            and e.target[2] == "lookahead")


def _is_whole(e: Any) -> bool:
    """A lookahead form the backend takes as it is (a bit value or a field of one)."""
    if is_lookahead(e):
        return not isinstance(ir.unwrap(e.type), ir.StructLike)
    return isinstance(e, ir.Member) and is_lookahead(e.expr)


class _Hoister:
    def __init__(self, temps: Temps) -> None:
        self.temps = temps
        self.pending: list[ir.Stmt] = []

    def fresh(self, t: ir.Type, loc: Any) -> ir.Name:
        return self.temps.new("lookahead_tmp", t, loc)

    def expr(self, e: Any) -> Any:
        """`e` with every whole lookahead form inside it replaced by a fresh local."""
        if _is_whole(e):
            tmp = self.fresh(e.type, e.loc)
            self.pending.append(ir.Assign(tmp, e, e.loc))
            return tmp
        if isinstance(e, tuple):
            return tuple(self.expr(x) for x in e)
        if not (dataclasses.is_dataclass(e) and isinstance(e, (ir.Expr, ir.Arg))):
            return e
        changes = {}
        for f in dataclasses.fields(e):
            if f.name in ("type", "loc", "ref", "target", "to", "type_args"):
                continue
            old = getattr(e, f.name)
            new = self.expr(old)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(e, **changes) if changes else e

    def stmt(self, s: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(s, ir.Assign) and not _is_whole(s.rhs):
            s = dataclasses.replace(s, lhs=self.expr(s.lhs), rhs=self.expr(s.rhs))
        elif isinstance(s, ir.VarDecl) and s.init is not None and not _is_whole(s.init):
            s = dataclasses.replace(s, init=self.expr(s.init))
        elif isinstance(s, ir.CallStmt) and not is_lookahead(s.call):
            s = dataclasses.replace(s, call=self.expr(s.call))
        elif isinstance(s, ir.Block):
            out: list[ir.Stmt] = []
            for x in s.stmts:
                out.extend(self.stmt(x))
            return [dataclasses.replace(s, stmts=tuple(out))]
        hoisted, self.pending = self.pending, []
        return hoisted + [s]

    def state(self, st: ir.ParserState) -> ir.ParserState:
        stmts: list[ir.Stmt] = []
        for s in st.stmts:
            stmts.extend(self.stmt(s))
        t = st.transition
        if t is not None and t.select:
            keys = tuple(k if _is_whole(k) else self.expr(k) for k in t.select)
            stmts.extend(self.pending)
            self.pending = []
            t = dataclasses.replace(t, select=keys)
        if len(stmts) == len(st.stmts) and t is st.transition:
            return st
        return dataclasses.replace(st, stmts=tuple(stmts), transition=t)


def hoist_lookaheads(typed: Any) -> None:
    temps = Temps(typed)
    for b in typed.blocks.values():
        if b.kind != "parser":
            continue
        temps.block = b
        h = _Hoister(temps)
        b.states = [h.state(st) for st in b.states]
