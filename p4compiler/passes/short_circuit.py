"""Side-effect ordering for inlined function calls under `&&`, `||` and `?:` (the
function part of p4c's SideEffectOrdering), used by the type checker's function inliner.

`a || f(x)` where `f` has out/inout parameters or calls externs: the spec (8.6, 8.7)
evaluates `f(x)` only when `a` is false, so the inlined body of `f` goes under an `if`:
`tmp = a; if (!tmp) { <f inlined>; tmp = retval; }` and the expression becomes `tmp`.
`c ? f(x) : g(y)` becomes `if (c) { <f>; tmp = ... } else { <g>; tmp = ... }`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..typecheck_tree import _is_constant, _walk


def has_side_effect_call(*exprs: Any) -> bool:
    """A call to an inlined function that writes arguments or calls externs."""
    return any(isinstance(n, ir.Call) and n.target and n.target[0] == "inline_function"
               and n.target[5] for e in exprs for n in _walk(e))


def lower_and_or(checker: Any, e: ir.Binary, pre: list[ir.Stmt]) -> ir.Name:
    loc = e.loc
    tmp = checker.new_temp("tmp", ir.Bool(), loc)
    pre.append(checker.temp_decl(tmp, checker.lift_expr(e.left, pre, False), loc))
    inner: list[ir.Stmt] = []
    inner.append(ir.Assign(tmp, checker.lift_expr(e.right, inner, False), loc))
    test = tmp if e.op == "&&" else ir.Unary("!", tmp, loc, ir.Bool())
    pre.append(ir.If(test, ir.Block(tuple(inner), loc), None, loc))
    return tmp


def lower_mux(checker: Any, e: ir.Mux, pre: list[ir.Stmt]) -> ir.Name:
    loc = e.loc
    cond = checker.lift_expr(e.cond, pre, False)
    tmp = checker.new_temp("tmp", e.type, loc)
    pre.append(checker.temp_decl(tmp, None, loc))
    branches = []
    for value in (e.then, e.other):
        stmts: list[ir.Stmt] = []
        stmts.append(ir.Assign(tmp, checker.lift_expr(value, stmts, False), loc))
        branches.append(ir.Block(tuple(stmts), loc))
    pre.append(ir.If(cond, branches[0], branches[1], loc))
    return tmp


def freeze_indices(checker: Any, lvalue: Any, pre: list[ir.Stmt]) -> Any:
    """`lvalue` with every run-time stack index read now into a temporary `index_N`.

    The spec evaluates an assignment's target (and a call's out/inout arguments)
    before the right-hand side (the call's body): in `h.s[h.i.x].a = f(h.i.x)` where
    `f` writes `h.i.x`, the element is chosen by the value before the call, as p4c's
    SideEffectOrdering does."""
    if not isinstance(lvalue, (ir.Member, ir.Slice, ir.Index)):
        return lvalue
    changes: dict[str, Any] = {}
    inner = freeze_indices(checker, lvalue.expr, pre)
    if inner is not lvalue.expr:
        changes["expr"] = inner
    if isinstance(lvalue, ir.Index) and not _is_constant(lvalue.index):
        tmp = checker.new_temp("index", lvalue.index.type, lvalue.loc)
        pre.append(checker.temp_decl(tmp, lvalue.index, lvalue.loc))
        changes["index"] = tmp
    return dataclasses.replace(lvalue, **changes) if changes else lvalue


def lift_operands(checker: Any, e: Any, pre: list[ir.Stmt], guarded: bool) -> Any:
    """`e` with the calls in its operands inlined, left to right. An operand that a
    later operand's side-effecting call could change (`{ a, f(a) }` where `f` writes
    `a`, or `a + f(a)`) is read into a temporary `tmp_N` first: the spec evaluates
    operands left to right (p4c's SideEffectOrdering)."""
    slots: list[tuple[str, Any, Any]] = []    # (field, key or None, operand)
    for f in dataclasses.fields(e):
        if f.name in ("ref", "type", "loc", "target", "tref"):
            continue
        v = getattr(e, f.name)
        if isinstance(v, ir.Expr):
            slots.append((f.name, None, v))
        elif isinstance(v, tuple) and v and isinstance(v[0], ir.Expr):
            slots.extend((f.name, i, x) for i, x in enumerate(v))
        elif isinstance(v, tuple) and v and isinstance(v[0], tuple):
            slots.extend((f.name, (i, k), x) for i, (k, x) in enumerate(v))
    done = []
    for n, (name, key, x) in enumerate(slots):
        x = checker.lift_expr(x, pre, guarded)
        later = [y for _, _, y in slots[n + 1:]]
        if later and has_side_effect_call(*later) and not _is_constant(x) \
                and isinstance(ir.unwrap(x.type), (ir.Bits, ir.Bool)):
            tmp = checker.new_temp("tmp", x.type, x.loc)
            pre.append(checker.temp_decl(tmp, x, x.loc))
            x = tmp
        done.append((name, key, x))
    changes: dict[str, Any] = {}
    for name, key, x in done:
        if key is None:
            changes[name] = x
        else:
            changes.setdefault(name, []).append((key[1], x) if isinstance(key, tuple) else x)
    changes = {k: tuple(v) if isinstance(v, list) else v for k, v in changes.items()}
    return dataclasses.replace(e, **changes) if changes else e
