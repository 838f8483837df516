"""bmv2 back end: typed IR -> bmv2 JSON (behavioral-model docs/JSON_format.md).

Follows the conventions of p4c's bmv2 back end so that the JSON reads like
p4c's: `scalars` for metadata and locals, `userMetadata.` field prefixes,
control-local names (`MyIngress.ipv4_lpm`), hidden `tbl_*` tables for code in
apply blocks, `&` masks for wrap-around arithmetic, `_jump_if_zero` for ifs
inside actions, and `__meta__` version [2, 23].
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from . import ir
from .bmv2_common import (
    _calls,  # noqa: F401 - p4info.py imports them from here
    _Env,
    _flat_fields,
    _source_info,
    _switch_to_ifs,
    _width,
    expr_param,
    hexstr,
    mask,
    tuple_struct,
)
from .bmv2_control import ControlConverter
from .bmv2_expr import ExpressionConverter
from .bmv2_externs import ExternConverter
from .bmv2_parser import ParserConverter
from .errors import Diagnostics, Location, Unsupported
from .typecheck import (
    ActionEntity,
    InstanceEntity,
    TypedBlock,
    TypedProgram,
    VarEntity,
)
from .typecheck_tree import _children, _lvalue_root, _overlaps

JSON_VERSION = [2, 23]
COMPILER = "fabriclab-p4c (embedded P4 compiler, p4c bmv2 back end conventions)"


class Bmv2Backend(ExpressionConverter, ParserConverter, ControlConverter, ExternConverter):
    def __init__(self, program: TypedProgram, program_name: str,
                 diags: Diagnostics | None = None):
        self.p = program
        self.program_name = program_name
        self.diags = diags or Diagnostics()
        self.header_types: list[dict[str, Any]] = []
        self.header_type_names: set[str] = set()
        self.headers: list[dict[str, Any]] = []
        self.header_stacks: list[dict[str, Any]] = []
        self.union_types: list[dict[str, Any]] = []
        self.unions: list[dict[str, Any]] = []
        self.union_stacks: list[dict[str, Any]] = []
        self.scalars: list[list[Any]] = []
        self.scalar_names: set[str] = set()
        self.actions: list[dict[str, Any]] = []
        self.calculations: list[dict[str, Any]] = []
        self.checksums: list[dict[str, Any]] = []
        self.field_lists: list[dict[str, Any]] = []
        self.field_list_ids: dict[Any, int] = {}
        self.learn_lists: list[dict[str, Any]] = []
        self.counter_arrays: list[dict[str, Any]] = []
        self.register_arrays: list[dict[str, Any]] = []
        self.meter_arrays: list[dict[str, Any]] = []
        self.parse_vsets: list[dict[str, Any]] = []
        # per enclosing run-time loop: where its break / continue jumps are
        self._loop_jumps: list[tuple[list[int], list[int]]] = []
        self.used_names: set[str] = set()
        self.errors = {name: i for i, name in enumerate(program.errors)}
        self.direct_meter_targets: dict[str, Any] = {}
        self.instances: dict[str, InstanceEntity] = {}
        self.block: TypedBlock | None = None
        self.stem = "prog"
        self.node_counter = 2

    # ------------------------------------------------------------ entry point

    def build(self) -> dict[str, Any]:
        p = self.p
        self.stem = Path(self.program_name).stem
        self.layout()
        blocks = p.blocks
        for b in blocks.values():
            for inst in b.instances:
                self.instances[inst.qualified] = inst
        for inst in p.global_instances:
            self.instances[inst.qualified] = inst
        self.check_register_types()
        parser = self.convert_parser(blocks["p"])
        pipelines = [self.convert_control(blocks[r]) for r in ("ig", "eg")]
        self.convert_checksums(blocks["vr"], verify=True)
        self.convert_checksums(blocks["ck"], verify=False)
        deparser = self.convert_deparser(blocks["dep"])
        self.convert_instances()
        self.finish_scalars()
        return {
            "header_types": self.header_types,
            "headers": self.headers,
            "header_stacks": self.header_stacks,
            "header_union_types": self.union_types,
            "header_unions": self.unions,
            "header_union_stacks": self.union_stacks,
            "field_lists": self.field_lists,
            "errors": [[name, code] for name, code in self.errors.items()],
            "enums": self.enums(),
            "parsers": [parser],
            "parse_vsets": self.parse_vsets,
            "deparsers": [deparser],
            "meter_arrays": self.meter_arrays,
            "counter_arrays": self.counter_arrays,
            "register_arrays": self.register_arrays,
            "calculations": self.calculations,
            "learn_lists": self.learn_lists,
            "actions": self.actions,
            "pipelines": pipelines,
            "checksums": self.checksums,
            "force_arith": [],
            "extern_instances": [],
            "field_aliases": self.field_aliases(),
            "program": self.program_name,
            "__meta__": {"version": JSON_VERSION, "compiler": COMPILER},
        }

    def enums(self) -> list[dict[str, Any]]:
        out = []
        for e in self.p.enums:
            if e.underlying is not None:
                out.append({"name": e.name, "entries": [[m, v] for m, v in
                                                         zip(e.members, e.values, strict=True)]})
        return out

    def field_aliases(self) -> list[Any]:
        sm = self.standard_metadata_type()
        out = []
        for f in sm.fields if sm else ():
            alias = ir.annotation_string(f.annotations, "alias")
            if alias:
                out.append([alias, ["standard_metadata", f.name]])
        return out

    # ------------------------------------------------------------ data layout

    def standard_metadata_type(self) -> ir.StructLike | None:
        for s in self.p.structs:
            if s.name == "standard_metadata_t":
                return s
        return None

    def add_header_type(self, t: ir.StructLike, name: str | None = None) -> str:
        name = name or t.name
        if name in self.header_type_names:
            return name
        fields: list[list[Any]] = []
        max_length = None
        var_bits = 0
        for f in _flat_fields(t):
            ft = ir.unwrap(f.type)
            if isinstance(ft, ir.Varbit):
                if max_length is not None:  # bmv2 has one variable-length field per header
                    raise Unsupported(None, f"{t.name}: a header with more than one varbit "
                                      "field is not supported on bmv2")
                fields.append([f.name, "*"])
                max_length = (t.width() or 0) // 8
                var_bits = ft.max_bits
            elif isinstance(ft, ir.Bits):
                fields.append([f.name, ft.bits, ft.signed])
            elif isinstance(ft, ir.Bool):
                fields.append([f.name, 1, False])
            elif isinstance(ft, (ir.Enum, ir.ErrorT)):
                fields.append([f.name, _width(ft), False])
            else:
                raise Unsupported(None, f"{t.name}.{f.name}: field of type {f.type} is not "
                                  "supported in a header on bmv2")
        total = sum(x[1] for x in fields if isinstance(x[1], int))
        if t.kind == "header" and not name.startswith("$") and (total + var_bits) % 8:
            # as p4c-bm2-ss (HeaderConverter::addHeaderType): an error for every header
            # type with an instance (a varbit field counts its maximum width); a struct
            # laid out as a header is padded below
            raise Unsupported(None, f"{t.name}: found header with fields totaling "
                              f"{total + var_bits} bits; the BMv2 target only supports "
                              "headers with fields totaling a multiple of 8 bits")
        if total % 8 and t.kind != "header":
            fields.append(["_padding", 8 - total % 8, False])
        ht: dict[str, Any] = {"name": name, "id": len(self.header_types), "fields": fields}
        if max_length is not None:
            ht["max_length"] = max_length
        self.header_types.append(ht)
        self.header_type_names.add(name)
        return name

    def add_header(self, name: str, type_name: str, metadata: bool) -> int:
        hid = len(self.headers)
        self.headers.append({"name": name, "id": hid, "header_type": type_name,
                             "metadata": metadata, "pi_omit": True})
        return hid

    def add_scalar(self, name: str, t: ir.Type) -> None:
        if name in self.scalar_names:
            return
        ut = ir.unwrap(t)
        if isinstance(ut, ir.Bits):
            self.scalars.append([name, ut.bits, ut.signed])
        elif isinstance(ut, ir.Bool):
            self.scalars.append([name, 1, False])
        elif isinstance(ut, (ir.Enum, ir.ErrorT)):
            self.scalars.append([name, _width(ut), False])
        elif isinstance(ut, ir.Varbit):
            raise Unsupported(None, f"{name}: varbit metadata is not supported")
        else:
            raise Unsupported(None, f"{name}: metadata of type {t} is not supported on bmv2")
        self.scalar_names.add(name)

    def layout(self) -> None:
        self.header_types.append({"name": "scalars_0", "id": 0, "fields": self.scalars})
        self.header_type_names.add("scalars_0")
        self.add_header("scalars", "scalars_0", True)
        sm = self.standard_metadata_type()
        if sm is not None:
            self.add_header_type(sm, "standard_metadata")
            self.add_header("standard_metadata", "standard_metadata", True)
        if self.p.metadata_type is not None:
            self.layout_struct(self.p.metadata_type, "userMetadata", metadata=True)
        if self.p.headers_type is not None:
            self.layout_struct(self.p.headers_type, "", metadata=False)
        for b in self.p.blocks.values():
            for v in b.variables:
                self.layout_local(v)

    def layout_struct(self, t: ir.StructLike, prefix: str, metadata: bool) -> None:
        for f in t.fields:
            name = f"{prefix}.{f.name}" if prefix else f.name
            ft = ir.unwrap(f.type)
            if isinstance(ft, ir.StructLike) and ft.kind == "header":
                self.add_header(name, self.add_header_type(ft), False)
            elif isinstance(ft, ir.StructLike) and ft.kind == "header_union":
                self.layout_union(ft, name)
            elif isinstance(ft, ir.StructLike):
                self.layout_struct(ft, name, metadata)
            elif isinstance(ft, ir.TupleT):
                self.layout_struct(tuple_struct(ft), name, metadata)
            elif isinstance(ft, ir.Stack):
                self.layout_stack(ft, name)
            elif isinstance(ft, ir.Varbit) and metadata:
                # p4c: as for a varbit local, a header instance of its own (`field`)
                vt = ir.StructLike("header", f"$varbit{ft.max_bits}",
                                   (ir.StructField("field", ft),))
                self.add_header(name, self.add_header_type(vt), True)
            elif metadata or not prefix:
                if not metadata:
                    raise Unsupported(None, f"{t.name}.{f.name}: the headers struct may only "
                                      "contain headers, header stacks, unions and structs")
                self.add_scalar(name, f.type)
            else:
                self.add_scalar(name, f.type)

    def layout_stack(self, t: ir.Stack, name: str) -> None:
        elem = ir.unwrap(t.elem)
        if isinstance(elem, ir.StructLike) and elem.kind == "header_union":
            # Elements are unions `u[0]`, `u[1]` (members `u[0].a`), as p4c lays them out.
            ids = []
            for i in range(t.size):
                self.layout_union(elem, f"{name}[{i}]")
                ids.append(self.unions[-1]["id"])
            self.union_stacks.append({"name": name, "id": len(self.union_stacks),
                                      "union_type": elem.name, "size": t.size,
                                      "header_union_ids": ids})
            return
        if not (isinstance(elem, ir.StructLike) and elem.kind == "header"):
            raise Unsupported(None, f"{name}: only stacks of headers or header unions "
                              "are supported")
        tname = self.add_header_type(elem)
        ids = [self.add_header(f"{name}[{i}]", tname, False) for i in range(t.size)]
        self.header_stacks.append({"name": name, "id": len(self.header_stacks),
                                   "header_type": tname, "size": t.size, "header_ids": ids})

    def layout_union(self, t: ir.StructLike, name: str) -> None:
        if t.name not in {u["name"] for u in self.union_types}:
            self.union_types.append({
                "name": t.name, "id": len(self.union_types),
                "headers": [[f.name, self.add_header_type(ir.unwrap(f.type))]  # type: ignore
                            for f in t.fields]})
        ids = []
        for f in t.fields:
            ft = ir.unwrap(f.type)
            assert isinstance(ft, ir.StructLike)
            ids.append(self.add_header(f"{name}.{f.name}", self.add_header_type(ft), False))
        self.unions.append({"name": name, "id": len(self.unions), "union_type": t.name,
                            "header_ids": ids})

    def layout_local(self, v: VarEntity) -> None:
        t = ir.unwrap(v.type)
        if isinstance(t, ir.StructLike) and t.kind == "header":
            self.add_header(v.unique, self.add_header_type(t), False)
        elif isinstance(t, ir.StructLike) and t.kind == "struct":
            self.layout_struct(t, v.unique, metadata=True)
        elif isinstance(t, ir.StructLike) and t.kind == "header_union":
            self.layout_union(t, v.unique)
        elif isinstance(t, ir.Stack):
            self.layout_stack(t, v.unique)
        elif isinstance(t, ir.Varbit):
            # p4c: a varbit local is a header instance of its own with one field `field`
            vt = ir.StructLike("header", f"$varbit{t.max_bits}", (ir.StructField("field", t),))
            self.add_header(v.unique, self.add_header_type(vt), True)
        else:
            self.add_scalar(v.unique, v.type)

    def temp(self, t: ir.Type, prefix: str = "tmp") -> list[str]:
        i = 0
        while f"{prefix}_{i}" in self.scalar_names:
            i += 1
        self.add_scalar(f"{prefix}_{i}", t)
        return ["scalars", f"{prefix}_{i}"]

    def finish_scalars(self) -> None:
        total = sum(f[1] for f in self.scalars)
        if total % 8:
            self.scalars.append(["_padding_0", 8 - total % 8, False])

    def unique_name(self, base: str) -> str:
        name = base
        i = 0
        while name in self.used_names:
            name = f"{base}_{i}"
            i += 1
        self.used_names.add(name)
        return name

    # ------------------------------------------------------------ deparser, checksums

    def convert_deparser(self, b: TypedBlock) -> dict[str, Any]:
        order: list[str] = []
        env = _Env()

        def walk(s: ir.Stmt) -> None:
            if isinstance(s, ir.Block):
                for x in s.stmts:
                    walk(x)
            elif isinstance(s, ir.Empty):
                return
            elif isinstance(s, ir.CallStmt) and s.call.target[0] == "method" \
                    and s.call.target[2] == "emit":
                arg = s.call.args[0].value
                assert arg is not None
                self.emit_order(arg, env, order)
            else:
                raise Unsupported(getattr(s, "loc", None), "only emit() calls are supported "
                                  "in a v1model deparser")

        assert b.body is not None
        walk(b.body)
        out: dict[str, Any] = {"name": "deparser", "id": 0}
        if (si := _source_info(b.loc, b.name)):
            out["source_info"] = si
        out.update({"order": order, "primitives": []})
        return out

    def emit_order(self, e: ir.Expr, env: _Env, order: list[str]) -> None:
        kind, v = self.path(e, env)
        t = ir.unwrap(e.type)  # type: ignore[arg-type]
        if kind == "header":
            order.append(v)
        elif kind == "stack":
            assert isinstance(t, ir.Stack)
            elem = ir.unwrap(t.elem)
            if isinstance(elem, ir.StructLike) and elem.kind == "header_union":
                order.extend(f"{v}[{i}].{f.name}" for i in range(t.size) for f in elem.fields)
            else:
                order.extend(f"{v}[{i}]" for i in range(t.size))
        elif kind == "union":
            assert isinstance(t, ir.StructLike)
            order.extend(f"{v}.{f.name}" for f in t.fields)
        elif kind in ("struct", "scalar_struct"):
            if isinstance(t, ir.TupleT):
                t = tuple_struct(t)
            assert isinstance(t, ir.StructLike)
            for f in t.fields:
                self.emit_order(ir.Member(e, f.name, e.loc, f.type), env,  # type: ignore
                                order)
        else:
            raise Unsupported(e.loc, "emit() needs a header, stack, union or struct")  # type: ignore

    # ------------------------------------------------------------ actions

    def add_action(self, name: str, params: list[dict[str, Any]],
                   primitives: list[dict[str, Any]], loc: Location | None = None) -> int:
        aid = len(self.actions)
        a: dict[str, Any] = {"name": name, "id": aid, "runtime_data": params,
                             "primitives": primitives}
        if (si := _source_info(loc, name.split(".")[-1])):
            a["source_info"] = si
        self.actions.append(a)
        return aid

    def convert_action(self, a: ActionEntity) -> int:
        env = _Env()
        params = []
        for i, p in enumerate(a.data_params):
            t = ir.unwrap(p.type)
            if not isinstance(t, (ir.Bits, ir.Enum, ir.Bool)):
                raise Unsupported(a.loc, f"{a.name}: action parameter {p.name} must be bit<> "
                                  "or int<> on this target")
            env.bind(p, ("runtime", i))
            params.append({"name": p.name, "bitwidth": _width(p.type)})
        for p in a.params:
            if p.direction:
                raise Unsupported(a.loc, f"{a.name}: actions used in tables or called from "
                                  "apply blocks may not have directional parameters on bmv2")
        prims: list[dict[str, Any]] = []
        self.action_body(a.body.stmts, env, prims)
        return self.add_action(a.qualified, params, prims, a.loc)

    def action_body(self, stmts: tuple[ir.Stmt, ...], env: _Env, prims: list[dict[str, Any]],
                    end_jumps: list[int] | None = None) -> None:
        """Primitives for statements; ifs become _jump_if_zero/_jump (absolute offsets)."""
        top = end_jumps is None
        if end_jumps is None:
            end_jumps = []
        for s in stmts:
            self.action_stmt(s, env, prims, end_jumps)
        if top:
            for i in end_jumps:
                prims[i]["parameters"].append({"type": "hexstr", "value": hexstr(len(prims))})

    def action_stmt(self, s: ir.Stmt, env: _Env, prims: list[dict[str, Any]],
                    end_jumps: list[int]) -> None:
        if isinstance(s, ir.Block):
            for x in s.stmts:
                self.action_stmt(x, env, prims, end_jumps)
        elif isinstance(s, ir.Empty):
            return
        elif isinstance(s, ir.VarDecl):
            if s.init is not None:
                ref = self._var_by_unique(s.name, s.type)
                self.assign(ir.Assign(ir.Name(s.name, s.loc, s.type, ref), s.init, s.loc),
                            env, prims)
        elif isinstance(s, ir.Assign):
            self.assign(s, env, prims)
        elif isinstance(s, ir.CallStmt):
            self.call_primitive(s.call, env, prims)
        elif isinstance(s, ir.If):
            at = len(prims)
            prims.append(self.prim("_jump_if_zero", [
                expr_param({"op": "b2d", "left": None, "right": self.bool_tree(s.cond, env)})],
                s.loc))
            self.action_stmt(s.then, env, prims, end_jumps)
            if s.other is not None:
                jump = len(prims)
                prims.append(self.prim("_jump", [], s.loc))
                prims[at]["parameters"].append({"type": "hexstr", "value": hexstr(len(prims))})
                self.action_stmt(s.other, env, prims, end_jumps)
                prims[jump]["parameters"].append({"type": "hexstr", "value": hexstr(len(prims))})
            else:
                prims[at]["parameters"].append({"type": "hexstr", "value": hexstr(len(prims))})
        elif isinstance(s, ir.Exit):
            prims.append(self.prim("exit", [], s.loc))
        elif isinstance(s, ir.Return):
            end_jumps.append(len(prims))
            prims.append(self.prim("_jump", [], s.loc))
        elif isinstance(s, ir.Switch):
            self.action_stmt(_switch_to_ifs(s), env, prims, end_jumps)
        elif isinstance(s, ir.Loop):
            self.action_loop(s, env, prims, end_jumps)
        elif isinstance(s, (ir.Break, ir.Continue)):
            breaks, continues = self._loop_jumps[-1]
            (breaks if isinstance(s, ir.Break) else continues).append(len(prims))
            prims.append(self.prim("_jump", [], s.loc))
        else:
            raise Unsupported(getattr(s, "loc", None), f"{type(s).__name__} is not supported "
                              "inside actions on bmv2")

    def action_loop(self, s: ir.Loop, env: _Env, prims: list[dict[str, Any]],
                    end_jumps: list[int]) -> None:
        """A run-time loop as p4c lays it out for bmv2: init; L: _jump_if_zero(cond, E);
        body; C: updates; _jump(L); E: (break jumps to E, continue to C)."""
        for x in s.init:
            self.action_stmt(x, env, prims, end_jumps)
        top = len(prims)
        prims.append(self.prim("_jump_if_zero", [
            expr_param({"op": "b2d", "left": None, "right": self.bool_tree(s.cond, env)})],
            s.loc))
        self._loop_jumps.append(([], []))
        try:
            self.action_stmt(s.body, env, prims, end_jumps)
        finally:
            breaks, continues = self._loop_jumps.pop()
        for at in continues:
            prims[at]["parameters"].append({"type": "hexstr", "value": hexstr(len(prims))})
        for x in s.updates:
            self.action_stmt(x, env, prims, end_jumps)
        prims.append(self.prim("_jump", [{"type": "hexstr", "value": hexstr(top)}], s.loc))
        for at in (top, *breaks):
            prims[at]["parameters"].append({"type": "hexstr", "value": hexstr(len(prims))})

    def _var_by_unique(self, unique: str, t: ir.Type | None) -> VarEntity:
        return VarEntity(unique, t or ir.Bits(32), unique)  # type: ignore[arg-type]

    def prim(self, op: str, params: list[dict[str, Any]], loc: Location | None
             ) -> dict[str, Any]:
        p: dict[str, Any] = {"op": op, "parameters": params}
        if (si := _source_info(loc)):
            p["source_info"] = si
        return p

    def lvalue_param(self, e: ir.Expr, env: _Env) -> dict[str, Any]:
        kind, v = self.path(e, env)
        if kind == "field":
            return {"type": "field", "value": v}
        if kind == "header":
            return {"type": "header", "value": v}
        if kind == "param" and v[0] == "json":
            return v[1]
        raise Unsupported(e.loc, "cannot assign to this expression on bmv2")  # type: ignore

    def assign(self, s: ir.Assign, env: _Env, prims: list[dict[str, Any]]) -> None:
        lhs, rhs = s.lhs, s.rhs
        lt = ir.unwrap(lhs.type)  # type: ignore[arg-type]
        if isinstance(lhs, ir.Slice):
            self.assign_slice(lhs, rhs, env, prims, s.loc)
            return
        if isinstance(rhs, ir.Call) and rhs.target and rhs.target[0] == "method":
            _, ext, method, _proto = rhs.target
            if ext == "register" and method == "read":
                inst = self.instance_of(rhs)
                idx = rhs.args[0].value
                assert idx is not None
                prims.append(self.prim("register_read", [
                    self.lvalue_param(lhs, env),
                    {"type": "register_array", "value": inst.qualified},
                    self.operand(idx, env)], s.loc))
                return
            raise Unsupported(s.loc, f"{ext}.{method}() cannot be used in an expression on "
                              "bmv2")
        if isinstance(lt, ir.StructLike) and lt.kind == "header":
            dst = self.header_name(lhs, env)
            if isinstance(rhs, ir.InvalidHeader):
                prims.append(self.prim("remove_header", [{"type": "header", "value": dst}],
                                       s.loc))
                return
            if isinstance(rhs, (ir.StructExpr, ir.ListExpr)):
                # a struct expression's fields by name, in any order (8.13)
                values = [dict(rhs.fields)[f.name] for f in lt.fields] \
                    if isinstance(rhs, ir.StructExpr) else list(rhs.items)
                staged = self.stage_reads_of(lhs, lt, values, env, prims)
                prims.append(self.prim("add_header", [{"type": "header", "value": dst}], s.loc))
                self.assign_fields(lhs, lt, staged, env, prims, s.loc)
                return
            kind, src = self.path(rhs, env)
            if kind in ("stack_last", "stack_next") and self.block is not None \
                    and self.block.kind == "parser":
                # `x = s.last;`: a header-valued expression, nested as p4c writes it
                source = expr_param(self.stack_element(src, kind[len("stack_"):])["value"])
            else:
                source = {"type": "header", "value": self.header_name(rhs, env)}
            prims.append(self.prim("assign_header", [
                {"type": "header", "value": dst}, source], s.loc))
            return
        if isinstance(lt, ir.StructLike) and lt.kind == "header_union":
            # member by member, as p4c's CopyStructures writes it: bmv2's assign_union
            # copies values of fields no other primitive reads as 0 (their arithmetic
            # is never enabled)
            for f in lt.fields:
                self.assign(ir.Assign(ir.Member(lhs, f.name, s.loc, f.type),
                                      ir.Member(rhs, f.name, s.loc, f.type), s.loc), env, prims)
            return
        if isinstance(lt, ir.Stack) and isinstance(ir.unwrap(lt.elem), ir.StructLike) \
                and ir.unwrap(lt.elem).kind == "header_union":  # type: ignore[union-attr]
            for i in range(lt.size):
                idx = ir.Lit(i, s.loc, ir.Bits(32))
                self.assign(ir.Assign(ir.Index(lhs, idx, s.loc, lt.elem),
                                      ir.Index(rhs, idx, s.loc, lt.elem), s.loc), env, prims)
            return
        if isinstance(lt, ir.TupleT):  # a tuple-typed struct field: the struct it is laid out as
            st = tuple_struct(lt)
            rhs = ir.StructExpr(tuple(zip((f.name for f in st.fields), rhs.items,
                                          strict=True)), rhs.loc, st) \
                if isinstance(rhs, ir.ListExpr) else dataclasses.replace(rhs, type=st)
            self.assign(ir.Assign(dataclasses.replace(lhs, type=st), rhs, s.loc), env, prims)
            return
        if isinstance(lt, ir.StructLike):
            if isinstance(rhs, ir.StructExpr):
                values = [dict(rhs.fields)[f.name] for f in lt.fields]
                staged = self.stage_reads_of(lhs, lt, values, env, prims)
                self.assign_fields(lhs, lt, staged, env, prims, s.loc)
                return
            for f in lt.fields:
                self.assign(ir.Assign(ir.Member(lhs, f.name, s.loc, f.type),
                                      ir.Member(rhs, f.name, s.loc, f.type), s.loc), env, prims)
            return
        if isinstance(lt, ir.Stack):
            prims.append(self.prim("assign_header_stack", [
                {"type": "header_stack", "value": self.path(lhs, env)[1]},
                {"type": "header_stack", "value": self.path(rhs, env)[1]}], s.loc))
            return
        op = "assign_VL" if isinstance(lt, ir.Varbit) else "assign"  # the width moves too
        prims.append(self.prim(op, [self.lvalue_param(lhs, env),
                                    self.operand(rhs, env)], s.loc))

    def stage_reads_of(self, lhs: ir.Expr, lt: ir.StructLike, values: list[ir.Expr],
                       env: _Env, prims: list[dict[str, Any]]) -> list[ir.Expr | list[str]]:
        """`x = {a = x.b, b = x.a}` assigns field by field, so a component that reads
        what an earlier field assignment writes is first copied into a temporary: the
        whole value is evaluated before the assignment (P4_16 11.1). A staged
        component is returned as its temporary's field reference."""
        out: list[ir.Expr | list[str]] = []
        for f, x in zip(lt.fields, values, strict=True):
            ft = ir.unwrap(f.type)
            if isinstance(ft, ir.Bits) and _reads_overlapping(x, lhs):
                tmp = self.temp(ft, "tmp")
                prims.append(self.prim("assign", [{"type": "field", "value": tmp},
                                                  self.operand(x, env)], x.loc))
                out.append(tmp)
            elif isinstance(ft, ir.StructLike) and ft.kind == "header" \
                    and _reads_overlapping(x, lhs):  # `h = {a = h.b, b = h.a}`, a header swap
                tmp_h = self.unique_name("tmp_hdr")
                self.add_header(tmp_h, self.add_header_type(ft), False)
                prims.append(self.prim("assign_header", [
                    {"type": "header", "value": tmp_h},
                    {"type": "header", "value": self.header_name(x, env)}], x.loc))
                out.append(ir.Name(tmp_h, x.loc, ft, self._var_by_unique(tmp_h, ft)))
            else:
                out.append(x)
        return out

    def assign_fields(self, lhs: ir.Expr, lt: ir.StructLike,
                      values: list[ir.Expr | list[str]], env: _Env,
                      prims: list[dict[str, Any]], loc: Location | None) -> None:
        for f, x in zip(lt.fields, values, strict=True):
            member = ir.Member(lhs, f.name, loc, f.type)
            if isinstance(x, list):  # a staged temporary
                prims.append(self.prim("assign", [self.lvalue_param(member, env),
                                                  {"type": "field", "value": x}], loc))
            else:
                self.assign(ir.Assign(member, x, loc), env, prims)

    def assign_slice(self, lhs: ir.Slice, rhs: ir.Expr, env: _Env,
                     prims: list[dict[str, Any]], loc: Location,
                     dest: dict[str, Any] | None = None) -> None:
        """`x[hi:lo] = rhs` as `x = (x & keep) | ((rhs << lo) & field)`, for `int<W>`
        under `two_comp_mod` (as p4c's RemoveLeftSlices on a signed type); `dest` is
        where the result goes when `x` is not a plain field (`s.next.f` in a parser)."""
        base = lhs.expr
        w = _width(base.type)
        hi, lo = lhs.hi.value, lhs.lo.value  # type: ignore[attr-defined]
        field_mask = mask(hi - lo + 1) << lo
        keep = mask(w) & ~field_mask
        old = {"type": "expression", "value": {
            "op": "&", "left": self.tree(base, env),
            "right": {"type": "hexstr", "value": hexstr(keep, w)}}}
        new = {"type": "expression", "value": {
            "op": "&", "left": {"type": "expression", "value": {
                "op": "<<", "left": self.tree(rhs, env),
                "right": {"type": "hexstr", "value": hexstr(lo)}}},
            "right": {"type": "hexstr", "value": hexstr(field_mask, w)}}}
        value = {"type": "expression", "value": {"op": "|", "left": old, "right": new}}
        if ir.unwrap(base.type).signed:  # type: ignore[arg-type, union-attr]
            # bmv2 keeps a signed field's value as written when it fits the field's
            # bits unsigned (0x9234 stays positive); reads would then not be negative
            value = self.wrap_arith(value, base.type)
        prims.append(self.prim("assign", [
            dest if dest is not None else self.lvalue_param(base, env),
            expr_param(value["value"])], loc))

    def instance_of(self, call: ir.Call) -> InstanceEntity:
        callee = call.callee
        assert isinstance(callee, ir.Member) and isinstance(callee.expr, ir.Name)
        inst = callee.expr.ref
        assert isinstance(inst, InstanceEntity)
        return inst

    def call_primitive(self, call: ir.Call, env: _Env, prims: list[dict[str, Any]]) -> None:
        tgt = call.target
        kind = tgt[0]
        loc = call.loc
        args = [a.value for a in call.args]
        if kind == "action":
            a: ActionEntity = tgt[1]
            inner = _Env(dict(env.params))
            for p, arg in zip(a.params, args, strict=True):
                assert arg is not None
                inner.bind(p, ("expr", arg, env))
            self.action_body(a.body.stmts, inner, prims)
            return
        if kind == "builtin":
            m = tgt[1]
            callee = call.callee
            assert isinstance(callee, ir.Member)
            if m in ("setValid", "setInvalid"):
                prims.append(self.prim("add_header" if m == "setValid" else "remove_header",
                                       [{"type": "header",
                                         "value": self.header_name(callee.expr, env)}], loc))
                return
            if m in ("push_front", "pop_front"):
                n = args[0]
                assert isinstance(n, ir.Lit)
                st = ir.unwrap(callee.expr.type)  # type: ignore[arg-type]
                union = isinstance(st, ir.Stack) and isinstance(ir.unwrap(st.elem), ir.StructLike) \
                    and ir.unwrap(st.elem).kind == "header_union"  # type: ignore[union-attr]
                prims.append(self.prim("push" if m == "push_front" else "pop", [
                    {"type": "header_union_stack" if union else "header_stack",
                     "value": self.path(callee.expr, env)[1]},
                    {"type": "hexstr", "value": hexstr(n.value)}], loc))
                return
            if m == "isValid":
                return
        if kind == "method":
            _, ext, method, _proto = tgt
            inst = self.instance_of(call)
            q = inst.qualified
            if ext == "counter" and method == "count":
                prims.append(self.prim("count", [{"type": "counter_array", "value": q},
                                                 self.operand(args[0], env)], loc))  # type: ignore
                return
            if ext == "direct_counter" and method == "count":
                return
            if ext == "meter" and method == "execute_meter":
                prims.append(self.prim("execute_meter", [
                    {"type": "meter_array", "value": q}, self.operand(args[0], env),  # type: ignore
                    self.lvalue_param(args[1], env)], loc))  # type: ignore[arg-type]
                return
            if ext == "direct_meter" and method == "read":
                self.direct_meter_targets[q] = self.lvalue_param(args[0], env)["value"]  # type: ignore
                return
            if ext == "register" and method == "read":
                prims.append(self.prim("register_read", [
                    self.lvalue_param(args[0], env),  # type: ignore[arg-type]
                    {"type": "register_array", "value": q},
                    self.operand(args[1], env)], loc))  # type: ignore[arg-type]
                return
            if ext == "register" and method == "write":
                prims.append(self.prim("register_write", [
                    {"type": "register_array", "value": q},
                    self.operand(args[0], env), self.operand(args[1], env)], loc))  # type: ignore
                return
            raise Unsupported(loc, f"{ext}.{method}() is not supported here on bmv2")
        if kind == "extern_function":
            self.extern_function(tgt[1], call, args, env, prims)
            return
        if kind == "function":
            raise Unsupported(loc, "calling a function as a statement is not supported")
        if kind == "apply":
            raise Unsupported(loc, "tables cannot be applied inside actions")
        raise Unsupported(loc, "unsupported call")


def to_json(program: TypedProgram, program_name: str, diags: Diagnostics | None = None
            ) -> dict[str, Any]:
    backend = Bmv2Backend(program, program_name, diags)
    result = backend.build()
    rejects = getattr(backend, "_reject_states", {})
    if rejects:
        states = result["parsers"][0]["parse_states"]
        for st in rejects.values():
            st["id"] = len(states)
            states.append(st)
    return result



def _reads_overlapping(e: Any, target: ir.Expr) -> bool:
    """Whether `e` reads storage that overlaps `target` (a path that contains it or
    lies inside it); an index expression is a read of its own."""
    if isinstance(e, ir.Index):
        if _reads_overlapping(e.index, target):
            return True
    if isinstance(e, (ir.Name, ir.Member, ir.Index)) and isinstance(_lvalue_root(e), ir.Name):
        return _overlaps(e, target)
    return any(_reads_overlapping(c, target) for c in _children(e))
