"""KeySideEffects (p4c's SideEffectOrdering on table keys, KeySideEffect).

A table key that calls a function the type checker inlines rather than substitutes
(a body that is more than `return expr;`, or out/inout parameters:
`key = { f(hdr.h.a) : exact @name("fa"); }`) has no value as an expression: the
call's statements must run first. As p4c does when any key of a table has side
effects, every key of that table becomes a `key_N` local, computed in key order
just before each apply of the table (the call inlined there by the type checker's
per-statement lowering: copy-in, body without returns, copy-out); the keys keep
their names and match kinds, so the P4Info does not change.

Runs after HoistTableApplies, so a table is applied only by `t.apply();`, an `if`
on `t.apply().hit`/`.miss`, an assigned value or a `switch` expression. Guarantees
to the next passes: no table key calls an inlined function.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..typecheck_entities import TableEntity
from ..typecheck_stmts import StatementChecks
from ..typecheck_tree import _inline_calls
from .runtime_index_keys import RuntimeIndexKeys
from .temps import Temps


class _Lowering:
    """The type checker's per-statement lowering, with this pass's temporaries."""

    lift_calls = StatementChecks.lift_calls
    lift_expr = StatementChecks.lift_expr
    expand_call = StatementChecks.expand_call
    remove_returns = StatementChecks.remove_returns
    concretize = StatementChecks.concretize
    finish = StatementChecks.finish
    temp_decl = staticmethod(Temps.decl)

    def __init__(self, temps: Temps):
        self.temps = temps

    def new_temp(self, base: str, t: ir.Type, loc: Any) -> ir.Name:
        return self.temps.new(base, t, loc)


class KeySideEffects(RuntimeIndexKeys):
    """Placing the computations before each apply is RuntimeIndexKeys' walk."""

    name = "KeySideEffects"

    def __init__(self, temps: Temps):
        super().__init__(temps)
        self.lowering = _Lowering(temps)

    def wants(self, t: TableEntity) -> bool:
        return any(_inline_calls(k.expr) for k in t.keys)

    def table(self, t: TableEntity) -> None:
        keys, computes = [], []
        for k in t.keys:
            e = k.expr
            tmp = self.temps.new("key", e.type or ir.Bool(), e.loc)
            computes.append(self.lowering.finish(ir.Assign(tmp, e, e.loc), "control"))
            keys.append(dataclasses.replace(k, expr=tmp))
        t.keys = tuple(keys)
        self.computes[id(t)] = computes
