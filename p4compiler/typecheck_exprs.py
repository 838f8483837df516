"""The type checker's expressions and calls.

A mixin of typecheck.Checker."""

from __future__ import annotations

import dataclasses
from typing import Any

from . import default_values, ir
from .errors import CompileError, Location
from .typecheck_entities import (
    ActionEntity,
    AliasEntity,
    ConstEntity,
    ControlInstance,
    ExternFunctionEntity,
    FunctionEntity,
    InstanceEntity,
    ParamEntity,
    Scope,
    StateEntity,
    TableEntity,
    TypeEntity,
    ValueSetEntity,
    VarEntity,
)
from .typecheck_tree import (
    _always_returns,
    _describe_expr,
    _fold,
    _has_side_effects,
    _is_num,
    _runtime_indices,
    _type_text,
    _wrap,
)


class ExpressionChecks:
    # ------------------------------------------------------------ expressions

    def coerce(self, e: ir.Expr, t: ir.Type | None, loc: Location) -> ir.Expr:
        """Implicit conversion of `e` to type `t` (integer literals only), else an error."""
        if t is None or e.type is None:
            return e
        et, tt = e.type, t
        if et == tt:
            return e
        if isinstance(tt, ir.DontCareT) or isinstance(et, ir.DontCareT):
            return e
        if isinstance(tt, ir.TypeVar) or isinstance(et, ir.TypeVar):
            return e
        if isinstance(et, ir.InfInt) and isinstance(e, ir.Lit):
            target = ir.unwrap(tt)
            if isinstance(target, ir.Bits):
                limit = 1 << (target.bits - 1 if target.signed else target.bits)
                w = _wrap(e.value, target)
                if e.value >= limit and not (target.signed and e.value < 1 << target.bits):
                    # p4c (IR::Constant's overflow check): a warning, and the value wraps
                    self.diags.warn(e.loc or loc, f"{e.value}: value does not fit in "
                                    f"{target.bits} bits ({tt}), it wraps to {w}")
                return ir.Lit(w, e.loc, tt, e.base)
            if isinstance(target, ir.InfInt):
                return e
        if isinstance(et, ir.InfInt) and isinstance(ir.unwrap(tt), ir.Bits):
            return dataclasses.replace(e, type=tt)  # type: ignore[call-arg]
        if isinstance(e, ir.ListExpr) and isinstance(tt, (ir.StructLike, ir.TupleT)):
            return self.list_to(e, tt, loc)
        if isinstance(e, ir.StructExpr) and isinstance(tt, ir.StructLike):
            return dataclasses.replace(e, type=tt)
        if isinstance(e, ir.InvalidHeader) and isinstance(tt, ir.StructLike):
            return dataclasses.replace(e, type=tt)
        if isinstance(tt, ir.NewType) and tt.base == et and isinstance(e, ir.Lit):
            return dataclasses.replace(e, type=tt)
        if isinstance(et, ir.Enum) and et.underlying is not None \
                and ir.unwrap(tt) == et.underlying:
            # P4_16 8.11.2: a serializable enum converts to its underlying type.
            if isinstance(e, ir.Member) and isinstance(e.expr, ir.TypeName) \
                    and e.member in et.members and et.values:
                return ir.Lit(et.values[et.members.index(e.member)], e.loc, tt, 16)
            return ir.Cast(ir.TypeRef("bit"), e, e.loc, tt)
        raise CompileError(loc, f"cannot implicitly cast {_type_text(et)} to {_type_text(tt)}")

    def list_to(self, e: ir.ListExpr, t: ir.Type, loc: Location) -> ir.Expr:
        if isinstance(t, ir.StructLike):
            if len(e.items) != len(t.fields):
                raise CompileError(loc, f"{t.name} has {len(t.fields)} fields, the list has "
                                   f"{len(e.items)} values")
            items = tuple(self.coerce(x, f.type, loc) for x, f in zip(e.items, t.fields,
                                                                      strict=True))
            return ir.StructExpr(tuple((f.name, x) for f, x in zip(t.fields, items, strict=True)),
                                 e.loc, t)
        assert isinstance(t, ir.TupleT)
        items = tuple(self.coerce(x, ty, loc) for x, ty in zip(e.items, t.items, strict=False))
        return ir.ListExpr(items, e.loc, t)

    def expr(self, e: ir.Expr, scope: Scope, expected: ir.Type | None = None) -> ir.Expr:
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            raise CompileError(getattr(e, "loc", None), f"unsupported expression "
                               f"{type(e).__name__}")
        return m(e, scope, expected)

    def e_Lit(self, e: ir.Lit, scope: Scope, expected: ir.Type | None) -> ir.Expr:
        if e.type is None:
            return dataclasses.replace(e, type=ir.InfInt())
        t = ir.unwrap(e.type)
        if isinstance(t, ir.Bits) and _wrap(e.value, t) != e.value:
            # P4_16 8.9.1: the value is taken modulo 2^W (two's complement for int<W>); p4c warns
            w = _wrap(e.value, t)
            self.diags.warn(e.loc, f"{e.value}: value does not fit in {t}, it wraps to {w}")
            return dataclasses.replace(e, value=w)
        return e

    def e_BoolLit(self, e, scope, expected):
        return e

    def e_StrLit(self, e, scope, expected):
        return e

    def e_ErrorMember(self, e: ir.ErrorMember, scope, expected):
        if e.name not in self.errors:
            raise CompileError(e.loc, f"error.{e.name}: no such error")
        return e

    def e_DefaultKey(self, e, scope, expected):
        return e

    def e_InvalidHeader(self, e, scope, expected):
        return dataclasses.replace(e, type=expected)

    def e_Name(self, e: ir.Name, scope: Scope, expected) -> ir.Expr:
        ent = (self.globals if e.top else scope).lookup(e.name)
        if ent is None:
            raise CompileError(e.loc, f"{e.name}: undeclared name")
        if isinstance(ent, ConstEntity):
            v = ent.value
            return dataclasses.replace(v, loc=e.loc)  # type: ignore[call-arg]
        if isinstance(ent, AliasEntity):
            return ent.value
        if isinstance(ent, (ParamEntity, VarEntity)):
            return ir.Name(e.name, e.loc, ent.type, ent)
        if isinstance(ent, InstanceEntity):
            return ir.Name(e.name, e.loc, ent.type, ent)
        if isinstance(ent, ActionEntity):
            return ir.Name(e.name, e.loc, ir.CallableT("action", ent.qualified), ent)
        if isinstance(ent, TableEntity):
            return ir.Name(e.name, e.loc, ir.CallableT("table", ent.qualified), ent)
        if isinstance(ent, (ExternFunctionEntity, FunctionEntity)):
            return ir.Name(e.name, e.loc, ir.CallableT("function", e.name), ent)
        if isinstance(ent, ValueSetEntity):
            return ir.Name(e.name, e.loc, ent.type, ent)
        if isinstance(ent, ControlInstance):
            return ir.Name(e.name, e.loc, ir.BlockT("control", ent.decl.name), ent)
        if isinstance(ent, StateEntity):
            return ir.Name(e.name, e.loc, None, ent)
        if isinstance(ent, TypeEntity):
            return ir.TypeName(ir.TypeRef("name", name=e.name), e.loc, ent.type)
        raise CompileError(e.loc, f"{e.name} cannot be used in an expression")

    def e_TypeName(self, e: ir.TypeName, scope, expected):
        return dataclasses.replace(e, type=self.resolve_type(e.tref, scope))

    def e_Member(self, e: ir.Member, scope: Scope, expected) -> ir.Expr:
        base = self.expr(e.expr, scope)
        bt = ir.unwrap(base.type) if base.type is not None else None
        m = e.member
        if isinstance(base, ir.TypeName):
            t = base.type
            if isinstance(t, ir.Enum):
                if m not in t.members:
                    raise CompileError(e.loc, f"{t.name}.{m}: no such enum member")
                return ir.Member(base, m, e.loc, t)
            if m in ir.SIZE_METHODS and isinstance(ir.unwrap(t), (ir.StructLike, ir.Stack)):
                return ir.Member(base, m, e.loc, ir.CallableT("builtin", m))  # H.minSizeInBits()
            raise CompileError(e.loc, f"{t}.{m}: not a member")
        if m in ir.SIZE_METHODS and isinstance(bt, (ir.StructLike, ir.Stack)):
            return ir.Member(base, m, e.loc, ir.CallableT("builtin", m))
        if isinstance(bt, ir.StructLike):
            f = bt.field(m)
            if f is not None:
                return ir.Member(base, m, e.loc, f.type)
            if bt.kind in ("header", "header_union") and m in ("isValid", "setValid",
                                                                "setInvalid"):
                return ir.Member(base, m, e.loc, ir.CallableT("builtin", m))
            raise CompileError(e.loc, f"{m}: no such field in {bt.name}")
        if isinstance(bt, ir.Stack):
            if m in ("next", "last"):
                return ir.Member(base, m, e.loc, bt.elem)
            if m in ("size", "lastIndex"):
                return ir.Member(base, m, e.loc, ir.Bits(32))
            if m in ("push_front", "pop_front"):
                return ir.Member(base, m, e.loc, ir.CallableT("builtin", m))
            raise CompileError(e.loc, f"{m}: not a header stack member")
        if isinstance(bt, ir.ExternT):
            ext = self.globals.lookup(bt.name).decl
            if not any(meth.name == m for meth in ext.methods):
                raise CompileError(e.loc, f"{m}: {bt.name} has no method of that name")
            return ir.Member(base, m, e.loc, ir.CallableT("method", m))
        if isinstance(base, ir.Name) and isinstance(base.ref, ControlInstance) and m == "apply":
            return ir.Member(base, m, e.loc, ir.CallableT("control_apply", base.ref.prefix))
        if isinstance(bt, ir.CallableT) and bt.kind == "table" and m == "apply":
            return ir.Member(base, m, e.loc, ir.CallableT("apply", bt.name))
        if isinstance(bt, ir.ApplyResult):
            if m in ("hit", "miss"):
                return ir.Member(base, m, e.loc, ir.Bool())
            if m == "action_run":
                return ir.Member(base, m, e.loc, ir.ActionEnum(bt.table))
            raise CompileError(e.loc, f"{m}: not a member of a table apply result")
        raise CompileError(e.loc, f"{m}: {_type_text(base.type)} has no members")

    def e_Index(self, e: ir.Index, scope: Scope, expected) -> ir.Expr:
        base = self.expr(e.expr, scope)
        idx = self.expr(e.index, scope)
        bt = ir.unwrap(base.type) if base.type else None
        it = ir.unwrap(idx.type) if idx.type else None
        if isinstance(bt, ir.Stack) and isinstance(it, ir.Enum) and it.underlying is not None:
            idx = self.coerce(idx, it.underlying, e.loc)  # a serializable enum's value (p4c)
        if isinstance(bt, ir.Stack):
            if isinstance(idx, ir.Lit) and not 0 <= idx.value < bt.size:
                raise CompileError(e.loc, f"index {idx.value} out of bounds for {bt}")
            if not _is_num(idx.type):
                raise CompileError(e.loc, f"stack index must be an integer, not {idx.type}")
            return ir.Index(base, idx, e.loc, bt.elem)
        if isinstance(bt, ir.TupleT) and isinstance(idx, ir.Lit):
            if not 0 <= idx.value < len(bt.items):
                raise CompileError(e.loc, f"index {idx.value} out of bounds for "
                                   f"{_type_text(base.type)}")
            if isinstance(base, ir.ListExpr):  # a tuple constant's element
                return base.items[idx.value]
            return ir.Index(base, idx, e.loc, bt.items[idx.value])
        raise CompileError(e.loc, f"cannot index a value of type {_type_text(base.type)}")

    def e_Slice(self, e: ir.Slice, scope: Scope, expected) -> ir.Expr:
        base = self.expr(e.expr, scope)
        hi = self.const_int(self.expr(e.hi, scope), scope)
        lo = self.const_int(self.expr(e.lo, scope), scope)
        bt = ir.unwrap(base.type) if base.type else None
        if isinstance(bt, ir.InfInt) and isinstance(base, ir.Lit):
            return ir.Lit((base.value >> lo) & ((1 << (hi - lo + 1)) - 1), e.loc,
                          ir.Bits(hi - lo + 1))
        if not isinstance(bt, ir.Bits):
            raise CompileError(e.loc, f"cannot slice a value of type {_type_text(base.type)}")
        if not (0 <= lo <= hi < bt.bits):
            raise CompileError(e.loc, f"slice [{hi}:{lo}] out of range for {bt}")
        if isinstance(base, ir.Lit):
            return ir.Lit((base.value >> lo) & ((1 << (hi - lo + 1)) - 1), e.loc,
                          ir.Bits(hi - lo + 1))
        return ir.Slice(base, ir.Lit(hi, e.loc, ir.InfInt()), ir.Lit(lo, e.loc, ir.InfInt()),
                        e.loc, ir.Bits(hi - lo + 1))

    def e_Unary(self, e: ir.Unary, scope: Scope, expected) -> ir.Expr:
        x = self.expr(e.expr, scope, expected)
        t = ir.unwrap(x.type) if x.type else None
        if e.op == "!":
            if not isinstance(t, ir.Bool):
                raise CompileError(e.loc, f"! needs a bool operand, not {_type_text(x.type)}")
            if isinstance(x, ir.BoolLit):
                return ir.BoolLit(not x.value, e.loc)
            return ir.Unary("!", x, e.loc, ir.Bool())
        if not isinstance(t, (ir.Bits, ir.InfInt)):
            raise CompileError(e.loc, f"{e.op} needs an integer operand, not "
                               f"{_type_text(x.type)}")
        if e.op == "~" and isinstance(t, ir.InfInt):
            raise CompileError(e.loc, "~ cannot be applied to an integer of unknown width")
        if isinstance(x, ir.Lit):
            v = -x.value if e.op == "-" else ~x.value
            if isinstance(t, ir.Bits):
                v = _wrap(v, t)
            return ir.Lit(v, e.loc, x.type)
        return ir.Unary(e.op, x, e.loc, x.type)

    def e_Cast(self, e: ir.Cast, scope: Scope, expected) -> ir.Expr:
        to = self.resolve_type(e.to, scope)
        x = self.expr(e.expr, scope, None)
        src = ir.unwrap(x.type) if x.type else None
        dst = ir.unwrap(to)
        ok = False
        if isinstance(dst, ir.Bits):
            ok = isinstance(src, (ir.Bits, ir.InfInt)) or (isinstance(src, ir.Bool)
                                                           and dst.bits == 1) \
                or (isinstance(src, ir.Enum) and src.underlying is not None)
        elif isinstance(dst, ir.Bool):
            ok = isinstance(src, ir.Bool) or (isinstance(src, ir.Bits) and src.bits == 1) \
                or isinstance(src, ir.InfInt)
        elif isinstance(dst, ir.Enum):
            ok = isinstance(src, (ir.Bits, ir.InfInt)) and dst.underlying is not None
        elif isinstance(dst, ir.StructLike) and isinstance(x, ir.InvalidHeader):
            return dataclasses.replace(x, type=to)   # `(H){#}` (P4_16 8.26)
        elif isinstance(dst, ir.StructLike) and isinstance(x, (ir.ListExpr, ir.StructExpr)):
            return self.coerce(x, to, e.loc)
        elif isinstance(dst, ir.TupleT) and isinstance(x, ir.ListExpr):
            # `(list<T>) {1, 2}` / `(tuple<..>) {..}`: each element converts to its type
            if len(x.items) != len(dst.items):
                raise CompileError(e.loc, f"cannot cast a list of {len(x.items)} values "
                                   f"to {_type_text(to)}")
            return self.coerce(x, dst, e.loc)
        if not ok:
            raise CompileError(e.loc, f"cannot cast {_type_text(x.type)} to {to}")
        if isinstance(src, ir.Enum) and isinstance(dst, ir.Bits) and src.underlying is not None:
            x = self.coerce(x, src.underlying, e.loc)  # an enum constant folds to its value
        if isinstance(x, ir.Lit) and isinstance(dst, ir.Bits):
            return ir.Lit(_wrap(x.value, dst), e.loc, to, x.base)
        if isinstance(x, ir.Lit) and isinstance(dst, ir.Bool):
            return ir.BoolLit(bool(x.value), e.loc)
        if x.type == to:
            return x
        return ir.Cast(e.to, x, e.loc, to)

    def e_Mux(self, e: ir.Mux, scope: Scope, expected) -> ir.Expr:
        c = self.expr(e.cond, scope, ir.Bool())
        if not isinstance(c.type, ir.Bool):
            raise CompileError(e.loc, "?: condition must be bool")
        a = self.expr(e.then, scope, expected)
        b = self.expr(e.other, scope, expected)
        a, b, t = self.unify(a, b, "?:", e.loc)
        if isinstance(c, ir.BoolLit):
            return a if c.value else b
        return ir.Mux(c, a, b, e.loc, t)

    def unify(self, a: ir.Expr, b: ir.Expr, op: str, loc: Location
              ) -> tuple[ir.Expr, ir.Expr, ir.Type | None]:
        at, bt = a.type, b.type
        if at == bt:
            return a, b, at
        if isinstance(at, ir.InfInt):
            return self.coerce(a, bt, loc), b, bt
        if isinstance(bt, ir.InfInt):
            return a, self.coerce(b, at, loc), at
        if isinstance(at, ir.NewType) and at.base == bt and isinstance(b, ir.Lit):
            return a, dataclasses.replace(b, type=at), at
        if isinstance(bt, ir.NewType) and bt.base == at and isinstance(a, ir.Lit):
            return dataclasses.replace(a, type=bt), b, bt
        # a serializable enum next to a value of its underlying type converts to that type
        # (P4_16 8.11.2; `hdr.vlan.ether_type == hdr.eth.etherType`)
        if isinstance(at, ir.Enum) and at.underlying is not None and \
                ir.unwrap(bt) == at.underlying:
            return self.coerce(a, bt, loc), b, bt
        if isinstance(bt, ir.Enum) and bt.underlying is not None and \
                ir.unwrap(at) == bt.underlying:
            return a, self.coerce(b, at, loc), at
        raise CompileError(loc, f"{op}: cannot operate on values of different types "
                           f"{_type_text(at)} and {_type_text(bt)}")

    def e_Binary(self, e: ir.Binary, scope: Scope, expected) -> ir.Expr:
        op = e.op
        if op in ("&&", "||"):
            a = self.expr(e.left, scope, ir.Bool())
            b = self.expr(e.right, scope, ir.Bool())
            for x in (a, b):
                if not isinstance(x.type, ir.Bool):
                    raise CompileError(e.loc, f"{op} needs bool operands, not "
                                       f"{_type_text(x.type)}")
            if isinstance(a, ir.BoolLit) and isinstance(b, ir.BoolLit):
                return ir.BoolLit(a.value and b.value if op == "&&" else a.value or b.value,
                                  e.loc)
            return ir.Binary(op, a, b, e.loc, ir.Bool())
        if op in ("==", "!=") and (_is_aggregate_literal(e.left)
                                   or _is_aggregate_literal(e.right)):
            a, b = self.aggregate_operands(e, scope)
        else:
            a = self.expr(e.left, scope)
            b = self.expr(e.right, scope)
        if op in ("<<", ">>"):
            if not _is_num(a.type) or not _is_num(b.type):
                raise CompileError(e.loc, f"{op} needs integer operands")
            if isinstance(ir.unwrap(b.type), ir.Bits) and ir.unwrap(b.type).signed:  # type: ignore
                raise CompileError(e.loc, f"{op}: shift amount must be unsigned")
            if isinstance(a.type, ir.InfInt) and not isinstance(b, ir.Lit):
                if expected is not None and isinstance(ir.unwrap(expected), ir.Bits):
                    a = self.coerce(a, expected, e.loc)
                else:
                    raise CompileError(e.loc, f"{op}: the width of the shifted value is unknown")
            t = a.type
            at = ir.unwrap(t) if t is not None else None
            if isinstance(b, ir.Lit) and isinstance(at, ir.Bits) and b.value >= at.bits:
                self.diags.warn(e.loc, f"{_describe_expr(a)} {op} {b.value}: shifting a value "
                                f"with {at.bits} bits by {b.value}")
            if isinstance(a, ir.Lit) and isinstance(b, ir.Lit):
                v = a.value << b.value if op == "<<" else a.value >> b.value
                return ir.Lit(_wrap(v, t) if isinstance(t, ir.Bits) else v, e.loc, t)
            return ir.Binary(op, a, b, e.loc, t)
        if op == "++":
            at, bt = ir.unwrap(a.type), ir.unwrap(b.type)
            if not isinstance(at, ir.Bits) or not isinstance(bt, ir.Bits):
                raise CompileError(e.loc, f"++ needs operands of fixed width, not "
                                   f"{_type_text(a.type)} and {_type_text(b.type)}")
            t = ir.Bits(at.bits + bt.bits, at.signed)
            if isinstance(a, ir.Lit) and isinstance(b, ir.Lit):
                return ir.Lit((a.value << bt.bits) | b.value, e.loc, t)
            return ir.Binary(op, a, b, e.loc, t)
        if isinstance(a.type, ir.InfInt) and expected is not None and \
                isinstance(ir.unwrap(expected), ir.Bits) and isinstance(b.type, ir.InfInt) and \
                op not in ("==", "!=", "<", ">", "<=", ">="):
            a = self.coerce(a, expected, e.loc)
        a, b, t = self.unify(a, b, op, e.loc)
        ut = ir.unwrap(t) if t is not None else None
        if op in ("==", "!="):
            if isinstance(a, ir.Lit) and isinstance(b, ir.Lit):
                return ir.BoolLit((a.value == b.value) == (op == "=="), e.loc)
            if isinstance(a, ir.BoolLit) and isinstance(b, ir.BoolLit):
                return ir.BoolLit((a.value == b.value) == (op == "=="), e.loc)
            return ir.Binary(op, a, b, e.loc, ir.Bool())
        if not isinstance(ut, (ir.Bits, ir.InfInt)):
            raise CompileError(e.loc, f"{op} needs integer operands, not {_type_text(t)}")
        if op in ("<", ">", "<=", ">="):
            if isinstance(a, ir.Lit) and isinstance(b, ir.Lit):
                r = {"<": a.value < b.value, ">": a.value > b.value,
                     "<=": a.value <= b.value, ">=": a.value >= b.value}[op]
                return ir.BoolLit(r, e.loc)
            return ir.Binary(op, a, b, e.loc, ir.Bool())
        if op in ("/", "%") and isinstance(ut, ir.Bits) and ut.signed:
            raise CompileError(e.loc, f"{op} is not defined on signed values")
        if isinstance(a, ir.Lit) and isinstance(b, ir.Lit):
            v = _fold(op, a.value, b.value, ut, e.loc)
            return ir.Lit(v, e.loc, t)
        return ir.Binary(op, a, b, e.loc, t)

    def aggregate_operands(self, e: ir.Binary, scope: Scope) -> tuple[ir.Expr, ir.Expr]:
        """Operands of `s == {a, b}` (P4_16 8.12, 8.26): the list or struct expression
        takes the type of the other operand, typed first, as p4c's type inference."""
        lit_left = _is_aggregate_literal(e.left) and not _is_aggregate_literal(e.right)
        first, second = (e.right, e.left) if lit_left else (e.left, e.right)
        x = self.expr(first, scope)
        t = ir.unwrap(x.type) if x.type is not None else None
        if isinstance(t, (ir.StructLike, ir.TupleT)):
            y = self.coerce(self.expr(second, scope, t), t, e.loc)
        else:
            y = self.expr(second, scope)
        return (y, x) if lit_left else (x, y)

    def e_Dots(self, e: ir.Dots, scope: Scope, expected) -> ir.Expr:
        if expected is None:
            raise CompileError(e.loc, "`...` is the default value of a type; here nothing "
                               "says which (declare the variable's type)")
        return self.expr(default_values.default_value(expected, "...", e.loc), scope, expected)

    def e_ListExpr(self, e: ir.ListExpr, scope: Scope, expected) -> ir.Expr:
        if e.items and isinstance(e.items[-1], ir.Dots):  # `{1, ...}`: the rest default
            e = default_values.fill_list(e, expected)
        if isinstance(expected, ir.TupleT) and len(e.items) == len(expected.items):
            items = tuple(self.coerce(self.expr(x, scope, t), t, e.loc)
                          for x, t in zip(e.items, expected.items, strict=True))
            return ir.ListExpr(items, e.loc, expected)
        if isinstance(expected, ir.StructLike):
            items = tuple(self.expr(x, scope, f.type) for x, f in
                          zip(e.items, expected.fields, strict=False))
            return self.list_to(ir.ListExpr(items, e.loc), expected, e.loc)
        items = tuple(self.expr(x, scope) for x in e.items)
        return ir.ListExpr(items, e.loc, ir.TupleT(tuple(i.type for i in items)))  # type: ignore

    def e_StructExpr(self, e: ir.StructExpr, scope: Scope, expected) -> ir.Expr:
        if len(e.fields) == 1 and e.fields[0][0] == "..." and isinstance(expected, ir.TupleT):
            return self.expr(default_values.default_value(expected, "...", e.loc), scope,
                             expected)  # `{...}` for a tuple
        if e.fields and e.fields[-1][0] == "...":  # frontend hook: `{a = 1, ...}`
            e = default_values.fill_defaults(e, expected)
        if isinstance(expected, ir.StructLike):
            fields = []
            for name, x in e.fields:
                f = expected.field(name)
                if f is None:
                    raise CompileError(e.loc, f"{name}: no such field in {expected.name}")
                if any(n == name for n, _ in fields):
                    raise CompileError(e.loc, f"{name}: given twice in a {expected.name} "
                                       "expression")
                fields.append((name, self.coerce(self.expr(x, scope, f.type), f.type, e.loc)))
            missing = [f.name for f in expected.fields if f.name not in dict(fields)]
            if missing and expected.kind in ("struct", "header"):
                raise CompileError(e.loc, f"a {expected.name} expression must give every field; "
                                   f"missing: {', '.join(missing)} (or end it with `...`)")
            return ir.StructExpr(tuple(fields), e.loc, expected)
        fields = [(n, self.expr(x, scope)) for n, x in e.fields]
        t = ir.StructLike("struct", "", tuple(ir.StructField(n, x.type) for n, x in fields))
        return ir.StructExpr(tuple(fields), e.loc, t)

    def e_MaskKey(self, e, scope, expected):
        return self.keyset(e, expected, scope)

    def e_RangeKey(self, e, scope, expected):
        return self.keyset(e, expected, scope)

    # ------------------------------------------------------------ calls

    def e_Call(self, e: ir.Call, scope: Scope, expected) -> ir.Expr:
        callee = e.callee
        if isinstance(callee, ir.TypeName):
            t = self.resolve_type(callee.tref, scope)
            return ir.Call(dataclasses.replace(callee, type=t), e.args, e.type_args, e.loc, t,
                           ("ctor", t))
        fn = self.expr(callee, scope)
        ft = fn.type
        if isinstance(fn, ir.Name) and isinstance(fn.ref, ActionEntity):
            return self.call_action(e, fn, fn.ref, scope)
        if isinstance(fn, ir.Name) and isinstance(fn.ref, ExternFunctionEntity):
            return self.call_extern_function(e, fn, fn.ref, scope)
        if isinstance(fn, ir.Name) and isinstance(fn.ref, FunctionEntity):
            return self.call_function(e, fn, fn.ref, scope)
        if isinstance(fn, ir.Member) and isinstance(ft, ir.CallableT):
            if ft.kind == "builtin":
                return self.call_builtin(e, fn, scope)
            if ft.kind == "method":
                return self.call_method(e, fn, scope)
            if ft.kind == "control_apply":
                return self.inline_control(e, fn, scope)
            if ft.kind == "apply":
                if e.args:
                    raise CompileError(e.loc, "table apply takes no arguments")
                return ir.Call(fn, (), (), e.loc, ir.ApplyResult(ft.name), ("apply", fn.expr.ref))
        raise CompileError(e.loc, f"{_describe_expr(callee)} is not callable")

    def _args(self, e: ir.Call, params: tuple[ir.Param, ...], scope: Scope,
              bindings: dict[str, ir.Type], name: str,
              type_params: tuple[str, ...] = ()) -> tuple[ir.Arg, ...]:
        args = list(with_defaults(e.args, params))
        if any(a.name for a in args):
            by_name = {a.name: a for a in args}
            missing = [p.name for p in params if p.name not in by_name and p.direction != ""
                       or (p.name not in by_name and p.direction == "")]
            if missing:
                raise CompileError(e.loc, f"{name}: missing argument {missing[0]}")
            args = [by_name[p.name] for p in params]
        if len(args) != len(params):
            raise CompileError(e.loc, f"{name}: expects {len(params)} arguments, "
                               f"got {len(args)}")
        out = []
        gscope = self._bound(bindings, type_params)
        for a, p in zip(args, params, strict=True):
            pt = self.resolve_type(p.tref, gscope)
            if a.value is None:
                out.append(a)
                continue
            want = None if isinstance(pt, ir.TypeVar) else pt
            v = self.expr(a.value, scope, want)
            if isinstance(pt, ir.TypeVar):
                if pt.name in bindings and not isinstance(v.type, ir.InfInt):
                    v = self.coerce(v, bindings[pt.name], a.loc)
                elif pt.name not in bindings and not isinstance(v.type, ir.InfInt):
                    bindings[pt.name] = v.type  # type: ignore[assignment]
                    gscope.names[pt.name] = TypeEntity(v.type)
            else:
                v = self.coerce(v, pt, a.loc)
            if p.direction in ("out", "inout"):
                self.check_lvalue(v, a.loc)
            out.append(ir.Arg(v, p.name, a.loc))
        return tuple(out)

    def call_action(self, e: ir.Call, fn: ir.Name, a: ActionEntity, scope: Scope) -> ir.Expr:
        e = dataclasses.replace(e, args=with_defaults(e.args, a.params))
        if any(x.name for x in e.args):
            by_name = {x.name: x for x in e.args}
            if set(by_name) == {p.name for p in a.params}:
                e = dataclasses.replace(e, args=tuple(by_name[p.name] for p in a.params))
        if len(e.args) != len(a.params):
            raise CompileError(e.loc, f"{a.name}: expects {len(a.params)} arguments, "
                               f"got {len(e.args)}")
        args = []
        for arg, p in zip(e.args, a.params, strict=True):
            assert arg.value is not None
            v = self.coerce(self.expr(arg.value, scope, p.type), p.type, arg.loc)
            if p.direction in ("out", "inout"):
                self.check_lvalue(v, arg.loc)
            args.append(ir.Arg(v, p.name, arg.loc))
        if self.block is not None and _in_apply_block(scope):
            self.block.direct_actions.append(a)
        return ir.Call(fn, tuple(args), (), e.loc, ir.Void(), ("action", a))

    def call_extern_function(self, e: ir.Call, fn: ir.Name, f: ExternFunctionEntity,
                             scope: Scope) -> ir.Expr:
        protos = [p for p in f.protos if len(p.params) == len(e.args)]
        if not protos:
            counts = " or ".join(sorted({str(len(p.params)) for p in f.protos}))
            raise CompileError(e.loc, f"{f.name}: expects {counts} arguments, got {len(e.args)}")
        proto = protos[0]
        bindings: dict[str, ir.Type] = {}
        for tp, ta in zip(proto.type_params, e.type_args, strict=False):
            bindings[tp] = self.resolve_type(ta, scope)
        args = self._args(e, proto.params, scope, bindings, f.name, proto.type_params)
        ret = self.resolve_type(proto.ret, self._bound(bindings, proto.type_params)) \
            if proto.ret else ir.Void()
        if f.name == "static_assert":
            return _static_assert(e, args)
        if f.name == "digest":
            data = args[1].value
            assert data is not None
            self.digests.append((data.type, e.loc))  # type: ignore[arg-type]
        if ir.annotation(proto.annotations, "deprecated"):
            msg = ir.annotation_string(proto.annotations, "deprecated") or ""
            self.diags.warn(e.loc, f"{f.name} is deprecated: {msg}")
        return ir.Call(fn, args, e.type_args, e.loc, ret, ("extern_function", f.name, proto))

    def _bound(self, bindings: dict[str, ir.Type], type_params: tuple[str, ...] = ()
               ) -> Scope:
        """Type parameters (unbound ones as type variables) shadowing global names."""
        s = Scope(self.globals, "generic")
        for k in type_params:
            s.names[k] = TypeEntity(ir.TypeVar(k))
        for k, v in bindings.items():
            s.names[k] = TypeEntity(v)
        return s

    def _specialise(self, e: ir.Call, name: str, proto: ir.MethodProto,
                    bindings: dict[str, ir.Type], args: list[ir.Arg] | tuple[ir.Arg, ...]
                    ) -> Scope:
        """The scope a generic function's signature and body are typed in: every type
        parameter bound (an untyped integer argument takes its parameter's bound type)."""
        if not proto.type_params:
            return self.globals
        unbound = [tp for tp in proto.type_params if tp not in bindings]
        if unbound:
            raise CompileError(e.loc, f"{name}: cannot infer type parameter {unbound[0]} "
                               f"(give it: {name}<...>(...))")
        return self._bound(bindings)

    def call_function(self, e: ir.Call, fn: ir.Name, f: FunctionEntity, scope: Scope) -> ir.Expr:
        proto = f.decl.proto
        bindings = {tp: self.resolve_type(ta, scope)
                    for tp, ta in zip(proto.type_params, e.type_args, strict=False)}
        args = self._args(e, proto.params, scope, bindings, f.name, proto.type_params)
        # a generic function is specialised per call (p4c's SpecializeGenericFunctions):
        # its type parameters bound from the type arguments, else from the arguments
        gscope = self._specialise(e, f.name, proto, bindings, args)
        ret = self.resolve_type(proto.ret, gscope) if proto.ret else ir.Void()
        fscope = Scope(gscope, "function")
        fscope.ret_type = ret  # type: ignore[attr-defined]
        params = self._params(proto.params, fscope, "function")
        if f.name in self.in_functions:
            raise CompileError(e.loc, f"{f.name}: recursive function calls are not allowed")
        self.in_functions.add(f.name)
        try:
            body = self.stmt(f.decl.body, fscope, "function")
        finally:
            self.in_functions.discard(f.name)
        assert isinstance(body, ir.Block)
        self.check_uninitialized(body, params)
        stmts = [x for x in body.stmts if not isinstance(x, ir.Empty)]
        if len(stmts) == 1 and isinstance(stmts[0], ir.Return) and stmts[0].value is not None \
                and not _runtime_indices(stmts[0].value) \
                and not any(isinstance(ir.unwrap(p.type), ir.TupleT) for p in params):
            # `return expr;`: substituted into the caller's expression by the back end.
            # A tuple parameter goes through a copy-in temporary (inlined below), which
            # SplitTuples splits; substituted, a tuple local or list stays a whole value.
            return ir.Call(fn, args, (), e.loc, ret, ("function", f.name, body, proto))
        if not isinstance(ret, ir.Void) and not _always_returns(body):
            raise CompileError(f.decl.loc, f"{f.name}: function does not return a value on "
                               "every path")
        # Anything else is inlined at the call site (as p4c's FunctionsInliner does).
        return ir.Call(fn, args, (), e.loc, ret, ("inline_function", f.name, body, proto,
                                                   params, _has_side_effects(body, params)))


