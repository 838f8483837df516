"""bmv2 back end, references and expressions: IR lvalues to bmv2 field/header
references, IR expressions to bmv2 expression trees (primitive parameters,
conditions), p4c's shapes (masks for wrap-around, b2d/d2b, header equality)."""

from __future__ import annotations

from typing import Any

from . import ir
from .bmv2_common import (
    _Env,
    _substitute,
    _width,
    expr_param,
    hexstr,
    mask,
    tuple_struct,
)
from .errors import Location, Unsupported
from .typecheck import (
    ParamEntity,
    VarEntity,
)


class ExpressionConverter:
    """Mixin of Bmv2Backend: references and expressions."""

    # ------------------------------------------------------------ references

    def root_of(self, e: ir.Expr) -> Any:
        while isinstance(e, (ir.Member, ir.Index, ir.Slice)):
            e = e.expr
        return e.ref if isinstance(e, ir.Name) else None

    def param_role(self, p: ParamEntity) -> str:
        t = ir.unwrap(p.type)
        if isinstance(t, ir.StructLike):
            if t.name == "standard_metadata_t":
                return "standard_metadata"
            if self.p.headers_type is not None and t.name == self.p.headers_type.name:
                return "headers"
            if self.p.metadata_type is not None and t.name == self.p.metadata_type.name:
                return "metadata"
        return "other"

    def path(self, e: ir.Expr, env: _Env) -> tuple[str, Any]:
        """Where an lvalue-like expression lives.

        Returns ("header", name), ("field", [header, field]), ("stack", name),
        ("union", name), ("scalar_struct", prefix), ("param", binding) or
        ("expr", json) for stack elements with a run-time index.
        """
        if isinstance(e, ir.Name):
            return self._name_path(e, env)
        if isinstance(e, ir.Member):
            return self._member_path(e, env)
        if isinstance(e, ir.Index):
            return self._index_path(e, env)
        raise Unsupported(getattr(e, "loc", None), "expected a field or header reference")

    def _name_path(self, e: ir.Name, env: _Env) -> tuple[str, Any]:
        ref = e.ref
        if isinstance(ref, ParamEntity):
            if ref.owner in ("action", "function"):
                b = env.get(ref)
                if b is None:
                    raise Unsupported(e.loc, f"{ref.name}: parameter is not bound here")
                if b[0] == "expr":
                    return self.path(b[1], b[2])
                return ("param", b)
            role = self.param_role(ref)
            if role == "standard_metadata":
                return ("header", "standard_metadata")
            if role == "headers":
                return ("struct", "")
            if role == "metadata":
                return ("scalar_struct", "userMetadata")
            raise Unsupported(e.loc, f"{ref.name}: parameter of type {ref.type} cannot be "
                              "accessed on bmv2")
        if isinstance(ref, VarEntity):
            return _scalar_place(ir.unwrap(ref.type), ref.unique, "layout_local")
        raise Unsupported(e.loc, f"{e.name} cannot be used as a value here")

    def _member_path(self, e: ir.Member, env: _Env) -> tuple[str, Any]:
        kind, base = self.path(e.expr, env)
        t = ir.unwrap(e.type)  # type: ignore[arg-type]
        if kind == "struct":
            name = f"{base}.{e.member}" if base else e.member
            if isinstance(t, ir.Stack):
                return ("stack", name)
            if isinstance(t, ir.StructLike) and t.kind == "header_union":
                return ("union", name)
            if isinstance(t, ir.StructLike) and t.kind == "header":
                return ("header", name)
            return ("struct", name)
        if kind == "scalar_struct":
            return _scalar_place(t, f"{base}.{e.member}", "layout_struct")
        if kind in ("header", "header_struct"):
            hdr, prefix = (base, "") if kind == "header" else base
            name = f"{prefix}_{e.member}" if prefix else e.member
            if isinstance(t, ir.StructLike):
                return ("header_struct", (hdr, name))
            return ("field", [hdr, name])
        if kind == "union":
            return ("header", f"{base}.{e.member}")
        found = self._stack_member_path(e, kind, base)
        if found is not None:
            return found
        raise Unsupported(e.loc, f"cannot access .{e.member} here")

    def _stack_member_path(self, e: ir.Member, kind: str, base: Any) -> tuple[str, Any] | None:
        """`.next`, `.last` of a stack (of headers or of unions) and the members of what
        they name; `s[i].f` with a run-time index read in a parser."""
        bt = ir.unwrap(e.expr.type)  # type: ignore[arg-type]
        in_parser = self.block is not None and self.block.kind == "parser"
        if kind == "stack" and isinstance(bt, ir.Stack):
            if _is_union(bt.elem) and e.member == "next":
                return ("union_stack_next", base)
            if _is_union(bt.elem) and e.member == "last":
                if self.block is not None and not in_parser:
                    raise Unsupported(e.loc, "stacks of header unions: .last is only "
                                      "available in a parser")
                return ("union_stack_last", base)
            if e.member == "last":
                return ("stack_last", base)
            if e.member == "next":
                return ("stack_next", base)
        if kind == "union_stack_next":   # `u.next.a`: extract's "union_stack" target
            return ("union_stack_member", [base, e.member])
        if kind == "stack_last":
            return ("stack_field", [base, e.member])
        if kind == "union_stack_last":
            return ("union_stack_last_member", [base, e.member])
        if kind == "union_stack_last_member":   # `u.last.a.f`
            return ("union_stack_field", [*base, e.member])
        if kind == "stack_next" and in_parser:
            return ("stack_next_field", [base, e.member])   # `s.next.f` read in a parser
        if kind == "stack_expr" and in_parser and isinstance(bt, ir.StructLike):
            # `s[i].f` read in a parser (a select key, a `set`): p4c's access_field on
            # dereference_header_stack (apply blocks branch on the index instead).
            return ("stack_expr_field", (*base, [f.name for f in bt.fields].index(e.member)))
        if kind == "stack_expr":
            raise Unsupported(e.loc, "fields of header stack elements with a run-time "
                              "index are not supported")
        return None

    def _index_path(self, e: ir.Index, env: _Env) -> tuple[str, Any]:
        kind, base = self.path(e.expr, env)
        tt = ir.unwrap(e.expr.type)  # type: ignore[arg-type]
        if isinstance(tt, ir.TupleT) and isinstance(e.index, ir.Lit):
            # an element of a tuple-typed struct field: the field `f<i>` it is laid out as
            f = tuple_struct(tt).fields[e.index.value]
            return self._member_path(ir.Member(e.expr, f.name, e.loc, f.type), env)
        if kind != "stack":
            raise Unsupported(e.loc, "only header stacks can be indexed")
        st = ir.unwrap(e.expr.type)  # type: ignore[arg-type]
        if isinstance(st, ir.Stack) and _is_union(st.elem):
            if not isinstance(e.index, ir.Lit):
                raise Unsupported(e.loc, "stacks of header unions: only constant indices "
                                  "are supported")
            return ("union", f"{base}[{e.index.value}]")
        if isinstance(e.index, ir.Lit):
            return ("header", f"{base}[{e.index.value}]")
        return ("stack_expr", (base, e.index))

    def header_name(self, e: ir.Expr, env: _Env) -> str:
        kind, v = self.path(e, env)
        if kind != "header":
            raise Unsupported(e.loc, "expected a header")  # type: ignore[attr-defined]
        return v

    # ------------------------------------------------------------ expressions

    def is_bool(self, e: ir.Expr) -> bool:
        return isinstance(e.type, ir.Bool)

    @staticmethod
    def through_params(e: ir.Expr, env: _Env) -> tuple[ir.Expr, _Env]:
        """Follow action parameters bound to the caller's argument expressions."""
        while isinstance(e, ir.Name) and isinstance(e.ref, ParamEntity):
            b = env.get(e.ref)
            if b is None or b[0] != "expr":
                break
            e, env = b[1], b[2]
        return e, env

    def leaf(self, e: ir.Expr, env: _Env, top: bool) -> dict[str, Any] | None:
        """A non-expression operand, or None if `e` needs an expression tree."""
        e, env = self.through_params(e, env)
        if isinstance(e, ir.Lit):
            return {"type": "hexstr", "value": hexstr(e.value, _width(e.type)
                                                      if not isinstance(e.type, ir.InfInt)
                                                      else None)}
        if isinstance(e, ir.BoolLit):
            return {"type": "bool", "value": e.value}
        if isinstance(e, ir.ErrorMember):
            return {"type": "hexstr", "value": hexstr(self.errors[e.name], 32)}
        if isinstance(e, ir.Member) and isinstance(e.expr, ir.TypeName):
            t = e.type
            if isinstance(t, ir.MatchKindT):
                # bmv2 has no value for a match kind: p4c-bm2-ss's ExpressionConverter
                # has none either (match_kind comparisons are not folded)
                raise Unsupported(e.loc, f"{e.member}: could not convert expression to Json")
            assert isinstance(t, ir.Enum)
            idx = t.members.index(e.member)
            v = t.values[idx] if t.underlying is not None else idx
            return {"type": "hexstr", "value": hexstr(v, _width(t))}
        if isinstance(e, (ir.Name, ir.Member, ir.Index)):
            if isinstance(e, ir.Member) and isinstance(ir.unwrap(e.expr.type), ir.Stack) \
                    and e.member in ("size", "lastIndex"):
                return None
            kind, v = self.path(e, env)
            if kind == "field":
                return {"type": "field", "value": v}
            if kind == "stack_field":
                return {"type": "stack_field", "value": v}
            if kind == "stack_next_field":
                stack = self.stack_element(v[0], "next")
                fields = ir.unwrap(e.expr.type).fields  # type: ignore[union-attr]
                index = [f.name for f in fields].index(v[1])
                return {"type": "expression", "value": {
                    "op": "access_field", "left": stack, "right": index}}
            if kind == "stack_expr_field":
                stack, index, field = v
                ref = {"type": "header_stack", "value": stack}
                elem = {"type": "expression", "value": {
                    "op": "dereference_header_stack", "left": ref,
                    "right": self.tree(index, env)}}
                return {"type": "expression", "value": {
                    "op": "access_field", "left": elem, "right": field}}
            if kind == "union_stack_field":
                return self.union_stack_field(e, v)
            if kind == "param":
                b = v
                if b[0] == "runtime":
                    return {"type": "runtime_data" if top else "local", "value": b[1]}
                if b[0] == "json":
                    return b[1]
            if kind == "header":
                return {"type": "header", "value": v}
            if kind == "stack":
                return {"type": "header_stack", "value": v}
            return None
        return None

    @staticmethod
    def stack_element(stack: str, which: str) -> dict[str, Any]:
        """A header stack's `.last` or `.next` element as a header-valued expression node:
        the element at `last_stack_index` (plus one for `.next`), as p4c writes it."""
        ref = {"type": "header_stack", "value": stack}
        index: dict[str, Any] = {"type": "expression", "value": {
            "op": "last_stack_index", "left": None, "right": ref}}
        if which == "next":
            index = {"type": "expression", "value": {
                "op": "+", "left": index, "right": {"type": "hexstr", "value": "0x00000001"}}}
        return {"type": "expression", "value": {
            "op": "dereference_header_stack", "left": ref, "right": index}}

    @staticmethod
    def union_stack_field(e: ir.Expr, v: list[str]) -> dict[str, Any]:
        """`u.last.a.f` as an operand: bmv2 reads a `union_stack_field` only as a select
        key (and crashes on `access_union_header` in a parser `set`); elsewhere it is a
        `?:` chain on `last_stack_index` over the elements' fields `u[i].a.f`."""
        st = ir.unwrap(e.expr.expr.expr.type)  # type: ignore[attr-defined]
        assert isinstance(st, ir.Stack)
        stack, member, field = v

        def ex(op: str, left: Any, right: Any) -> dict[str, Any]:
            return {"type": "expression", "value": {"op": op, "left": left, "right": right}}
        last = ex("last_stack_index", None, {"type": "header_union_stack", "value": stack})
        out: dict[str, Any] = {"type": "field", "value": [f"{stack}[{st.size - 1}].{member}",
                                                          field]}
        for i in range(st.size - 2, -1, -1):
            cond = ex("==", last, {"type": "hexstr", "value": hexstr(i, 32)})
            out = {"type": "expression", "value": {
                "op": "?", "left": {"type": "field", "value": [f"{stack}[{i}].{member}", field]},
                "right": out, "cond": cond}}
        return out

    def operand(self, e: ir.Expr, env: _Env) -> dict[str, Any]:
        """An expression operand in data (non-boolean) context, as a primitive parameter."""
        e, env = self.through_params(e, env)
        leaf = self.leaf(e, env, True)
        if leaf is not None and leaf["type"] == "expression":  # an operand node, nested
            return expr_param(leaf["value"])
        if leaf is not None and leaf["type"] != "bool":
            return leaf
        return expr_param(self.data_expr(e, env))

    def data_expr(self, e: ir.Expr, env: _Env) -> dict[str, Any]:
        """An expression tree producing data (bools converted with b2d)."""
        if self.is_bool(e):
            return {"op": "b2d", "left": None, "right": self.bool_tree(e, env)}
        return self.unwrap_tree(self.tree(e, env), _width(e.type))

    @staticmethod
    def unwrap_tree(t: dict[str, Any], width: int = 32) -> dict[str, Any]:
        """The `value` of an {"type": "expression"}; a bare operand is masked to its width
        so that it still reads as an expression node."""
        if t.get("type") == "expression":
            return t["value"]
        return {"op": "&", "left": t, "right": {"type": "hexstr",
                                                "value": hexstr(mask(width), width)}}

    def cond_expr(self, e: ir.Expr, env: _Env) -> dict[str, Any]:
        """A boolean condition, wrapped as a top-level {"type": "expression"}."""
        t = self.bool_tree(e, env)
        if t.get("type") == "field":
            return {"type": "expression", "value": {"op": "d2b", "left": None, "right": t}}
        # Any other node as it is ({"type": "bool"} for a constant): bmv2 reads an
        # "expression" node's value as an operator, and crashed on a node there.
        return t

    def bool_tree(self, e: ir.Expr, env: _Env) -> dict[str, Any]:
        """Boolean-valued tree node (d2b applied to 1-bit data)."""
        t = self.tree(e, env)
        if t.get("type") == "field":
            return {"type": "expression", "value": {"op": "d2b", "left": None, "right": t}}
        return t

    def wrap_arith(self, node: dict[str, Any], t: ir.Type | None) -> dict[str, Any]:
        ut = ir.unwrap(t) if t is not None else None
        if isinstance(ut, ir.Bits):
            if ut.signed:
                return {"type": "expression", "value": {
                    "op": "two_comp_mod", "left": node,
                    "right": {"type": "hexstr", "value": hexstr(ut.bits)}}}
            return {"type": "expression", "value": {
                "op": "&", "left": node,
                "right": {"type": "hexstr", "value": hexstr(mask(ut.bits), ut.bits)}}}
        return node

    def tree(self, e: ir.Expr, env: _Env) -> dict[str, Any]:
        """Any expression as a node inside a bmv2 expression tree."""
        e, env = self.through_params(e, env)
        leaf = self.leaf(e, env, False)
        if leaf is not None:
            # a bool field or action parameter (bmv2 passes those as 1-bit data) is
            # read as a bool with d2b, as p4c does
            if leaf["type"] in ("field", "local") and self.is_bool(e):
                return _ex("d2b", None, leaf)
            return leaf
        convert = _TREES.get(type(e))
        node = convert(self, e, env) if convert is not None else None
        if node is None and isinstance(e, ir.Member) \
                and isinstance(ir.unwrap(e.expr.type), ir.Stack):
            node = self._stack_member_tree(e, env)
        if node is None:
            raise Unsupported(getattr(e, "loc", None), f"expression {type(e).__name__} is "
                              "not supported on bmv2")
        return node

    def _unary_tree(self, e: ir.Unary, env: _Env) -> dict[str, Any] | None:
        if e.op == "!":
            return _ex("not", None, self.bool_tree(e.expr, env))
        if e.op == "~":
            return self.wrap_arith(_ex("~", None, self.tree(e.expr, env)), e.type)
        if e.op == "-":
            zero = {"type": "hexstr", "value": hexstr(0, _width(e.type))}
            return self.wrap_arith(_ex("-", zero, self.tree(e.expr, env)), e.type)
        return None

    def _binary_tree(self, e: ir.Binary, env: _Env) -> dict[str, Any] | None:
        op, X = e.op, self.tree
        if op in ("&&", "||"):
            return _ex("and" if op == "&&" else "or", self.bool_tree(e.left, env),
                       self.bool_tree(e.right, env))
        if op in ("==", "!=") and isinstance(ir.unwrap(e.left.type), (ir.StructLike,
                                                                      ir.Stack)):
            eq = self.aggregate_eq(e.left, e.right, env, e.loc)
            return eq if op == "==" else _ex("not", None, eq)
        if op in ("==", "!=") and self.is_bool(e.left):
            return _ex(op, self.bool_tree(e.left, env), self.bool_tree(e.right, env))
        if op in ("==", "!=", "<", ">", "<=", ">=", "&", "|", "^", ">>", "/", "%"):
            return _ex(op, X(e.left, env), X(e.right, env))
        if op == "-" and isinstance(e.right, ir.Lit) and isinstance(e.type, ir.Bits) \
                and not e.type.signed:
            # p4c rewrites `a - c` as `a + (2^W - c)` before masking.
            neg = (-e.right.value) & mask(e.type.bits)
            return self.wrap_arith(_ex("+", X(e.left, env),
                                       {"type": "hexstr",
                                        "value": hexstr(neg, e.type.bits)}), e.type)
        if op in ("+", "-", "*", "<<"):
            return self.wrap_arith(_ex(op, X(e.left, env), X(e.right, env)), e.type)
        if op in ("|+|", "|-|"):
            t = ir.unwrap(e.type)  # type: ignore[arg-type]
            assert isinstance(t, ir.Bits)
            inner = _ex("+" if op == "|+|" else "-", X(e.left, env), X(e.right, env))
            return _ex("sat_cast" if t.signed else "usat_cast", inner,
                       {"type": "hexstr", "value": hexstr(t.bits)})
        if op == "++":
            return self._concat_tree(e, env)
        return None

    def _concat_tree(self, e: ir.Binary, env: _Env) -> dict[str, Any]:
        rw = _width(e.right.type)
        shifted = _ex("<<", self.tree(e.left, env), {"type": "hexstr", "value": hexstr(rw)})
        right = self.tree(e.right, env)
        rt = ir.unwrap(e.right.type)  # type: ignore[arg-type]
        if isinstance(rt, ir.Bits) and rt.signed:
            # bmv2 holds a signed field's value as a negative number: only its own bits
            # go into the concatenation
            right = _ex("&", right, {"type": "hexstr", "value": hexstr(mask(rw), rw)})
        return self.wrap_arith(_ex("|", shifted, right), e.type)

    def _cast_tree(self, e: ir.Cast, env: _Env) -> dict[str, Any]:
        src = ir.unwrap(e.expr.type)  # type: ignore[arg-type]
        dst = ir.unwrap(e.type)  # type: ignore[arg-type]
        if isinstance(dst, ir.Bool):
            return _ex("d2b", None, self.tree(e.expr, env))
        if isinstance(src, ir.Bool):
            return _ex("b2d", None, self.bool_tree(e.expr, env))
        if isinstance(dst, ir.Bits):
            inner = self.tree(e.expr, env)
            # by the destination's signedness, as p4c's ArithmeticFixup: an int<W> read
            # as bit<W> is masked (bmv2 holds it negative), not kept signed
            if dst.signed:
                return _ex("two_comp_mod", inner, {"type": "hexstr", "value": hexstr(dst.bits)})
            return _ex("&", inner, {"type": "hexstr", "value": hexstr(mask(dst.bits),
                                                                      dst.bits)})
        return self.tree(e.expr, env)

    def _slice_tree(self, e: ir.Slice, env: _Env) -> dict[str, Any]:
        lo = e.lo.value  # type: ignore[attr-defined]
        w = _width(e.type)
        inner = self.tree(e.expr, env)
        if lo:
            inner = _ex(">>", inner, {"type": "hexstr", "value": hexstr(lo)})
        return _ex("&", inner, {"type": "hexstr", "value": hexstr(mask(w), w)})

    def _mux_tree(self, e: ir.Mux, env: _Env) -> dict[str, Any]:
        return {"type": "expression", "value": {
            "op": "?", "left": self.tree(e.then, env), "right": self.tree(e.other, env),
            "cond": self.bool_tree(e.cond, env)}}

    def _call_tree(self, e: ir.Call, env: _Env) -> dict[str, Any]:
        tgt = e.target
        if tgt and tgt[0] == "builtin" and tgt[1] == "isValid":
            callee = e.callee
            assert isinstance(callee, ir.Member)
            kind, v = self.path(callee.expr, env)
            if kind == "union":
                return _ex("valid_union", None, {"type": "header_union", "value": v})
            if kind != "header":
                raise Unsupported(e.loc, "isValid() of this expression is not supported")
            return _ex("d2b", None, {"type": "field", "value": [v, "$valid$"]})
        if tgt and tgt[0] == "function":
            return self.tree(self.inline_function(e, env), env)
        if tgt and tgt[0] == "method" and len(tgt) > 2 and tgt[1] == "packet_in":
            # p4c's bmv2 back end converts only lookahead among packet_in's methods
            raise Unsupported(e.loc, f"packet_in.{tgt[2]}() is not supported on bmv2 "
                              "(simple_switch has no primitive for it)")
        raise Unsupported(e.loc, "this call cannot be used inside an expression on bmv2; "
                          "assign its result to a variable first")

    def _stack_member_tree(self, e: ir.Member, env: _Env) -> dict[str, Any] | None:
        """A stack's size or lastIndex."""
        kind, v = self.path(e.expr, env)
        st = ir.unwrap(e.expr.type)
        assert isinstance(st, ir.Stack)
        if e.member == "size":
            return {"type": "hexstr", "value": hexstr(st.size, 32)}
        if e.member == "lastIndex":
            stack = "header_union_stack" if _is_union(st.elem) else "header_stack"
            return _ex("-", _ex("last_stack_index", None, {"type": stack, "value": v}),
                       {"type": "hexstr", "value": "0x0"})
        return None

    def aggregate_eq(self, left: ir.Expr, right: ir.Expr, env: _Env, loc: Location
                     ) -> dict[str, Any]:
        """P4 equality of two headers, unions or stacks as a boolean tree bmv2 evaluates:
        bmv2's own header `==` holds only when both are valid, so two invalid headers
        are equal by their valid bits; stacks element by element; unions when the same
        member is valid and equal, or none is."""
        def ex(op: str, a: Any, b: Any) -> dict[str, Any]:
            return {"type": "expression", "value": {"op": op, "left": a, "right": b}}

        def invalid(h: str) -> dict[str, Any]:
            return ex("not", None, ex("d2b", None, {"type": "field", "value": [h, "$valid$"]}))

        def header_eq(a: str, b: str) -> dict[str, Any]:
            return ex("or", ex("==", {"type": "header", "value": a},
                               {"type": "header", "value": b}),
                      ex("and", invalid(a), invalid(b)))

        def all_of(nodes: list[dict[str, Any]]) -> dict[str, Any]:
            out = nodes[0]
            for n in nodes[1:]:
                out = ex("and", out, n)
            return out

        t = ir.unwrap(left.type)  # type: ignore[arg-type]
        if isinstance(t, ir.StructLike) and t.kind == "struct":
            # p4c compares structs field by field (headers in them as headers).
            return all_of([self.tree(ir.Binary("==", _component(left, f, loc),
                                               _component(right, f, loc), loc, ir.Bool()),
                                     env) for f in t.fields] or [{"type": "bool",
                                                                   "value": True}])
        if isinstance(t, ir.StructLike) and t.kind == "header" and \
                isinstance(right, ir.InvalidHeader) != isinstance(left, ir.InvalidHeader):
            h = left if isinstance(right, ir.InvalidHeader) else right   # `h == {#}`
            return invalid(self.path(h, env)[1])
        if isinstance(t, ir.StructLike) and t.kind == "header" and \
                isinstance(right, ir.StructExpr) != isinstance(left, ir.StructExpr):
            # a header literal `{1, 2}` is valid: equal to a valid header with its fields
            h, lit = (right, left) if isinstance(left, ir.StructExpr) else (left, right)
            kind, name = self.path(h, env)
            valid = ex("d2b", None, {"type": "field", "value": [name, "$valid$"]})
            return all_of([valid] + [self.tree(ir.Binary(
                "==", _component(h, f, loc), _component(lit, f, loc), loc, ir.Bool()), env)
                for f in t.fields])
        (ka, a), (kb, b) = self.path(left, env), self.path(right, env)
        if ka == kb == "header":
            return header_eq(a, b)
        if ka == kb == "stack" and isinstance(t, ir.Stack):
            return all_of([header_eq(f"{a}[{i}]", f"{b}[{i}]") for i in range(t.size)])
        if ka == kb == "union" and isinstance(t, ir.StructLike) and t.fields:
            members = [f.name for f in t.fields]
            same = [ex("==", {"type": "header", "value": f"{a}.{m}"},
                       {"type": "header", "value": f"{b}.{m}"}) for m in members]
            none = all_of([invalid(f"{x}.{m}") for x in (a, b) for m in members])
            out = none
            for n in same:
                out = ex("or", n, out)
            return out
        raise Unsupported(loc, "comparing these values is not supported on bmv2 (only "
                          "headers, header unions, header stacks and structs)")

    def inline_function(self, call: ir.Call, env: _Env) -> ir.Expr:
        _, name, body, proto = call.target
        stmts = [s for s in body.stmts if not isinstance(s, ir.Empty)]
        if len(stmts) != 1 or not isinstance(stmts[0], ir.Return) or stmts[0].value is None:
            raise Unsupported(call.loc, f"{name}: only functions whose body is a single "
                              "`return expression;` are supported")
        subst = {p.name: a.value for p, a in zip(proto.params, call.args, strict=True)}
        return _substitute(stmts[0].value, subst)


