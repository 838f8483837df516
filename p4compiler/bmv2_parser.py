"""bmv2 back end, parsers: parser states, their operations (extract, set, verify,
primitives) and transitions (select keys, value sets, masks)."""

from __future__ import annotations

import dataclasses
from typing import Any

from . import ir
from .bmv2_common import (
    _const,
    _Env,
    _lookahead_slice,
    _range_to_masks,
    _source_info,
    _split_parser_ifs,
    _width,
    expr_param,
    hexstr,
    mask,
)
from .errors import CompileError, Location, Unsupported
from .typecheck import (
    TypedBlock,
    ValueSetEntity,
    VarEntity,
)


class ParserConverter:
    """Mixin of Bmv2Backend: the parser."""

    # ------------------------------------------------------------ parser

    def convert_parser(self, b: TypedBlock) -> dict[str, Any]:
        self.block = b
        states = []
        for i, s in enumerate(_split_parser_ifs(b.states)):
            ops: list[dict[str, Any]] = []
            for st in s.stmts:
                self.parser_stmt(st, ops)
            key, transitions = self.parser_transition(s, ops)
            states.append({"name": s.name, "id": i, "parser_ops": ops,
                           "transitions": transitions, "transition_key": key,
                           **({"source_info": si} if (si := _source_info(s.loc, s.name)) else {})})
        for vs in b.value_sets:
            self.parse_vsets.append({"name": vs.qualified, "id": len(self.parse_vsets),
                                     "compressed_bitwidth": _width(vs.type)})
        self.block = None
        return {"name": "parser", "id": 0, "init_state": "start", "parse_states": states}

    def assign_stack_next_field(self, s: ir.Assign, env: _Env,
                                ops: list[dict[str, Any]]) -> None:
        """`s.next.f = v;`, also the copy-out of an inout argument `s.next.f` to a
        function or sub-parser: bmv2's parser `set` writes a named field only, so an
        `assign` primitive writes the field of the element expression `.next` reads
        (`last_stack_index` + 1); a lookahead source is read into a temporary first."""
        look = _lookahead_slice(s.rhs)
        if look is not None:
            tmp = self.temp(s.lhs.type)
            ops.append({"op": "set", "parameters": [{"type": "field", "value": tmp},
                                                    {"type": "lookahead", "value": list(look)}]})
            src: dict[str, Any] = {"type": "field", "value": tmp}
        else:
            src = self.operand(s.rhs, env)
        ops.append({"op": "primitive", "parameters": [
            self.prim("assign", [self.operand(s.lhs, env), src], s.loc)]})

    def lookahead_aggregate(self, s: ir.Assign, env: _Env, ops: list[dict[str, Any]]) -> None:
        """`x = pkt.lookahead<T>()` of a header, struct or stack: field by field, in the
        order T lays them out in the packet, each a `set` from its lookahead slice; every
        header in it becomes valid (what p4c's backend emits)."""
        self.lookahead_into(s.lhs, s.rhs.type, 0, s.loc, env, ops)  # type: ignore[arg-type]

    def lookahead_into(self, lhs: ir.Expr, t: ir.Type, offset: int, loc: Any, env: _Env,
                       ops: list[dict[str, Any]]) -> int:
        """The `set`s filling `lhs` (of type `t`) from the lookahead bits at `offset`;
        returns the offset after it."""
        t = ir.unwrap(t)
        if isinstance(t, (ir.Bits, ir.Bool)):
            ops.append({"op": "set", "parameters": [
                self.lvalue_param(lhs, env), {"type": "lookahead", "value": [offset, _width(t)]}]})
            return offset + _width(t)
        if isinstance(t, ir.Stack):
            for i in range(t.size):
                elem = ir.Index(lhs, ir.Lit(i, loc, ir.Bits(32)), loc, t.elem)
                offset = self.lookahead_into(elem, t.elem, offset, loc, env, ops)
            return offset
        if not isinstance(t, ir.StructLike) or t.kind == "header_union":
            raise Unsupported(loc, f"lookahead of {t}: header unions and varbits cannot be "
                              "looked ahead on bmv2")
        if t.kind == "header":
            ops.append({"op": "primitive", "parameters": [self.prim(
                "add_header", [{"type": "header", "value": self.header_name(lhs, env)}],
                loc)]})
        for f in t.fields:
            offset = self.lookahead_into(ir.Member(lhs, f.name, loc, f.type), f.type, offset,
                                         loc, env, ops)
        return offset

    def parser_stmt(self, s: ir.Stmt, ops: list[dict[str, Any]]) -> None:
        if isinstance(s, ir.Block):
            for x in s.stmts:
                self.parser_stmt(x, ops)
            return
        if isinstance(s, (ir.Empty,)):
            return
        if isinstance(s, ir.VarDecl):
            if s.init is not None:
                ref = VarEntity(s.name, s.type, s.name)  # type: ignore[arg-type]
                lhs = ir.Name(s.name, s.loc, s.type, ref)
                self.parser_stmt(ir.Assign(lhs, s.init, s.loc), ops)
            return
        if isinstance(s, ir.Assign):
            self.parser_assign(s, _Env(), ops)
            return
        if isinstance(s, ir.CallStmt):
            self.parser_call(s.call, _Env(), ops)
            return
        raise Unsupported(getattr(s, "loc", None), f"{type(s).__name__} statements in parser "
                          "states are not supported on bmv2")

    def parser_assign(self, s: ir.Assign, env: _Env, ops: list[dict[str, Any]]) -> None:
        """An assignment in a parser state: a `set` where bmv2's parser can do it, else
        primitives (aggregates, lookahead of a header, slices of `s.next.f`)."""
        if isinstance(s.lhs, ir.Member) and self.path(s.lhs, env)[0] == "stack_next_field":
            self.assign_stack_next_field(s, env, ops)
            return
        rhs = s.rhs
        look = _lookahead_slice(rhs)
        if look is not None and not isinstance(ir.unwrap(rhs.type), ir.StructLike):
            ops.append({"op": "set", "parameters": [
                self.lvalue_param(s.lhs, env),
                {"type": "lookahead", "value": list(look)}]})
            return
        if look is not None and isinstance(rhs, ir.Call):
            self.lookahead_aggregate(s, env, ops)
            return
        prims: list[dict[str, Any]] = []
        if isinstance(ir.unwrap(s.lhs.type),  # type: ignore[arg-type]
                      (ir.StructLike, ir.Stack, ir.Varbit)):  # varbit: assign_VL (p4c)
            self.assign(s, env, prims)
            ops.extend({"op": "primitive", "parameters": [p]} for p in prims)
            return
        if isinstance(s.lhs, ir.Slice) and isinstance(s.lhs.expr, ir.Member) and \
                self.path(s.lhs.expr, env)[0] == "stack_next_field":
            # `s.next.f[3:0] = v;`: `set` writes named fields only, so an `assign`
            # primitive of the whole field, as for `s.next.f = v;`
            self.assign_slice(s.lhs, rhs, env, prims, s.loc,
                              dest=self.operand(s.lhs.expr, env))
            ops.extend({"op": "primitive", "parameters": [p]} for p in prims)
            return
        if isinstance(s.lhs, ir.Slice):
            # `x[15:8] = v;`: a set of the whole field from its other bits and v
            self.assign_slice(s.lhs, rhs, env, prims, s.loc)
            ops.extend({"op": "set", "parameters": p["parameters"]} for p in prims)
            return
        src = self.operand(rhs, env)
        if src["type"] not in ("field", "hexstr", "lookahead", "expression"):
            # bmv2's parser `set` reads only these sources; others go through an
            # expression node (e.g. a stack's `.last` field).
            src = {"type": "expression", "value": src}
        ops.append({"op": "set", "parameters": [self.lvalue_param(s.lhs, env), src]})

    def parser_call(self, call: ir.Call, env: _Env, ops: list[dict[str, Any]]) -> None:
        """A call statement in a parser state: packet_in's extract, advance and
        lookahead, verify, else the call's primitives."""
        tgt = call.target
        if tgt[0] == "method" and tgt[1] == "packet_in" and \
                tgt[2] in ("extract", "advance", "lookahead"):
            self.packet_in_call(call, env, ops)
            return
        if tgt[0] == "extern_function" and tgt[1] == "verify":
            cond, err = (a.value for a in call.args)
            ops.append({"op": "verify", "parameters": [
                self.cond_expr(cond, env), self.operand(err, env)]})  # type: ignore[arg-type]
            return
        prims: list[dict[str, Any]] = []
        self.call_primitive(call, env, prims)
        ops.extend({"op": "primitive", "parameters": [p]} for p in prims)

    def packet_in_call(self, call: ir.Call, env: _Env, ops: list[dict[str, Any]]) -> None:
        m = call.target[2]
        if m == "extract":
            arg = call.args[0].value
            assert arg is not None
            kind, v = self.path(arg, env)
            if kind == "stack_next":
                p = {"type": "stack", "value": v}
            elif kind == "header":
                p = {"type": "regular", "value": v}
            elif kind == "union_stack_member":
                p = {"type": "union_stack", "value": v}
            else:
                raise Unsupported(call.loc, "extract needs a header or stack.next")
            _check_varbit_extract(call, arg)
            if len(call.args) == 2:
                ln = call.args[1].value
                assert ln is not None
                ops.append({"op": "extract_VL", "parameters": [
                    p, expr_param(self.data_expr(ln, env))]})
            else:
                ops.append({"op": "extract", "parameters": [p]})
        elif m == "advance":
            n = call.args[0].value
            assert n is not None
            ops.append({"op": "advance", "parameters": [self.operand(n, env)]})
        else:
            # lookahead whose value is dropped: bmv2 still peeks, so a packet too short
            # for T fails with PacketTooShort, as with p4c's temporary.
            w = _width(call.type)
            if w:
                ops.append({"op": "set", "parameters": [
                    {"type": "field", "value": self.temp(ir.Bits(w), "lookahead")},
                    {"type": "lookahead", "value": [0, w]}]})

    def parser_transition(self, s: ir.ParserState, ops: list[dict[str, Any]]
                          ) -> tuple[list[Any], list[dict[str, Any]]]:
        t = s.transition
        env = _Env()

        def nxt(name: str) -> str | None:
            if name == "accept":
                return None
            if name == "reject":
                return self.reject_state_name()
            return name

        if t is None:
            return [], [{"type": "default", "value": None, "mask": None, "next_state": None}]
        if t.state is not None:
            return [], [{"type": "default", "value": None, "mask": None,
                         "next_state": nxt(t.state)}]
        t = _flatten_select(t)
        key: list[Any] = []
        widths: list[int] = []
        for k in t.select:
            widths.append(_width(k.type))
            look = _lookahead_slice(k)
            if look is not None:
                key.append({"type": "lookahead", "value": list(look)})
                continue
            usf = self.union_stack_key(k, env)
            if usf is not None:
                key.append(usf)
                continue
            leaf = self.leaf(k, env, True)
            if leaf is not None and leaf["type"] in ("field", "stack_field"):
                key.append(leaf)
                continue
            tmp = self.temp(k.type if not isinstance(k.type, ir.Bool) else ir.Bits(1))
            ops.append({"op": "set", "parameters": [{"type": "field", "value": tmp},
                                                    self.operand(k, env)]})
            key.append({"type": "field", "value": tmp})
        transitions = []
        for c in t.cases:
            if all(isinstance(k, ir.DefaultKey) for k in c.keys):
                transitions.append({"type": "default", "value": None, "mask": None,
                                    "next_state": nxt(c.state)})
                break
            vs = [k for k in c.keys if isinstance(k, ir.Name) and isinstance(k.ref,
                                                                            ValueSetEntity)]
            if vs:
                if len(c.keys) != 1:
                    raise Unsupported(c.loc, "value sets in a select with several keys are "
                                      "not supported")
                transitions.append({"type": "parse_vset", "value": vs[0].ref.qualified,
                                    "mask": None, "next_state": nxt(c.state)})
                continue
            for value, msk in self.expand_keyset(c.keys, widths, c.loc):
                transitions.append({"type": "hexstr", "value": value, "mask": msk,
                                    "next_state": nxt(c.state)})
        if not transitions or transitions[-1]["type"] != "default":
            # No case matched and no default: error.NoMatch (P4_16 12.6). bmv2 would
            # accept with no error, so, as p4c's HandleNoMatch, a default to `noMatch`.
            transitions.append({"type": "default", "value": None, "mask": None,
                                "next_state": self.reject_state_name("noMatch")})
        return key, transitions

    def union_stack_key(self, k: ir.Expr, env: _Env) -> dict[str, Any] | None:
        """`u.last.m.f` of a stack of header unions as a select key, else None."""
        if not isinstance(k, ir.Member) or k.member in ("size", "lastIndex"):
            return None
        try:
            kind, v = self.path(k, env)
        except Unsupported:
            return None
        return {"type": "union_stack_field", "value": v} if kind == "union_stack_field" \
            else None

    def reject_state_name(self, name: str = "reject") -> str | None:
        """bmv2 has no reject state; v1model continues to ingress with the parser error
        set. Model reject (and p4c's `noMatch`) as a state that fails
        `verify(false, error.NoMatch)`."""
        if not hasattr(self, "_reject_states"):
            self._reject_states: dict[str, dict[str, Any]] = {}
        taken = {st.name for b in self.p.blocks.values() for st in b.states}
        while name in taken:  # a state of the program's own with that name
            name += "_0"
        if name not in self._reject_states:
            code = self.errors.get("NoMatch", 0)
            self._reject_states[name] = {
                "name": name, "id": -1, "parser_ops": [{"op": "verify", "parameters": [
                    {"type": "bool", "value": False},
                    {"type": "hexstr", "value": hexstr(code, 32)}]}],
                "transitions": [{"type": "default", "value": None, "mask": None,
                                 "next_state": None}],
                "transition_key": []}
        return name

    def expand_keyset(self, keys: tuple[ir.Expr, ...], widths: list[int], loc: Location
                      ) -> list[tuple[str, str | None]]:
        """Select case values as p4c writes them: byte-padded fields concatenated."""
        alternatives: list[list[tuple[int, int]]] = [[]]
        masked = False
        for k, w in zip(keys, widths, strict=True):
            full = mask(w)
            if isinstance(k, ir.DefaultKey):
                opts = [(0, 0)]
                masked = True
            elif isinstance(k, ir.MaskKey):
                v, m = _const(k.value, loc, self.errors), _const(k.mask, loc, self.errors)
                opts = [(v & m, m)]
                masked = True
            elif isinstance(k, ir.RangeKey):
                lo, hi = (_const(x, loc, self.errors) for x in (k.lo, k.hi))
                opts = _range_to_masks(lo, hi, w)
                masked = True
            else:
                opts = [(_const(k, loc, self.errors) & full, full)]
            alternatives = [a + [o] for a in alternatives for o in opts]
        out = []
        for alt in alternatives:
            value = "0x" + "".join(format(v, f"0{((w + 7) // 8) * 2}x")
                                   for (v, _), w in zip(alt, widths, strict=True))
            msk = "0x" + "".join(format(m, f"0{((w + 7) // 8) * 2}x")
                                 for (_, m), w in zip(alt, widths, strict=True))
            out.append((value, msk if masked else None))
        return out


