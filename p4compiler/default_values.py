"""Default values (P4_16 8.26): what `{a = 1, ...}` and `{...}` give the fields not named.

Zero for bit<W>/int<W> (and serializable enums' underlying values), false for
bool, an invalid header for headers, and a struct's defaults field by field.
"""

from __future__ import annotations

from . import ir
from .errors import CompileError, Location


def fill_defaults(e: ir.StructExpr, expected: ir.Type | None) -> ir.StructExpr:
    """The struct expression without its `...` marker and with every missing field.

    A header's too (P4_16 8.26): assigned, it makes the header valid with those fields."""
    target = ir.unwrap(expected) if expected is not None else None
    if not isinstance(target, ir.StructLike) or target.kind not in ("struct", "header"):
        raise CompileError(e.loc, "`...` initializes the remaining fields of a struct or "
                           f"header; here the expected type is {expected or 'unknown'}")
    given = [(n, x) for n, x in e.fields if n != "..."]
    named = {n for n, _ in given}
    rest = tuple((f.name, default_value(f.type, f.name, e.loc))
                 for f in target.fields if f.name not in named)
    return ir.StructExpr(tuple(given) + rest, e.loc)


def fill_list(e: ir.ListExpr, expected: ir.Type | None) -> ir.ListExpr:
    """`{1, ...}`: the values given, then the defaults of the remaining components of the
    tuple or struct the context expects."""
    given = e.items[:-1]
    target = ir.unwrap(expected) if expected is not None else None
    if isinstance(target, ir.TupleT):
        types = list(target.items)
    elif isinstance(target, ir.StructLike) and target.kind in ("struct", "header"):
        types = [f.type for f in target.fields]
    else:
        raise CompileError(e.loc, "`{..., ...}` fills the rest of a tuple or struct; here the "
                           f"expected type is {expected or 'unknown'}")
    if len(given) > len(types):
        raise CompileError(e.loc, f"{len(given)} values given for {len(types)} components")
    rest = tuple(default_value(t, f"component {i}", e.loc)
                 for i, t in enumerate(types) if i >= len(given))
    return ir.ListExpr(tuple(given) + rest, e.loc)


def default_value(t: ir.Type | None, name: str, loc: Location) -> ir.Expr:
    u = ir.unwrap(t) if t is not None else None
    if isinstance(u, ir.TupleT):
        return ir.ListExpr(tuple(default_value(x, f"{name}[{i}]", loc)
                                 for i, x in enumerate(u.items)), loc, t)
    if isinstance(u, ir.Bits):
        return ir.Lit(0, loc, t)
    if isinstance(u, ir.Bool):
        return ir.BoolLit(False, loc)
    if isinstance(u, ir.StructLike) and u.kind == "header":
        return ir.InvalidHeader(loc, t)
    if isinstance(u, ir.StructLike) and u.kind == "struct":
        return ir.StructExpr(tuple((f.name, default_value(f.type, f.name, loc))
                                   for f in u.fields), loc)
    if isinstance(u, ir.Enum) and u.underlying is not None:
        return ir.Cast(ir.TypeRef("bit"), ir.Lit(0, loc, u.underlying), loc, t)
    raise CompileError(loc, f"{name}: no default value for a field of type {t} "
                       "is supported here; give it explicitly")
