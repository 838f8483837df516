"""Helpers of the type checker and of the passes over typed trees: walks, rewrites,
equivalence, side effects, definite assignment, constant folding."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from . import ir
from .errors import CompileError, Location
from .typecheck_entities import (
    ParamEntity,
    Scope,
    VarEntity,
)


class _Warner(Protocol):
    """What the definite-assignment walk needs of the type checker (typecheck.Checker)."""

    def warn_once(self, loc: Location | None, message: str) -> None: ...


def _is_num(t: ir.Type) -> bool:
    return isinstance(ir.unwrap(t), (ir.Bits, ir.InfInt))


def _type_text(t: ir.Type | None) -> str:
    return str(t) if t is not None else "?"


def _scope_attr(scope: Scope | None, name: str) -> Any:
    while scope is not None:
        if hasattr(scope, name):
            return getattr(scope, name)
        scope = scope.parent
    return None


_SKIP = ("ref", "type", "loc", "target", "tref", "annotations")


def _children(x: Any) -> list[Any]:
    out = []
    for f in dataclasses.fields(x):
        if f.name in _SKIP:
            continue
        v = getattr(x, f.name)
        if isinstance(v, ir.Node):
            out.append(v)
        elif isinstance(v, tuple):
            for y in v:
                if isinstance(y, ir.Node):
                    out.append(y)
                elif isinstance(y, tuple):
                    out.extend(z for z in y if isinstance(z, ir.Node))
    return out


def _walk(x: Any):
    """Every node of a typed tree, children first (not inside call targets)."""
    if isinstance(x, ir.Node):
        for c in _children(x):
            yield from _walk(c)
        yield x


def _rewrite(x: Any, fn) -> Any:
    """Rebuild a typed tree bottom-up; `fn(node)` returns a replacement or None."""
    if not isinstance(x, ir.Node):
        return x
    changes = {}
    for f in dataclasses.fields(x):
        if f.name in _SKIP:
            continue
        v = getattr(x, f.name)
        if isinstance(v, ir.Node):
            nv = _rewrite(v, fn)
        elif isinstance(v, tuple) and any(isinstance(y, (ir.Node, tuple)) for y in v):
            nv = tuple(_rewrite(y, fn) if isinstance(y, ir.Node) else
                       tuple(_rewrite(z, fn) for z in y) if isinstance(y, tuple) else y
                       for y in v)
        else:
            continue
        if nv is not v and nv != v:
            changes[f.name] = nv
    if changes:
        x = dataclasses.replace(x, **changes)
    r = fn(x)
    return x if r is None else r


_rewrite_in = _rewrite


def _equiv(a: Any, b: Any) -> bool:
    """Structural equality ignoring source locations."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ir.Node):
        for f in dataclasses.fields(a):
            if f.name == "loc":
                continue
            va, vb = getattr(a, f.name), getattr(b, f.name)
            if f.name == "ref":
                if va is not vb and va != vb:
                    return False
            elif not _equiv(va, vb):
                return False
        return True
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_equiv(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _runtime_indices(x: Any) -> list[ir.Index]:
    return [n for n in _walk(x) if isinstance(n, ir.Index)
            and not isinstance(n.index, ir.Lit)
            and isinstance(ir.unwrap(n.expr.type), ir.Stack)]  # type: ignore[arg-type]


def _inline_calls(x: Any) -> bool:
    return any(isinstance(n, ir.Call) and n.target and n.target[0] == "inline_function"
               for n in _walk(x))


def _has_side_effects(body: ir.Block, params: tuple[ParamEntity, ...]) -> bool:
    if any(p.direction in ("out", "inout") for p in params):
        return True
    return any(isinstance(n, ir.Call) and n.target and (
        n.target[0] in ("method", "extern_function", "action", "apply")
        or (n.target[0] in ("builtin", "inline_function") and n.target[1] != "isValid"))
        for n in _walk(body))


def _lvalue_root(e: Any) -> Any:
    while isinstance(e, (ir.Member, ir.Index, ir.Slice)):
        e = e.expr
    return e


def _is_lvalue_path(e: Any) -> bool:
    """A field/header/variable reference without run-time indices."""
    root = _lvalue_root(e)
    return isinstance(root, ir.Name) and isinstance(root.ref, (ParamEntity, VarEntity)) \
        and not _runtime_indices(e) and not isinstance(e, ir.Slice)


def _overlaps(a: Any, b: Any) -> bool:
    """Whether two lvalue-ish expressions may denote overlapping storage."""
    ra, rb = _lvalue_root(a), _lvalue_root(b)
    if not (isinstance(ra, ir.Name) and isinstance(rb, ir.Name)):
        return False
    if ra.ref is not rb.ref and not (isinstance(ra.ref, ParamEntity) and
                                     isinstance(rb.ref, ParamEntity)
                                     and ra.ref.owner == rb.ref.owner == "control"
                                     and ra.ref.index == rb.ref.index):
        return False
    ka, kb = key_name(a), key_name(b)
    return ka == kb or ka.startswith(kb + ".") or ka.startswith(kb + "[") or \
        kb.startswith(ka + ".") or kb.startswith(ka + "[")


def _is_constant(v: Any) -> bool:
    return isinstance(v, (ir.Lit, ir.BoolLit, ir.ErrorMember, ir.StrLit)) or (
        isinstance(v, ir.Member) and isinstance(v.expr, ir.TypeName))


def _always_returns(s: Any) -> bool:
    """True if every path through `s` ends in `return` (or `exit`)."""
    if isinstance(s, (ir.Return, ir.Exit)):
        return True
    if isinstance(s, ir.Block):
        return any(_always_returns(x) for x in s.stmts)
    if isinstance(s, ir.If):
        return s.other is not None and _always_returns(s.then) and _always_returns(s.other)
    if isinstance(s, ir.Switch):
        return any(c.label is None for c in s.cases) and all(
            _always_returns(c.body) for c in s.cases if c.body is not None)
    return False


_always_leaves = _always_returns


def _var_key(e: Any) -> str | None:
    if isinstance(e, ir.Name):
        if isinstance(e.ref, VarEntity):
            return e.ref.unique
        if isinstance(e.ref, ParamEntity):
            return f"param:{id(e.ref)}"
    return None


class _Uninit:
    """Definite-assignment walk for check_uninitialized. A set of assigned keys flows
    through the statements; None means the path has left (return/exit)."""

    def __init__(self, checker: _Warner, tracked: dict[str, str]):
        self.c = checker
        self.tracked = tracked

    def read(self, e: Any, assigned: set[str]) -> None:
        for n in _walk(e):
            k = _var_key(n)
            if k in self.tracked and k not in assigned:
                self.c.warn_once(n.loc, f"{self.tracked[k]} may be uninitialized")
                assigned.add(k)     # report each variable once per path

    def call(self, call: ir.Call, assigned: set[str]) -> None:
        tgt = call.target or ()
        kind = tgt[0] if tgt else ""
        proto = tgt[-1] if kind in ("method", "extern_function") else \
            tgt[3] if kind in ("function", "inline_function") else None
        dirs = [p.direction for p in proto.params] if isinstance(proto, ir.MethodProto) else []
        for i, a in enumerate(call.args):
            d = dirs[i] if i < len(dirs) else "in"
            if a.value is None:
                continue
            k = _var_key(a.value)
            if d == "out" and k is not None:
                assigned.add(k)
            else:
                self.read(a.value, assigned)
                if d == "inout" and k is not None:
                    assigned.add(k)
        if kind in ("action", "apply", "control_apply"):
            assigned.update(self.tracked)

    def block(self, stmts: list[ir.Stmt], assigned: set[str] | None) -> set[str] | None:
        for s in stmts:
            if assigned is None:
                return None
            assigned = self.stmt(s, assigned)
        return assigned

    def stmt(self, s: ir.Stmt, a: set[str]) -> set[str] | None:
        if isinstance(s, ir.Block):
            return self.block(list(s.stmts), a)
        if isinstance(s, ir.VarDecl):
            if s.init is not None:
                self.read(s.init, a)
                a.add(s.name)
            return a
        if isinstance(s, ir.Assign):
            for n in _walk(s.rhs):
                if isinstance(n, ir.Call):
                    self.call(n, a)
            self.read(s.rhs, a)
            k = _var_key(s.lhs)
            if k is not None:
                a.add(k)
            else:
                self.read(s.lhs, a)
            return a
        if isinstance(s, ir.CallStmt):
            self.call(s.call, a)
            return a
        if isinstance(s, ir.If):
            for n in _walk(s.cond):
                if isinstance(n, ir.Call):
                    self.call(n, a)
            self.read(s.cond, a)
            t = self.stmt(s.then, set(a))
            o = self.stmt(s.other, set(a)) if s.other is not None else set(a)
            if t is None:
                return o
            if o is None:
                return t
            return t & o
        if isinstance(s, ir.Switch):
            for n in _walk(s.expr):
                if isinstance(n, ir.Call):
                    self.call(n, a)
            self.read(s.expr, a)
            outs = [self.stmt(c.body, set(a)) for c in s.cases if c.body is not None]
            if not any(c.label is None for c in s.cases):
                outs.append(set(a))
            live = [x for x in outs if x is not None]
            if not live:
                return None
            r = live[0]
            for x in live[1:]:
                r = r & x
            return r
        if isinstance(s, ir.Return):
            if s.value is not None:
                self.read(s.value, a)
            return None
        if isinstance(s, ir.Exit):
            return None
        if isinstance(s, ir.Loop):  # the body may run no time at all
            a = self.block(list(s.init), a)
            if a is None:
                return None
            self.read(s.cond, a)
            self.block([s.body, *s.updates], set(a))
            return a
        return a


def _header_field_ok(t: ir.Type) -> bool:
    t = ir.unwrap(t)
    if isinstance(t, ir.StructLike) and t.kind == "struct":
        return all(_header_field_ok(f.type) for f in t.fields)
    return isinstance(t, (ir.Bits, ir.Varbit, ir.Bool)) or (
        isinstance(t, ir.Enum) and t.underlying is not None)


def _referenced_params(node: Any) -> set[int]:
    """ids of the ParamEntity objects a typed statement tree refers to."""
    found: set[int] = set()

    def walk(x: Any) -> None:
        if isinstance(x, ir.Name) and isinstance(x.ref, ParamEntity):
            found.add(id(x.ref))
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                if f.name not in ("ref", "type", "loc", "target"):
                    walk(getattr(x, f.name))

    walk(node)
    return found


def _wrap(v: int, t: ir.Bits) -> int:
    """P4 wrap-around: the value modulo 2^W (two's complement range for int<W>)."""
    v &= (1 << t.bits) - 1
    if t.signed and v >= 1 << (t.bits - 1):
        v -= 1 << t.bits
    return v


def _fold(op: str, a: int, b: int, t: ir.Type | None, loc: Location) -> int:
    if op in ("/", "%") and b == 0:
        raise CompileError(loc, "division by zero")
    if isinstance(t, ir.Bits) and op in ("|+|", "|-|"):
        v = a + b if op == "|+|" else a - b
        lo = -(1 << (t.bits - 1)) if t.signed else 0
        hi = (1 << (t.bits - 1)) - 1 if t.signed else (1 << t.bits) - 1
        return max(lo, min(hi, v))
    v = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b,
         "%": lambda: a % b, "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b,
         "|+|": lambda: a + b, "|-|": lambda: a - b}[op]()
    return _wrap(v, t) if isinstance(t, ir.Bits) else v


