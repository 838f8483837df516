"""bmv2 back end, v1model externs: checksum controls and hash calculations, extern
instances (counters, meters, registers, action profiles), extern function calls as
primitives (clone, resubmit, recirculate, digest, hash, random, log_msg...), and the
field and learn lists they name."""

from __future__ import annotations

from typing import Any

from . import ir
from .bmv2_common import (
    HASH_ALGOS,
    _const,
    _Env,
    _source_info,
    _width,
    expr_param,
    hexstr,
    tuple_struct,
)
from .errors import CompileError, Location, Unsupported
from .typecheck import (
    TableEntity,
    TypedBlock,
)


class ExternConverter:
    """Mixin of Bmv2Backend: externs."""

    def convert_checksums(self, b: TypedBlock, verify: bool) -> None:
        env = _Env()

        def walk(s: ir.Stmt, cond: ir.Expr | None) -> None:
            if isinstance(s, ir.Block):
                for x in s.stmts:
                    walk(x, cond)
            elif isinstance(s, ir.Empty):
                return
            elif isinstance(s, ir.CallStmt) and s.call.target[0] == "extern_function" and \
                    s.call.target[1] in ("verify_checksum", "update_checksum",
                                         "verify_checksum_with_payload",
                                         "update_checksum_with_payload"):
                self.checksum(s.call, env, verify, cond)
            elif isinstance(s, ir.CallStmt) and s.call.target[0] == "control_apply":
                # an applied sub-control is inlined (p4c's InlineControlFlow): its body,
                # then its copy-out assignments, if any
                walk(s.call.target[2], cond)
                for x in (s.call.target[3] if len(s.call.target) > 3 else ()):
                    walk(x, cond)
            else:
                raise Unsupported(getattr(s, "loc", None), "only verify_checksum/"
                                  "update_checksum calls are supported in checksum controls")

        assert b.body is not None
        walk(b.body, None)

    def checksum(self, call: ir.Call, env: _Env, verify: bool, cond: ir.Expr | None) -> None:
        name = call.target[1]
        c, data, target, algo = (a.value for a in call.args)
        assert c is not None and data is not None and target is not None and algo is not None
        inputs = self.field_list_elements(data, env, with_constants=True)
        if name.endswith("_with_payload"):
            inputs.append({"type": "payload", "value": None})
        calc = self.add_calculation(self.algo_name(algo), inputs, call.loc)
        kind, v = self.path(target, env)
        if kind != "field":
            raise Unsupported(call.loc, "the checksum must be a header field")
        entry: dict[str, Any] = {"name": self.unique_name("cksum"), "id": len(self.checksums)}
        if (si := _source_info(call.loc)):
            entry["source_info"] = si
        entry.update({"target": v, "type": "generic", "calculation": calc,
                      "verify": name.startswith("verify"),
                      "update": name.startswith("update"),
                      "if_cond": None if isinstance(c, ir.BoolLit) and c.value
                      else self.cond_expr(c, env)})
        self.checksums.append(entry)

    def algo_name(self, e: ir.Expr) -> str:
        if isinstance(e, ir.Member) and isinstance(e.type, ir.Enum) and \
                e.type.name == "HashAlgorithm":
            if "HashAlgorithm" in self.p.program_enums:
                # p4c turns enums not declared by v1model.p4 into bit<32> and then finds
                # no algorithm (p4_16_bmv_errors/issue5464-bmv2.p4, issue5464-hash-bmv2.p4)
                raise Unsupported(e.loc, f"HashAlgorithm.{e.member}: expected a HashAlgorithm member of "
                                  "v1model.p4 (this HashAlgorithm is the program's own); "
                                  "are you using an up-to-date v1model.p4?")
            return HASH_ALGOS[e.member]
        raise Unsupported(getattr(e, "loc", None), "the hash algorithm must be a "
                          "HashAlgorithm constant")

    def add_calculation(self, algo: str, inputs: list[dict[str, Any]], loc: Location) -> str:
        name = self.unique_name("calc")
        calc: dict[str, Any] = {"name": name, "id": len(self.calculations)}
        if (si := _source_info(loc)):
            calc["source_info"] = si
        calc.update({"algo": algo, "input": inputs})
        self.calculations.append(calc)
        return name

    def field_list_elements(self, data: ir.Expr, env: _Env, with_constants: bool,
                            prims: list[dict[str, Any]] | None = None
                            ) -> list[dict[str, Any]]:
        """The elements of a field list (a calculation's input, a learn list). With
        `prims` (an action's primitives so far), an element that is neither a field nor a
        constant is first assigned to a temporary, whose field is the element: bmv2 takes
        no expression there, and p4c's RemoveComplexExpressions does the same."""
        items: list[ir.Expr]
        if isinstance(data, ir.ListExpr):
            items = list(data.items)
        elif isinstance(data, ir.StructExpr):
            items = [x for _, x in data.fields]
        else:
            items = [data]
        out: list[dict[str, Any]] = []
        for x in items:
            t = ir.unwrap(x.type)  # type: ignore[arg-type]
            if isinstance(t, ir.TupleT):   # a tuple-typed struct field: its elements
                t = tuple_struct(t)
            if isinstance(t, ir.StructLike):
                for f in t.fields:
                    out.extend(self.field_list_elements(
                        ir.Member(x, f.name, x.loc, f.type), env, with_constants,  # type: ignore
                        prims))
                continue
            leaf = self.leaf(x, env, True)
            if leaf is not None and leaf["type"] == "field":
                out.append(leaf)
            elif isinstance(x, ir.Lit) and with_constants:
                out.append({"type": "hexstr", "value": hexstr(x.value, _width(x.type)),
                            "bitwidth": _width(x.type)})
            elif prims is not None:
                tmp = self.temp(ir.Bits(_width(x.type)), "hash_in")
                prims.append(self.prim("assign", [{"type": "field", "value": tmp},
                                                  self.operand(x, env)], x.loc))
                out.append({"type": "field", "value": tmp})
            elif with_constants and isinstance(x, ir.Cast):
                # A cast in a checksum's field list: p4c's ExpressionConverter writes the
                # operand itself (casts are no-ops there), so `(bit<32>)h.len16` adds the
                # 16-bit field to the calculation, not 32 bits.
                out.extend(self.field_list_elements(x.expr, env, with_constants, prims))
            elif with_constants:
                # A checksum's calculation input: p4c writes {"type": "expression"} here,
                # and simple_switch refuses that JSON at load ("Unsupported input type").
                raise Unsupported(x.loc, "a checksum's field list takes header fields and "
                                  "constants only, not an expression such as `a ++ b` or "
                                  "`a + 1`: bmv2 cannot compute over it (list the fields "
                                  "one by one)")
            else:
                out.append({"type": "expression", "value": self.data_expr(x, env)})
        return out

    # ------------------------------------------------------------ extern instances

    def check_register_types(self) -> None:
        """A register's cells are bit<W> or int<W> on bmv2 (a `type` or a serializable enum
        over one counts as one): p4c's back end refuses any other element type (a struct,
        a header, bool, a plain enum) with "Only registers with bit or int types are
        currently supported", before any read or write of it is looked at."""
        for q, inst in self.instances.items():
            if inst.type.name != "register" or not inst.type.type_args:
                continue
            elem = inst.type.type_args[0]
            t = ir.unwrap(elem)
            if isinstance(t, ir.Enum) and t.underlying is not None:
                t = ir.unwrap(t.underlying)
            if not isinstance(t, ir.Bits):
                raise CompileError(inst.decl.loc, f"{q}: register<{elem}>: only registers "
                                   "with bit<W> or int<W> cells are supported on bmv2 (as "
                                   "p4c: keep the value in several registers, or in one "
                                   "wide enough bit<W> one)")

    def convert_instances(self) -> None:
        bindings: dict[str, TableEntity] = {}
        for b in self.p.blocks.values():
            for t in b.tables:
                for inst in (t.counters, t.meters):
                    if inst is None:
                        continue
                    other = bindings.setdefault(inst.qualified, t)
                    if other is not t:
                        # as p4c's DirectCounterMap/DirectMeterMap (reused-counter-bmv2)
                        what = "counters" if inst is t.counters else "meters"
                        raise CompileError(inst.decl.loc, f"{inst.qualified}: direct {what} "
                                           "cannot be attached to multiple tables "
                                           f"{other.qualified} and {t.qualified}")
        for q, inst in self.instances.items():
            kind = inst.type.name
            si = _source_info(inst.decl.loc, inst.name)
            extra = {"source_info": si} if si else {}
            if kind == "counter":
                self.counter_arrays.append({"name": q, "id": len(self.counter_arrays), **extra,
                                            "size": inst.args[0], "is_direct": False})
            elif kind == "direct_counter":
                t = bindings.get(q)
                if t is None:
                    self.diags.warn(inst.decl.loc, f"{q}: direct counter not used by any table")
                    continue
                self.counter_arrays.append({"name": q, "id": len(self.counter_arrays), **extra,
                                            "is_direct": True, "binding": t.qualified})
            elif kind == "register":
                w = _width(inst.type.type_args[0]) if inst.type.type_args else 32
                self.register_arrays.append({"name": q, "id": len(self.register_arrays),
                                             **extra, "size": inst.args[0], "bitwidth": w})
            elif kind == "meter":
                self.meter_arrays.append({"name": q, "id": len(self.meter_arrays), **extra,
                                          "is_direct": False, "size": inst.args[0],
                                          "rate_count": 2, "type": inst.args[1]})
            elif kind == "direct_meter":
                t = bindings.get(q)
                if t is None:  # as p4c (p4_16_bmv_errors/issue1829-2-bmv2.p4)
                    raise CompileError(inst.decl.loc, f"{q}: direct meter is not associated "
                                       "with any table via 'meters' table property")
                target = self.direct_meter_targets.get(q)
                if target is None:
                    raise CompileError(inst.decl.loc, f"{q}: direct meter is never read() "
                                       "in an action of its table")
                self.meter_arrays.append({"name": q, "id": len(self.meter_arrays), **extra,
                                          "is_direct": True, "size": t.size or 1024,
                                          "rate_count": 2, "type": inst.args[0],
                                          "binding": t.qualified, "result_target": target})

    def extern_function(self, name: str, call: ir.Call, args: list[ir.Expr | None], env: _Env,
                        prims: list[dict[str, Any]]) -> None:
        loc = call.loc
        op = self.operand
        if name == "mark_to_drop":
            self.mark_to_drop(args, env, prims, loc)
        elif name == "hash":
            result, algo, base, data, mx = args
            assert result and algo and base and data and mx
            calc = self.add_calculation(self.algo_name(algo),
                                        self.field_list_elements(data, env, True, prims), loc)
            prims.append(self.prim("modify_field_with_hash_based_offset", [
                self.lvalue_param(result, env), op(base, env),
                {"type": "calculation", "value": calc}, op(mx, env)], loc))
        elif name == "random":
            result, lo, hi = args
            assert result and lo and hi
            prims.append(self.prim("modify_field_rng_uniform", [
                self.lvalue_param(result, env), op(lo, env), op(hi, env)], loc))
        elif name == "digest":
            receiver, data = args
            assert receiver and data
            lid = self.add_learn_list(data, env, prims)
            prims.append(self.prim("generate_digest", [op(receiver, env),
                                                       {"type": "hexstr",
                                                        "value": hexstr(lid)}], loc))
        elif name in ("clone", "clone3", "clone_preserving_field_list"):
            self.clone(name, args, env, prims, loc)
        elif name in ("resubmit", "recirculate", "resubmit_preserving_field_list",
                      "recirculate_preserving_field_list"):
            if name.endswith("_preserving_field_list"):
                fl = self.field_list_by_index(args[0], loc)  # type: ignore[arg-type]
            else:
                fl = self.add_field_list_from(args[0], env, prims)  # type: ignore[arg-type]
            prims.append(self.prim(name.split("_")[0], [{"type": "hexstr",
                                                         "value": hexstr(fl)}], loc))
        elif name == "truncate":
            prims.append(self.prim("truncate", [op(args[0], env)], loc))  # type: ignore
        elif name in ("assert", "assume"):
            # bmv2's assert/assume take data: the condition as b2d(cond), in p4c's
            # two-level expression parameter (a boolean node there aborts simple_switch)
            prims.append(self.prim(name, [expr_param(self.data_expr(
                args[0], env))], loc))  # type: ignore[arg-type]
        elif name == "log_msg":
            self.log_msg(args, env, prims, loc)
        elif name in ("verify_checksum", "update_checksum", "verify_checksum_with_payload",
                      "update_checksum_with_payload"):
            raise Unsupported(loc, f"{name} may only be called in the checksum controls")
        elif name == "verify":
            raise Unsupported(loc, "verify() may only be called in a parser")
        else:
            raise Unsupported(loc, f"extern function {name} is not supported on bmv2")

    def mark_to_drop(self, args: list[ir.Expr | None], env: _Env,
                     prims: list[dict[str, Any]], loc: Location) -> None:
        """mark_to_drop(sm) (or the old mark_to_drop()), also on a copy of the standard
        metadata."""
        if not args:
            prims.append(self.prim("drop", [], loc))
            return
        sm = args[0]
        assert sm is not None
        spec = self.lvalue_param(ir.Member(sm, "egress_spec", loc, ir.Bits(9)), env)
        if spec.get("value") == ["standard_metadata", "egress_spec"]:
            prims.append(self.prim("mark_to_drop", [
                {"type": "header", "value": "standard_metadata"}], loc))
            return
        # A copy of the standard metadata (a function's or a sub-control's inout
        # parameter, copied back after the call): what mark_to_drop does, on the
        # copy (v1model: egress_spec = the drop port, mcast_grp = 0).
        grp = self.lvalue_param(ir.Member(sm, "mcast_grp", loc, ir.Bits(16)), env)
        prims.append(self.prim("assign", [spec, {"type": "hexstr", "value": "0x01ff"}], loc))
        prims.append(self.prim("assign", [grp, {"type": "hexstr", "value": "0x0000"}], loc))

    def clone(self, name: str, args: list[ir.Expr | None], env: _Env,
              prims: list[dict[str, Any]], loc: Location) -> None:
        """clone, clone3 and clone_preserving_field_list: the session and the field list
        of metadata the clone keeps."""
        ctype, session = args[0], args[1]
        assert isinstance(ctype, ir.Member) and session is not None
        if name == "clone":  # no metadata preserved: an empty list, as p4c emits
            fl = self.field_list_ids.get("empty") or \
                self.new_field_list("empty", "empty", [])
        elif name == "clone3":
            fl = self.add_field_list_from(args[2], env, prims)  # type: ignore[arg-type]
        elif name == "clone_preserving_field_list":
            fl = self.field_list_by_index(args[2], loc)  # type: ignore[arg-type]
        prim = "clone_ingress_pkt_to_egress" if ctype.member == "I2E" \
            else "clone_egress_pkt_to_egress"
        prims.append(self.prim(prim, [self.operand(session, env),
                                      {"type": "hexstr", "value": hexstr(fl)}], loc))

    def log_msg(self, args: list[ir.Expr | None], env: _Env, prims: list[dict[str, Any]],
                loc: Location) -> None:
        """log_msg(text[, values]): a list or struct of values is flattened as p4c's
        FlattenLogMsg does."""
        msg = args[0]
        assert isinstance(msg, ir.StrLit)
        values: list[dict[str, Any]] = []
        if len(args) > 1:
            data = args[1]
            assert data is not None
            items = list(data.items) if isinstance(data, ir.ListExpr) else \
                [x for _, x in data.fields] if isinstance(data, ir.StructExpr) else [data]
            text, items = _flatten_log_msg(msg.value, items) \
                if isinstance(data, (ir.ListExpr, ir.StructExpr)) else (msg.value, items)
            values = [self.operand(x, env) for x in items]
        else:
            text = msg.value
        prims.append(self.prim("log_msg", [{"type": "string", "value": text},
                                           {"type": "parameters_vector",
                                            "value": values}], loc))

    def field_list_by_index(self, idx: ir.Expr, loc: Location) -> int:
        """clone/resubmit/recirculate_preserving_field_list(N): the metadata fields
        annotated @field_list(N)."""
        n = _const(idx, loc)
        if ("index", n) in self.field_list_ids:
            return self.field_list_ids[("index", n)]
        elements: list[dict[str, Any]] = []

        def collect(fields, path: str, listed: bool) -> None:
            """The annotated fields at any depth of the user metadata; a struct field
            annotated (or inside one) gives each of its leaves, as the scalars hold
            them (`userMetadata.outer.inner`)."""
            for f in fields:
                ann = ir.annotation(f.annotations, "field_list")
                here = listed or bool(ann and n in [self.annotation_int(a) for a in ann.args])
                t = ir.unwrap(f.type)
                if isinstance(t, ir.TupleT):
                    t = tuple_struct(t)
                if isinstance(t, ir.StructLike) and t.kind == "struct":
                    collect(t.fields, f"{path}.{f.name}", here)
                elif here:
                    elements.append({"type": "field", "value": ["scalars", f"{path}.{f.name}"]})

        mt = self.p.metadata_type
        collect(mt.fields if mt else (), "userMetadata", False)
        return self.new_field_list(("index", n), f"field_list{n}", elements)

    def new_field_list(self, key: Any, name: str, elements: list[dict[str, Any]]) -> int:
        """A field list's JSON id: from 1 up, since bmv2 reads a resubmit/recirculate
        field list id of 0 as "not requested", and looks every clone's id up (an id with
        no list aborts it)."""
        n = len(self.field_lists) + 1
        self.field_lists.append({"id": n, "name": name, "elements": elements})
        if key is not None:
            self.field_list_ids[key] = n
        return n

    def annotation_int(self, a: Any) -> int | None:
        """An annotation argument as a number (literal or global constant)."""
        if isinstance(a, ir.Lit):
            return a.value
        if isinstance(a, ir.Name):
            return self.p.constants.get(a.name)
        if isinstance(a, ir.Member) and isinstance(a.expr, ir.Name | ir.TypeName):
            # a serializable enum's member (p4c's P4_14 translator writes
            # `@field_list(FieldLists.name)` with `enum bit<8> FieldLists {...}`)
            enum = a.expr.name if isinstance(a.expr, ir.Name) else a.expr.tref.name
            for e in self.p.enums:
                if e.name == enum and e.values and a.member in e.members:
                    return e.values[e.members.index(a.member)]
        return None

    def add_field_list_from(self, data: ir.Expr, env: _Env,
                            prims: list[dict[str, Any]]) -> int:
        """The field list of resubmit/recirculate/clone3(data): as p4c's
        RemoveComplexExpressions leaves them, a constant stays a constant (a `hexstr`
        element, which preserves nothing) and any other value that is not a field is
        first copied into a temporary; simple_switch refuses an `expression` element."""
        elements = self.field_list_elements(data, env, True, prims)
        return self.new_field_list(None, f"fl_{len(self.field_lists) + 1}", elements)

    def add_learn_list(self, data: ir.Expr, env: _Env, prims: list[dict[str, Any]]) -> int:
        """The learn list of one digest call, named after the digest's type (what the
        control plane sees). Each call reads its own sources: two calls of one type
        with different fields get a list each, under the same name, as p4c does; a
        value that is not a field (a constant, an expression) is copied into a
        temporary first, since bmv2 learn lists hold fields only."""
        t = ir.unwrap(data.type)  # type: ignore[arg-type]
        name = t.name if isinstance(t, ir.StructLike) and t.name else \
            f"digest_{len(self.learn_lists)}"
        elements = self.field_list_elements(data, env, False, prims)
        for ll in self.learn_lists:
            if ll["name"] == name and ll["elements"] == elements:
                return ll["id"]
        lid = len(self.learn_lists) + 1
        self.learn_lists.append({"id": lid, "name": name, "elements": elements})
        return lid


