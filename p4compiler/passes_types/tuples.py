"""SplitTuples: a local of a tuple type (`tuple<bit<8>, bit<16>> t = {a, b};`) becomes
one local per element (`<t>_0`, `<t>_1`); `t[i]` with a constant index reads that
element, and assigning a list expression or another split tuple assigns element-wise.

Guarantees to the backend: no local of a tuple type remains; any other use of a tuple
local is a compile error naming it. Tuples compared with `==`/`!=` (a tuple local or
a list expression on either side) become the conjunction of their elements' equalities.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..errors import CompileError
from ..typecheck import VarEntity

_SKIP = ("loc", "type", "ref", "target", "tref", "to", "type_args", "annotations")


class _Splitter:
    def __init__(self, parts: dict[str, list[VarEntity]]) -> None:
        self.parts = parts

    def elems(self, e: Any) -> list[Any] | None:
        """Per-element expressions of a tuple-valued `e`, or None."""
        if isinstance(e, ir.Name) and isinstance(e.ref, VarEntity) and e.ref.unique in self.parts:
            return [ir.Name(v.unique, e.loc, v.type, v) for v in self.parts[e.ref.unique]]
        if isinstance(e, ir.ListExpr) and isinstance(ir.unwrap(e.type), ir.TupleT):
            return [self.expr(x) for x in e.items]
        return None

    def expr(self, e: Any) -> Any:
        if isinstance(e, ir.Binary) and e.op in ("==", "!=") \
                and isinstance(ir.unwrap(e.left.type), ir.TupleT):
            return self.compare(e)
        if isinstance(e, ir.Index) and isinstance(e.index, ir.Lit):
            parts = self.elems(e.expr) if isinstance(e.expr, ir.Name) else None
            if parts is not None and 0 <= e.index.value < len(parts):
                return parts[e.index.value]
        if isinstance(e, ir.Name) and isinstance(e.ref, VarEntity) and e.ref.unique in self.parts:
            raise CompileError(e.loc, f"{e.name}: a tuple local can only be read by element "
                               "(t[0]) or assigned as a whole")
        return self.rebuild(e)

    def compare(self, e: ir.Binary) -> ir.Expr:
        """`t == {a, b}` (or two tuples) is the conjunction of the elements' equalities."""
        left, right = self.elems(e.left), self.elems(e.right)
        if left is None or right is None or len(left) != len(right):
            return self.rebuild(e)
        out: ir.Expr = ir.BoolLit(True, e.loc)
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            eq = ir.Binary("==", a, b, e.loc, ir.Bool())
            out = eq if i == 0 else ir.Binary("&&", out, eq, e.loc, ir.Bool())
        return out if e.op == "==" else ir.Unary("!", out, e.loc, ir.Bool())

    def rebuild(self, e: Any) -> Any:
        if isinstance(e, tuple):
            out = tuple(self.stmt(x) if isinstance(x, ir.Stmt) else self.expr(x) for x in e)
            return e if all(a is b for a, b in zip(out, e, strict=True)) else out
        if not (dataclasses.is_dataclass(e) and isinstance(e, ir.Node)):
            return e
        changes = {}
        for f in dataclasses.fields(e):
            if f.name in _SKIP:
                continue
            old = getattr(e, f.name)
            new = self.stmt(old) if isinstance(old, ir.Stmt) else self.expr(old)
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(e, **changes) if changes else e

    def assign_parts(self, lhs: list[Any], rhs: list[Any] | None, loc: Any) -> ir.Stmt:
        if rhs is None or len(rhs) != len(lhs):
            raise CompileError(loc, "a tuple local can only be assigned a list expression "
                               "or another tuple of the same arity")
        return ir.Block(tuple(ir.Assign(a, b, loc) for a, b in zip(lhs, rhs, strict=True)),
                        loc)

    def stmt(self, s: Any) -> Any:
        if isinstance(s, ir.VarDecl) and s.name in self.parts:
            ents = self.parts[s.name]
            decls: list[ir.Stmt] = [ir.VarDecl(ir.TypeRef("name", str(v.type)), v.unique, None,
                                               loc=s.loc, type=v.type) for v in ents]
            if s.init is not None:
                lhs = [ir.Name(v.unique, s.loc, v.type, v) for v in ents]
                decls.append(self.assign_parts(lhs, self.elems(s.init), s.loc))
            return ir.Block(tuple(decls), s.loc)
        if isinstance(s, ir.Assign):
            lhs = self.elems(s.lhs) if isinstance(s.lhs, ir.Name) else None
            if lhs is not None:
                return self.assign_parts(lhs, self.elems(s.rhs), s.loc)
        return self.rebuild(s)


def split_tuples(typed: Any) -> None:
    taken = {v.unique for b in typed.blocks.values() for v in b.variables}
    for b in typed.blocks.values():
        parts: dict[str, list[VarEntity]] = {}
        keep = []
        for v in b.variables:
            t = ir.unwrap(v.type)
            if not isinstance(t, ir.TupleT):
                keep.append(v)
                continue
            ents = []
            for i, it in enumerate(t.items):
                n, k = f"{v.unique}_{i}", 0
                while n in taken:
                    k += 1
                    n = f"{v.unique}_{i}_{k}"
                taken.add(n)
                ents.append(VarEntity(f"{v.name}_{i}", it, n))
            parts[v.unique] = ents
            keep.extend(ents)
        if not parts:
            continue
        b.variables[:] = keep
        sp = _Splitter(parts)
        if b.body is not None:
            b.body = sp.stmt(b.body)
        b.states = [sp.rebuild(s) for s in b.states]
        for a in b.actions:
            a.body = sp.stmt(a.body)
