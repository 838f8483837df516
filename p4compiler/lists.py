"""`list<T>` (P4_16 1.2.4: a sequence of values of one type whose length is the number
of elements written), as p4c types it: by the list expression that gives its value.

Applied while the parse tree becomes IR, so the type checker sees tuples only:
* `(list<T>) {a, b, c}` and `list<T> l = {a, b, c};` have the type `tuple<T, T, T>`;
* `for (T x in (list<T>) {a, b, c})` (also a plain `{a, b, c}`) evaluates the elements
  once, in order, before the first iteration, then iterates over those values (what
  p4test does: a body changing a variable an element reads does not change the
  element), `loops.unroll_for_in`.
Any other `list<T>` (a parameter, a value not written as a list) stays a `list` type
reference, which the type checker refuses with a clear error.
"""

from __future__ import annotations

from typing import Any

from . import ir


def literal_items(value: Any) -> tuple[ir.Expr, ...] | None:
    """The elements of a list written out (`{a, b}`, or cast `(list<T>) {a, b}`)."""
    if isinstance(value, ir.ListExpr):
        return value.items
    if isinstance(value, ir.Cast) and value.to.kind in ("list", "tuple") \
            and isinstance(value.expr, ir.ListExpr):
        return value.expr.items
    return None


def sized(tref: Any, value: Any) -> Any:
    """`list<T>` given the value `value` as `tuple<T, ..., T>` of its length."""
    if not isinstance(tref, ir.TypeRef) or tref.kind != "list":
        return tref
    items = literal_items(value)
    if items is None:
        return tref
    return ir.TypeRef("tuple", args=tref.args * len(items), loc=tref.loc)