def _is_struct_like(e: ir.Expr) -> bool:
    return isinstance(ir.unwrap(e.type), ir.StructLike)  # type: ignore[arg-type]


def _unfold(e: ir.Expr) -> tuple[str, list[ir.Expr]]:
    """A struct or header value in a log_msg list: `(f1:{},f2:(g:{}))` and its fields."""
    t = ir.unwrap(e.type)  # type: ignore[arg-type]
    assert isinstance(t, ir.StructLike)
    parts: list[str] = []
    fields: list[ir.Expr] = []
    for f in t.fields:
        m = ir.Member(e, f.name, e.loc, f.type)
        if _is_struct_like(m):
            text, sub = _unfold(m)
            parts.append(f"{f.name}:{text}")
            fields.extend(sub)
        else:
            parts.append(f"{f.name}:{{}}")
            fields.append(m)
    return "(" + ",".join(parts) + ")", fields


def _flatten_log_msg(fmt: str, items: list[ir.Expr]) -> tuple[str, list[ir.Expr]]:
    """p4c's FlattenLogMsg: when a log_msg list holds a struct or a header, each such
    item's `{}` becomes `(name:{},...)` over its fields (nested structs in parentheses,
    no validity bit) and the list holds the fields; bmv2 takes no header or struct
    there (simple_switch aborts on a "header" element)."""
    if not any(_is_struct_like(x) for x in items):
        return fmt, items
    out, values = "", []
    for x in items:
        n = fmt.find("{}")
        if n >= 0:
            out += fmt[:n]
            fmt = fmt[n + 2:]
        if _is_struct_like(x):
            text, fields = _unfold(x)
            out += text
            values.extend(fields)
        else:
            out += "{}"
            values.append(x)
    return out + fmt, values
