"""DropPureCalls: a call statement whose value is dropped and that cannot have an effect
(a function whose body is a single `return expr;`, which the type checker substitutes
into expressions, called with arguments that call nothing but such functions and
`isValid()`) is removed, as p4c's
SideEffectOrdering / dead-code passes do: the spec evaluates it and discards the value.

Guarantees to the next pass: no call statement of a substituted (pure) function.
"""

from __future__ import annotations

from typing import Any

from .. import ir
from ..typecheck_entities import TypedProgram
from ..typecheck_tree import _walk
from .temps import Temps, rewrite_bodies


def _pure(n: Any) -> bool:
    """A call without effects: `isValid()`, or a substituted function (its body is one
    expression; the calls an expression can make on v1model, functions and methods that
    return a value, change nothing)."""
    tgt = n.target
    return bool(tgt) and (tgt[0] == "function" or (tgt[0] == "builtin"
                                                   and tgt[1] == "isValid"))


def _pure_call_stmt(x: Any) -> bool:
    if not (isinstance(x, ir.CallStmt) and x.call.target and x.call.target[0] == "function"):
        return False
    return all(_pure(n) for a in x.call.args for n in _walk(a.value)
               if isinstance(n, ir.Call))


def _drop(x: Any) -> Any:
    if _pure_call_stmt(x):
        return ir.Empty(x.loc)
    return None


class DropPureCalls:
    name = "DropPureCalls"

    def __init__(self, temps: Temps):
        self.temps = temps

    def run(self, program: TypedProgram) -> None:
        rewrite_bodies(program, _drop)
