"""StrengthReduction (p4c's midend pass of that name), on unsigned `bit<W>` operands and a
constant right operand, so the back end never emits a division bmv2 may not support:

    x * 1, x / 1, x + 0, x - 0, x | 0, x ^ 0, x << 0, x >> 0  ->  x
    x * 0, x & 0  ->  0           x % 1  ->  0
    x * 2^k  ->  x << k          x / 2^k  ->  x >> k          x % 2^k  ->  x & (2^k - 1)

Guarantees to the next pass: no `/` or `%` by a power of two, no arithmetic identity
with a constant 0 or 1 on the right, in apply blocks, actions and parser states.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import ir
from ..typecheck_entities import TypedProgram
from .temps import Temps, rewrite_bodies

_IDENTITY_ZERO = ("+", "-", "|", "^", "<<", ">>")


def _reduce(x: Any) -> Any:
    if not (isinstance(x, ir.Binary) and isinstance(x.right, ir.Lit)
            and isinstance(x.type, ir.Bits) and not x.type.signed):
        return None
    op, c, loc, t = x.op, x.right.value, x.loc, x.type
    if (c == 0 and op in _IDENTITY_ZERO) or (c == 1 and op in ("*", "/")):
        return x.left
    if (c == 0 and op in ("*", "&")) or (c == 1 and op == "%"):
        return ir.Lit(0, loc, t)
    if c > 1 and c & (c - 1) == 0 and op in ("*", "/", "%"):
        k = c.bit_length() - 1
        if op == "%":
            return dataclasses.replace(x, op="&", right=ir.Lit(c - 1, loc, t))
        return dataclasses.replace(x, op="<<" if op == "*" else ">>", right=ir.Lit(k, loc, t))
    return None


class StrengthReduction:
    name = "StrengthReduction"

    def __init__(self, temps: Temps):
        self.temps = temps

    def run(self, program: TypedProgram) -> None:
        rewrite_bodies(program, _reduce)