def _is_aggregate_literal(e: ir.Expr) -> bool:
    return isinstance(e, (ir.ListExpr, ir.StructExpr, ir.InvalidHeader))


def with_defaults(args: tuple[ir.Arg, ...], params: tuple[Any, ...]) -> tuple[ir.Arg, ...]:
    """The call's arguments, plus the default values of the parameters it leaves out
    (P4_16 6.8.2: trailing ones when arguments are positional, any when named)."""
    if any(a.name for a in args):
        given = {a.name for a in args}
        return tuple(args) + tuple(ir.Arg(p.default, p.name, a_loc(args))
                                   for p in params if p.name not in given
                                   and getattr(p, "default", None) is not None)
    rest = params[len(args):]
    if rest and all(getattr(p, "default", None) is not None for p in rest):
        return tuple(args) + tuple(ir.Arg(p.default, None, a_loc(args)) for p in rest)
    return tuple(args)


def a_loc(args: tuple[ir.Arg, ...]) -> Location | None:
    return args[-1].loc if args else None


def _static_assert(e: ir.Call, args: tuple[ir.Arg, ...]) -> ir.BoolLit:
    """core.p4's `static_assert(check[, message])`: evaluated here, at compile time; a
    false check is an error at the call, with the program's message."""
    check = args[0].value
    if not isinstance(check, ir.BoolLit):
        raise CompileError(e.loc, "static_assert: the condition is not a compile-time "
                           "constant")
    if not check.value:
        msg = args[1].value if len(args) > 1 else None
        text = msg.value if isinstance(msg, ir.StrLit) else "the condition is false"
        raise CompileError(e.loc, f"static_assert failed: {text}")
    return ir.BoolLit(True, e.loc, ir.Bool())


def _in_apply_block(scope: Scope) -> bool:
    """Whether `scope` is (inside) a control's apply block, not an action or function."""
    s: Scope | None = scope
    while s is not None:
        if s.kind in ("apply", "action", "function"):
            return s.kind == "apply"
        s = s.parent
    return False
