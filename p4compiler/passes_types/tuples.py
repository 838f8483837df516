"""SplitTuples: a local of a tuple type (`tuple<bit<8>, bit<16>> t = {a, b};`) becomes
one local per element (`<t>_0`, `<t>_1`); `t[i]` with a constant index reads that
element, and assigning a list expression or another split tuple assigns element-wise.
Tuples nest (P4_16 7.2.7: an element may be a tuple): a tuple element is split in turn
(`<t>_1_0`), `t[1][0]` reads and writes it, and `t[1] = {a, b}` assigns its elements.

Guarantees to the backend: no local of a tuple type remains; any other use of a tuple
local is a compile error naming it. Tuples compared with `==`/`!=` (a tuple local or
a list expression on either side) become the conjunction of their elements' equalities.
A list expression left as a value (an extern's field list: hash, checksum, digest,
log_msg) holds no list: a nested one is spliced into it, element by element, as a
struct's fields are (p4c turns the tuple into a struct, EliminateTuples).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..errors import CompileError
from ..typecheck import VarEntity

_SKIP = ("loc", "type", "ref", "target", "tref", "to", "type_args", "annotations")


def _is_tuple(e: Any) -> bool:
    return e.type is not None and isinstance(ir.unwrap(e.type), ir.TupleT)


def _text(e: Any) -> str:
    """`t[1]` as written, for errors."""
    if isinstance(e, ir.Index):
        return f"{_text(e.expr)}[{e.index.value}]"
    return str(e.name)


def _reads(e: Any, names: set[str]) -> bool:
    """Whether expression `e` reads a local named in `names`."""
    if isinstance(e, ir.Name):
        return e.name in names
    if isinstance(e, tuple):
        return any(_reads(x, names) for x in e)
    if not (dataclasses.is_dataclass(e) and isinstance(e, ir.Node)):
        return False
    return any(_reads(getattr(e, f.name), names) for f in dataclasses.fields(e)
               if f.name not in _SKIP)


class _Splitter:
    def __init__(self, parts: dict[str, list[VarEntity]], taken: set[str]) -> None:
        self.parts = parts
        self.taken = taken
        self.temps: list[VarEntity] = []  # copies made by assign_parts, to declare

    def split_name(self, e: Any) -> bool:
        return isinstance(e, ir.Name) and isinstance(e.ref, VarEntity) \
            and e.ref.unique in self.parts

    def elems(self, e: Any) -> list[Any] | None:
        """Per-element expressions of a tuple-valued `e`, or None. An element that is a
        tuple itself stays whole (a split local's name or a list expression)."""
        if self.split_name(e):
            return [ir.Name(v.unique, e.loc, v.type, v) for v in self.parts[e.ref.unique]]
        if isinstance(e, ir.ListExpr) and _is_tuple(e):
            return [self.element(x) for x in e.items]
        if isinstance(e, ir.Index) and isinstance(e.index, ir.Lit) and _is_tuple(e):
            part = self.pick(e)
            return None if part is None else self.elems(part)
        return None

    def element(self, x: Any) -> Any:
        """One element of a list expression, rewritten; a tuple element is kept whole so
        that its own elements can be taken."""
        if _is_tuple(x):
            if self.split_name(x):
                return x
            if isinstance(x, ir.ListExpr):
                return ir.ListExpr(tuple(self.element(i) for i in x.items), x.loc, x.type)
            part = self.pick(x) if isinstance(x, ir.Index) else None
            if part is not None:
                return part
        return self.expr(x)

    def pick(self, e: ir.Index) -> Any:
        """The element `t[i]` (`t[1][0]` through the split parts), or None."""
        if not isinstance(e.index, ir.Lit):
            return None
        base = e.expr
        parts = self.elems(base) if self.split_name(base) or isinstance(base, ir.Index) \
            else None
        if parts is not None and 0 <= e.index.value < len(parts):
            return parts[e.index.value]
        return None

    def leaves(self, e: Any) -> list[Any] | None:
        """The scalar elements of a tuple value, depth first, or None."""
        parts = self.elems(e)
        if parts is None:
            return None
        out: list[Any] = []
        for p in parts:
            sub = self.leaves(p) if _is_tuple(p) else [p]
            if sub is None:
                return None
            out.extend(sub)
        return out

    def expr(self, e: Any) -> Any:
        if isinstance(e, ir.Binary) and e.op in ("==", "!=") and _is_tuple(e.left):
            return self.compare(e)
        if isinstance(e, ir.Index):
            part = self.pick(e)
            if part is not None and not _is_tuple(part):
                return part
        if self.split_name(e) or isinstance(e, ir.Index) and self.elems(e) is not None:
            raise CompileError(e.loc, f"{_text(e)}: a tuple local can only be read by "
                               "element (t[0]) or assigned as a whole")
        if isinstance(e, ir.ListExpr) and any(_is_tuple(x) for x in e.items):
            return self.splice(e)
        return self.rebuild(e)

    def splice(self, e: ir.ListExpr) -> ir.ListExpr:
        """A list expression used as a value, its nested lists spliced into it."""
        items = self.leaves(e)
        if items is None:
            return self.rebuild(e)
        return ir.ListExpr(tuple(items), e.loc, ir.TupleT(tuple(x.type for x in items)))

    def compare(self, e: ir.Binary) -> ir.Expr:
        """`t == {a, b}` (or two tuples) is the conjunction of the elements' equalities."""
        left, right = self.leaves(e.left), self.leaves(e.right)
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

    def assign_parts(self, lhs: Any, rhs: Any, loc: Any) -> ir.Stmt:
        """`lhs = rhs` for a tuple `lhs`, one assignment per scalar element."""
        left, right = self.leaves(lhs), self.leaves(rhs)
        if left is None or right is None or len(right) != len(left):
            raise CompileError(loc, "a tuple local can only be assigned a list expression "
                               "or another tuple of the same arity")
        first: list[ir.Stmt] = []
        if any(_reads(b, {a.name for a in left[:i]}) for i, b in enumerate(right)):
            # `t = {t[1], t[0]}`: every element is read before any is written (P4_16 7.2.7)
            right = [self.temporary(b, loc, first) for b in right]
        return ir.Block((*first, *(ir.Assign(a, b, loc)
                                   for a, b in zip(left, right, strict=True))), loc)

    def temporary(self, value: Any, loc: Any, out: list[ir.Stmt]) -> ir.Name:
        """A fresh local holding `value` (its declaration and assignment added to `out`)."""
        n = f"tuple_tmp_{len(self.taken)}"
        while n in self.taken:
            n += "_"
        self.taken.add(n)
        v = VarEntity(n, value.type, n)
        self.temps.append(v)
        name = ir.Name(n, loc, value.type, v)
        out += [ir.VarDecl(ir.TypeRef("name", str(value.type)), n, None, loc=loc,
                           type=value.type), ir.Assign(name, value, loc)]
        return name

    def stmt(self, s: Any) -> Any:
        if isinstance(s, ir.VarDecl) and s.name in self.parts:
            return self.declare(s)
        if isinstance(s, ir.Assign) and _is_tuple(s.lhs) and self.elems(s.lhs) is not None:
            return self.assign_parts(s.lhs, s.rhs, s.loc)
        return self.rebuild(s)

    def declare(self, s: ir.VarDecl) -> ir.Block:
        """A split local's declaration: its scalar parts, then its initialiser."""
        name = ir.Name(s.name, s.loc, s.type, VarEntity(s.name, s.type, s.name))
        decls: list[ir.Stmt] = [ir.VarDecl(ir.TypeRef("name", str(x.type)), x.name, None,
                                           loc=s.loc, type=x.type)
                                for x in self.leaves(name) or []]
        if s.init is not None:
            decls.append(self.assign_parts(name, s.init, s.loc))
        return ir.Block(tuple(decls), s.loc)


def _split(v: VarEntity, taken: set[str], parts: dict[str, list[VarEntity]]
           ) -> list[VarEntity]:
    """The scalar locals a tuple local `v` becomes (its tuple elements split in turn);
    `parts` maps each split tuple to its elements."""
    t = ir.unwrap(v.type)
    if not isinstance(t, ir.TupleT):
        return [v]
    ents, out = [], []
    for i, it in enumerate(t.items):
        n, k = f"{v.unique}_{i}", 0
        while n in taken:
            k += 1
            n = f"{v.unique}_{i}_{k}"
        taken.add(n)
        ent = VarEntity(f"{v.name}_{i}", it, n)
        ents.append(ent)
        out.extend(_split(ent, taken, parts))
    parts[v.unique] = ents
    return out


def split_tuples(typed: Any) -> None:
    taken = {v.unique for b in typed.blocks.values() for v in b.variables}
    for b in typed.blocks.values():
        parts: dict[str, list[VarEntity]] = {}
        b.variables[:] = [x for v in b.variables for x in _split(v, taken, parts)]
        sp = _Splitter(parts, taken)
        if b.body is not None:
            b.body = sp.stmt(b.body)
        b.states = [sp.rebuild(s) for s in b.states]
        for a in b.actions:
            a.body = sp.stmt(a.body)
        b.variables.extend(sp.temps)