def _flatten_select(t: ir.Transition) -> ir.Transition:
    """A list among the select keys (`select(a, {b, c})`, P4_16 12.6.1: a key may be any
    tuple) becomes its elements, and so does the keyset at its place in each case: a list
    its elements, `default` or `_` one `default` per element (p4c's SimplifySelectList)."""
    def leaves(e: ir.Expr) -> list[ir.Expr]:
        return [x for i in e.items for x in leaves(i)] if isinstance(e, ir.ListExpr) else [e]

    if not any(isinstance(k, ir.ListExpr) for k in t.select):
        return t
    counts = [len(leaves(k)) for k in t.select]

    def case_keys(c: ir.SelectCase) -> tuple[ir.Expr, ...]:
        if len(c.keys) != len(counts):   # `default` alone, a value set
            return c.keys
        out: list[ir.Expr] = []
        for k, n in zip(c.keys, counts, strict=True):
            out.extend(leaves(k) if isinstance(k, ir.ListExpr)
                       else [k] * n if isinstance(k, ir.DefaultKey) else [k])
        return tuple(out)

    select = tuple(x for k in t.select for x in leaves(k))
    cases = tuple(dataclasses.replace(c, keys=case_keys(c)) for c in t.cases)
    return dataclasses.replace(t, select=select, cases=cases)


def _check_varbit_extract(call: ir.Call, arg: ir.Expr) -> None:
    """p4c's rule (checkCorelibMethods): the one-argument extract takes a header
    without varbit fields, the two-argument one a header with one."""
    t = ir.unwrap(arg.type)  # type: ignore[arg-type]
    fields = t.fields if isinstance(t, ir.StructLike) else ()
    varbit = any(isinstance(ir.unwrap(f.type), ir.Varbit) for f in fields)
    if varbit and len(call.args) == 1:
        raise CompileError(call.loc, f"extract: {t} has a varbit field; use the "
                           "two-argument extract(hdr, length in bits)")
    if not varbit and len(call.args) == 2:
        raise CompileError(call.loc, f"extract: {t} has no varbit field; the "
                           "two-argument extract is for headers with one")
