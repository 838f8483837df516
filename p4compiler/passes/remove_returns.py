"""RemoveReturns for inlined bodies: a statement list without `return` (p4c's RemoveReturns).

Code after a conditional return moves into the other branch, or is guarded by a
`hasReturned_N` flag when that is not possible; a returned value goes to `retval`.
"""

from __future__ import annotations

from .. import ir
from ..errors import Location
from ..typecheck import _NeedFlag, _rr_list
from .temps import Temps


def remove_returns(stmts: list[ir.Stmt], retval: ir.Name | None, temps: Temps,
                   loc: Location) -> list[ir.Stmt]:
    try:
        return _rr_list(stmts, retval, None)
    except _NeedFlag:
        flag = temps.new("hasReturned", ir.Bool(), loc)
        return [Temps.decl(flag, ir.BoolLit(False, loc), loc)] + _rr_list(stmts, retval, flag)