def _describe_expr(e: ir.Expr) -> str:
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.Member):
        return f"{_describe_expr(e.expr)}.{e.member}"
    return type(e).__name__


def key_name(e: ir.Expr) -> str:
    """A table key's control-plane name as p4c writes it (source text of the key)."""
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.Member):
        return f"{key_name(e.expr)}.{e.member}"
    if isinstance(e, ir.Index):
        return f"{key_name(e.expr)}[{key_name(e.index)}]"
    if isinstance(e, ir.Lit):
        return hex(e.value) if e.base == 16 else str(e.value)
    if isinstance(e, ir.Slice):
        return f"{key_name(e.expr)}[{key_name(e.hi)}:{key_name(e.lo)}]"
    if isinstance(e, ir.Call) and isinstance(e.callee, ir.Member):
        if e.callee.member == "isValid" and _is_union_member(e.callee.expr):
            # p4c names a union member's validity key after the bmv2 field it matches.
            return f"{key_name(e.callee.expr)}.$valid$"
        return f"{key_name(e.callee)}()"
    if isinstance(e, ir.Call):
        args = ", ".join(key_name(a.value) for a in e.args if a.value is not None)
        return f"{key_name(e.callee)}({args})"
    if isinstance(e, ir.Binary):
        return f"{key_name(e.left)} {e.op} {key_name(e.right)}"
    if isinstance(e, ir.Cast):
        return key_name(e.expr)
    return "key"


