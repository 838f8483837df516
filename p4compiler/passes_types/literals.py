"""FoldLiteralMembers: field accesses on struct/header literals are replaced by the
literal's component (`{ {1, 2, 3} }.eth.type` is `3`), and a call of a function whose
body is a single `return` of such an expression is substituted first when that makes
a literal appear (`h.eth = mk();` with `ethernet_t mk() { return {1, 1, 1}; }`, or
`f({ {..} })` where `f` reads `val.eth.type`).

Guarantees to the backend: no Member of a list or struct expression remains where it
could be folded; a header-typed call result that is a literal is assigned as a literal
(which the backend lowers field by field, setting the header valid).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..typecheck import ParamEntity

_SKIP = ("loc", "type", "ref", "target", "tref", "to", "type_args", "annotations")


def _component(lit: ir.Expr, t: Any, member: str) -> ir.Expr | None:
    t = ir.unwrap(t) if t is not None else None
    if isinstance(lit, ir.StructExpr):
        return next((v for n, v in lit.fields if n == member), None)
    if isinstance(lit, ir.ListExpr) and isinstance(t, ir.StructLike) \
            and len(lit.items) == len(t.fields):
        for f, v in zip(t.fields, lit.items, strict=True):
            if f.name == member:
                return v
    return None


def _subst(e: Any, subst: dict[str, ir.Expr]) -> Any:
    if isinstance(e, ir.Name) and isinstance(e.ref, ParamEntity) and e.ref.owner == "function" \
            and e.name in subst:
        return subst[e.name]
    return _rebuild(e, lambda x: _subst(x, subst))


def _rebuild(e: Any, f: Any) -> Any:
    if isinstance(e, tuple):
        out = tuple(f(x) for x in e)
        return e if all(a is b for a, b in zip(out, e, strict=True)) else out
    if not (dataclasses.is_dataclass(e) and isinstance(e, ir.Node)):
        return e
    changes = {}
    for fl in dataclasses.fields(e):
        if fl.name in _SKIP:
            continue
        old = getattr(e, fl.name)
        new = f(old)
        if new is not old:
            changes[fl.name] = new
    return dataclasses.replace(e, **changes) if changes else e


def _literal_body(call: ir.Call) -> ir.Expr | None:
    """The substituted body of a single-`return` function call, if it holds a literal."""
    if not (call.target and call.target[0] == "function"):
        return None
    _, _, body, proto = call.target
    stmts = [s for s in body.stmts if not isinstance(s, ir.Empty)]
    if len(stmts) != 1 or not isinstance(stmts[0], ir.Return) or stmts[0].value is None:
        return None
    if any(a.value is None for a in call.args):
        return None
    subst = {p.name: a.value for p, a in zip(proto.params, call.args, strict=True)}
    return _subst(stmts[0].value, subst)


def _has_literal(e: Any) -> bool:
    if isinstance(e, (ir.ListExpr, ir.StructExpr)):
        return True
    if isinstance(e, ir.Member):
        return _has_literal(e.expr)
    return False


def fold(e: Any) -> Any:
    """`e` with literal member accesses folded, bottom-up."""
    e = _rebuild(e, fold)
    if isinstance(e, ir.Call):
        body = _literal_body(e)
        if body is not None:
            folded = fold(body)
            if isinstance(folded, (ir.ListExpr, ir.StructExpr)) or _folded_any(body, folded):
                if isinstance(folded, (ir.ListExpr, ir.StructExpr)) and folded.type is None:
                    folded = dataclasses.replace(folded, type=e.type)
                return folded
    if isinstance(e, ir.Member) and isinstance(e.expr, (ir.ListExpr, ir.StructExpr)):
        v = _component(e.expr, e.expr.type, e.member)
        if v is not None:
            return v
    return e


def _folded_any(before: Any, after: Any) -> bool:
    found = []

    def walk(x: Any) -> Any:
        if isinstance(x, ir.Member) and _has_literal(x):
            found.append(x)
        return _rebuild(x, walk)
    walk(before)
    if not found:
        return False
    found.clear()
    walk(after)
    return not found


def fold_literal_members(typed: Any) -> None:
    for b in typed.blocks.values():
        if b.body is not None:
            b.body = fold(b.body)
        b.states = [fold(s) for s in b.states]
        for a in b.actions:
            new = fold(a.body)
            if new is not a.body:
                a.body = new
