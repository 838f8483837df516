"""Run-time header stack indices made concrete (p4c's HSIndexSimplifier), shared by the
type checker (every statement of an apply block, action or function) and the mid-end
passes that create statements of their own (a table key's temporary).

`hdr.s[i].f = x;` becomes `if (i == 0) hdr.s[0].f = x; else if (i == 1) ...`; an index
that is an expression is first saved in a `hsiVar` temporary; an index out of range
runs none of the branches."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from . import ir
from .errors import Location
from .typecheck_tree import _equiv, _rewrite_in, _runtime_indices

NewTemp = Callable[[str, ir.Type, Location], ir.Name]
TempDecl = Callable[[ir.Name, ir.Expr | None, Location], ir.Stmt]


def concretize(s: ir.Stmt, new_temp: NewTemp, temp_decl: TempDecl) -> ir.Stmt:
    """`s` with its run-time stack indices made constants by branching on them."""
    if isinstance(s, ir.Block):
        return ir.Block(tuple(concretize(x, new_temp, temp_decl) for x in s.stmts), s.loc)
    if isinstance(s, ir.If):
        scan: Any = s.cond
        distinct: list[ir.Index] = []
        for x in _runtime_indices(scan):
            if not any(_equiv(x, y) for y in distinct):
                distinct.append(x)
        if len(distinct) > 1:
            # Several run-time indices in one condition: evaluate it into a flag first.
            flag = new_temp("cond", ir.Bool(), s.loc)
            return ir.Block((temp_decl(flag, ir.BoolLit(False, s.loc), s.loc),
                             concretize(ir.Assign(flag, s.cond, s.loc), new_temp, temp_decl),
                             dataclasses.replace(s, cond=flag)), s.loc)
    elif isinstance(s, ir.Switch):
        scan = s.expr
    elif isinstance(s, (ir.Assign, ir.CallStmt, ir.VarDecl, ir.Return)):
        scan = s
    else:
        return s
    found = _runtime_indices(scan)
    if not found:
        return s
    return _branch_on(s, found[0], new_temp, temp_decl)


def _branch_on(s: ir.Stmt, idx: ir.Index, new_temp: NewTemp, temp_decl: TempDecl
               ) -> ir.Stmt:
    stack_t = ir.unwrap(idx.expr.type)  # type: ignore[arg-type]
    assert isinstance(stack_t, ir.Stack)
    pre: list[ir.Stmt] = []
    index = idx.index
    if isinstance(index, (ir.Binary, ir.Mux, ir.Unary, ir.Cast, ir.Slice, ir.Call)):
        tmp = new_temp("hsiVar", index.type or ir.Bits(32), idx.loc)
        pre.append(ir.Assign(tmp, index, idx.loc))
        s = _rewrite_in(s, lambda x: dataclasses.replace(x, index=tmp)
                        if isinstance(x, ir.Index) and _equiv(x, idx) else None)
        idx = ir.Index(idx.expr, tmp, idx.loc, idx.type)
        index = tmp
    it = index.type if isinstance(ir.unwrap(index.type), ir.Bits) else ir.Bits(32)  # type: ignore
    result: ir.Stmt | None = s.other if isinstance(s, ir.If) else None
    for i in reversed(range(stack_t.size)):
        lit = ir.Lit(i, idx.loc, it)
        si = _rewrite_in(s, lambda x, lit=lit: dataclasses.replace(x, index=lit)
                         if isinstance(x, ir.Index) and _equiv(x, idx) else None)
        eq = ir.Binary("==", index, lit, idx.loc, ir.Bool())
        if isinstance(si, ir.If):
            result = ir.If(ir.Binary("&&", eq, si.cond, si.loc, ir.Bool()), si.then,
                           result, si.loc)
        else:
            result = ir.If(eq, concretize(si, new_temp, temp_decl), result, s.loc)  # type: ignore
    assert result is not None
    return ir.Block(tuple(pre + [result]), s.loc) if pre else result  # type: ignore