def _scalar_place(t: ir.Type, name: str, layout: str) -> tuple[str, Any]:
    """Where a local or a metadata struct member of type `t` named `name` lives: a
    header, a struct of scalars, a stack, a varbit laid out as a header (Bmv2Json's
    `layout`), else a field of `scalars`."""
    if isinstance(t, ir.StructLike) and t.kind == "header":
        return ("header", name)
    if isinstance(t, (ir.StructLike, ir.TupleT)):
        return ("scalar_struct", name)
    if isinstance(t, ir.Stack):
        return ("stack", name)
    if isinstance(t, ir.Varbit):
        return ("field", [name, "field"])
    return ("field", ["scalars", name])


def _ex(op: str, left: Any, right: Any) -> dict[str, Any]:
    """A bmv2 expression node."""
    return {"type": "expression", "value": {"op": op, "left": left, "right": right}}


# expression class -> the ExpressionConverter method giving its tree (None: not this form)
_TREES = {
    ir.Unary: ExpressionConverter._unary_tree, ir.Binary: ExpressionConverter._binary_tree,
    ir.Cast: ExpressionConverter._cast_tree, ir.Slice: ExpressionConverter._slice_tree,
    ir.Mux: ExpressionConverter._mux_tree, ir.Call: ExpressionConverter._call_tree,
}


def _is_union(t: ir.Type) -> bool:
    u = ir.unwrap(t)
    return isinstance(u, ir.StructLike) and u.kind == "header_union"


def _component(e: ir.Expr, f: ir.StructField, loc: Location) -> ir.Expr:
    """Field `f` of a struct-typed expression: the literal's own component, or a member."""
    if isinstance(e, ir.StructExpr):
        return dict(e.fields)[f.name]
    if isinstance(e, ir.ListExpr):
        names = [x.name for x in ir.unwrap(e.type).fields]  # type: ignore[union-attr]
        return e.items[names.index(f.name)]
    return ir.Member(e, f.name, loc, f.type)
