"""RemoveReturns (p4c's RemoveReturns) for bodies that are inlined: a statement list
without `return`. Code after a conditional return moves into the other branch, or is
guarded by a `hasReturned_N` flag when that is not possible; a returned value goes to
`retval`. Used by the type checker's function inliner and by InlineActions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .. import ir


def remove_returns(stmts: list[ir.Stmt], retval: ir.Name | None,
                   make_flag: Callable[[], tuple[ir.Name, ir.Stmt]]) -> list[ir.Stmt]:
    """`stmts` without returns; `make_flag()` gives a fresh bool local and its declaration
    (initialised to false), asked for only when a flag is needed."""
    try:
        return _rr_list(stmts, retval, None)
    except _NeedFlag:
        flag, decl = make_flag()
        return [decl] + _rr_list(stmts, retval, flag)


def _only_returns(s: Any) -> bool:
    """Every path ends in `return` (exit does not count: code after it still runs in
    other paths of the caller only through returns)."""
    if isinstance(s, ir.Return):
        return True
    if isinstance(s, ir.Block):
        return any(_only_returns(x) for x in s.stmts)
    if isinstance(s, ir.If):
        return s.other is not None and _only_returns(s.then) and _only_returns(s.other)
    return False


def _may_return(s: Any) -> bool:
    """`s` contains a `return` somewhere (not inside expressions: calls are inlined)."""
    if isinstance(s, ir.Return):
        return True
    if isinstance(s, ir.Block):
        return any(_may_return(x) for x in s.stmts)
    if isinstance(s, ir.If):
        return _may_return(s.then) or (s.other is not None and _may_return(s.other))
    if isinstance(s, ir.Switch):
        return any(c.body is not None and _may_return(c.body) for c in s.cases)
    return False


class _NeedFlag(Exception):
    pass


def _rr_stmt(s: ir.Stmt, retval: ir.Name | None, flag: ir.Name | None) -> ir.Stmt:
    if isinstance(s, ir.Return):
        out: list[ir.Stmt] = []
        if retval is not None and s.value is not None:
            out.append(ir.Assign(retval, s.value, s.loc))
        if flag is not None:
            out.append(ir.Assign(flag, ir.BoolLit(True, s.loc), s.loc))
        return ir.Block(tuple(out), s.loc)
    if isinstance(s, ir.Block):
        return ir.Block(tuple(_rr_list(list(s.stmts), retval, flag)), s.loc)
    if isinstance(s, ir.If):
        return ir.If(s.cond, _rr_stmt(s.then, retval, flag),
                     _rr_stmt(s.other, retval, flag) if s.other is not None else None, s.loc)
    if isinstance(s, ir.Switch):
        return dataclasses.replace(s, cases=tuple(
            dataclasses.replace(c, body=_rr_stmt(c.body, retval, flag)
                                if c.body is not None else None) for c in s.cases))
    return s


def _rr_list(stmts: list[ir.Stmt], retval: ir.Name | None, flag: ir.Name | None
             ) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for i, s in enumerate(stmts):
        if not _may_return(s):
            out.append(s)
            continue
        rest = stmts[i + 1:]
        if _only_returns(s):
            out.append(_rr_stmt(s, retval, flag))
            return out
        if isinstance(s, ir.If):
            then_m = _may_return(s.then)
            other_m = s.other is not None and _may_return(s.other)
            if _only_returns(s.then) and not other_m:
                other = ([s.other] if s.other is not None else []) + rest
                out.append(ir.If(s.cond, _rr_stmt(s.then, retval, flag),
                                 ir.Block(tuple(_rr_list(other, retval, flag)), s.loc)
                                 if other else None, s.loc))
                return out
            if s.other is not None and _only_returns(s.other) and not then_m:
                out.append(ir.If(s.cond, ir.Block(tuple(_rr_list([s.then] + rest, retval,
                                                                  flag)), s.loc),
                                 _rr_stmt(s.other, retval, flag), s.loc))
                return out
        if flag is None:
            raise _NeedFlag()
        out.append(_rr_stmt(s, retval, flag))
        if rest:
            out.append(ir.If(ir.Unary("!", flag, s.loc, ir.Bool()),
                             ir.Block(tuple(_rr_list(rest, retval, flag)), s.loc), None, s.loc))
        return out
    return out