def p4c_can_name_key(e: ir.Expr) -> bool:
    """Whether p4c's TableKeyNames names this key expression (as written) by itself: a
    name, field, stack element, constant, slice, `x & y` of such, or `h.isValid()`.
    Any other key (`f(x)`, `a + 1`, a cast) needs a @name annotation in p4c."""
    if isinstance(e, (ir.Name, ir.Lit)):
        return True
    if isinstance(e, ir.Member):
        return p4c_can_name_key(e.expr)
    if isinstance(e, ir.Index):
        return p4c_can_name_key(e.expr) and p4c_can_name_key(e.index)
    if isinstance(e, ir.Slice):
        return all(p4c_can_name_key(x) for x in (e.expr, e.hi, e.lo))
    if isinstance(e, ir.Binary) and e.op == "&":
        return p4c_can_name_key(e.left) and p4c_can_name_key(e.right)
    if isinstance(e, ir.Call) and isinstance(e.callee, ir.Member):
        return e.callee.member == "isValid" and not e.args and p4c_can_name_key(e.callee.expr)
    return False


def _is_union_member(e: ir.Expr) -> bool:
    """Whether `e` is a header inside a header union (`hdr.u.short`, `hdr.u[0].byte`)."""
    if not isinstance(e, ir.Member):
        return False
    parent = ir.unwrap(e.expr.type) if getattr(e.expr, "type", None) is not None else None
    return isinstance(parent, ir.StructLike) and parent.kind == "header_union"
