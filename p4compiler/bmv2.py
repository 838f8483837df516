"""bmv2 back end: typed IR -> bmv2 JSON (behavioral-model docs/JSON_format.md).

Follows the conventions of p4c's bmv2 back end so that the JSON reads like
p4c's: `scalars` for metadata and locals, `userMetadata.` field prefixes,
control-local names (`MyIngress.ipv4_lpm`), hidden `tbl_*` tables for code in
apply blocks, `&` masks for wrap-around arithmetic, `_jump_if_zero` for ifs
inside actions, and `__meta__` version [2, 23].
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import ir
from .errors import CompileError, Diagnostics, Location, Unsupported
from .typecheck import (
    ActionEntity,
    InstanceEntity,
    ParamEntity,
    TableEntity,
    TypedActionRef,
    TypedBlock,
    TypedProgram,
    ValueSetEntity,
    VarEntity,
)

JSON_VERSION = [2, 23]
COMPILER = "fabriclab-p4c (embedded P4 compiler, p4c bmv2 back end conventions)"

HASH_ALGOS = {
    "crc32": "crc32", "crc32_custom": "crc32_custom", "crc16": "crc16",
    "crc16_custom": "crc16_custom", "random": "random", "identity": "identity",
    "csum16": "csum16", "xor16": "xor16",
}
PIPELINE_NAMES = {"ig": "ingress", "eg": "egress"}


def hexstr(value: int, width: int | None = None) -> str:
    """p4c's hex rendering: zero-padded to whole bytes when the width is known."""
    if value < 0:
        return "-" + hexstr(-value, width)
    if width is None:
        return hex(value)
    digits = max(1, (width + 7) // 8) * 2
    return "0x" + format(value, f"0{digits}x")


def expr_param(op: dict[str, Any]) -> dict[str, Any]:
    """An expression as a primitive's or parser op's parameter: bmv2 reads the parameter's
    `value` as an expression node, so the operator sits one level further down (p4c's
    shape: {"type": "expression", "value": {"type": "expression", "value": {op...}}})."""
    return {"type": "expression", "value": {"type": "expression", "value": op}}


def mask(width: int) -> int:
    return (1 << width) - 1


def _width(t: ir.Type | None) -> int:
    t = ir.unwrap(t) if t is not None else None
    if t is None:
        return 32
    w = t.width()
    return 32 if w is None else w


def _source_info(loc: Location | None, fragment: str | None = None) -> dict[str, Any] | None:
    if loc is None or loc.line == 0:
        return None
    si: dict[str, Any] = {"filename": loc.file, "line": loc.line, "column": loc.col}
    if fragment:
        si["source_fragment"] = fragment
    return si


@dataclass
class _Env:
    """How action parameters are bound while converting an action body."""

    params: dict[int, Any] = field(default_factory=dict)  # id(ParamEntity) -> binding

    def bind(self, p: ParamEntity, value: Any) -> None:
        self.params[id(p)] = value

    def get(self, p: ParamEntity) -> Any:
        return self.params.get(id(p))


@dataclass
class _Node:
    """A node of a pipeline's control graph: a table or a conditional."""

    name: str
    kind: str                           # table | conditional
    json: dict[str, Any]
    successors: list[str | None] = field(default_factory=list)


class Bmv2Backend:
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
            "header_union_stacks": [],
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
        for f in _flat_fields(t):
            ft = ir.unwrap(f.type)
            if isinstance(ft, ir.Varbit):
                fields.append([f.name, "*"])
                max_length = (t.width() or 0) // 8
            elif isinstance(ft, ir.Bits):
                fields.append([f.name, ft.bits, ft.signed])
            elif isinstance(ft, ir.Bool):
                fields.append([f.name, 1, False])
            elif isinstance(ft, (ir.Enum, ir.ErrorT)):
                fields.append([f.name, _width(ft), False])
            else:
                raise Unsupported(None, f"{t.name}.{f.name}: field of type {f.type} is not "
                                  "supported in a header on bmv2")
        if t.kind != "header":
            total = sum(x[1] for x in fields if isinstance(x[1], int))
            if total % 8:
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
            elif isinstance(ft, ir.Stack):
                self.layout_stack(ft, name)
            elif metadata or not prefix:
                if not metadata:
                    raise Unsupported(None, f"{t.name}.{f.name}: the headers struct may only "
                                      "contain headers, header stacks, unions and structs")
                self.add_scalar(name, f.type)
            else:
                self.add_scalar(name, f.type)

    def layout_stack(self, t: ir.Stack, name: str) -> None:
        elem = ir.unwrap(t.elem)
        if not (isinstance(elem, ir.StructLike) and elem.kind == "header"):
            raise Unsupported(None, f"{name}: only stacks of headers are supported")
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
        elif isinstance(t, ir.Stack):
            self.layout_stack(t, v.unique)
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
                t = ir.unwrap(ref.type)
                if isinstance(t, ir.StructLike) and t.kind == "header":
                    return ("header", ref.unique)
                if isinstance(t, ir.StructLike):
                    return ("scalar_struct", ref.unique)
                if isinstance(t, ir.Stack):
                    return ("stack", ref.unique)
                return ("field", ["scalars", ref.unique])
            raise Unsupported(e.loc, f"{e.name} cannot be used as a value here")
        if isinstance(e, ir.Member):
            kind, base = self.path(e.expr, env)
            bt = ir.unwrap(e.expr.type)  # type: ignore[arg-type]
            if kind == "struct":
                name = f"{base}.{e.member}" if base else e.member
                t = ir.unwrap(e.type)  # type: ignore[arg-type]
                if isinstance(t, ir.Stack):
                    return ("stack", name)
                if isinstance(t, ir.StructLike) and t.kind == "header_union":
                    return ("union", name)
                if isinstance(t, ir.StructLike) and t.kind == "header":
                    return ("header", name)
                return ("struct", name)
            if kind == "scalar_struct":
                name = f"{base}.{e.member}"
                t = ir.unwrap(e.type)  # type: ignore[arg-type]
                if isinstance(t, ir.StructLike) and t.kind == "header":
                    return ("header", name)
                if isinstance(t, ir.StructLike):
                    return ("scalar_struct", name)
                if isinstance(t, ir.Stack):
                    return ("stack", name)
                return ("field", ["scalars", name])
            if kind in ("header", "header_struct"):
                hdr, prefix = (base, "") if kind == "header" else base
                name = f"{prefix}_{e.member}" if prefix else e.member
                if isinstance(ir.unwrap(e.type), ir.StructLike):  # type: ignore[arg-type]
                    return ("header_struct", (hdr, name))
                return ("field", [hdr, name])
            if kind == "union":
                return ("header", f"{base}.{e.member}")
            if kind == "stack" and isinstance(bt, ir.Stack):
                if e.member == "last":
                    return ("stack_last", base)
                if e.member == "next":
                    return ("stack_next", base)
            if kind == "stack_last":
                return ("stack_field", [base, e.member])
            if kind == "stack_expr":
                raise Unsupported(e.loc, "fields of header stack elements with a run-time "
                                  "index are not supported")
            raise Unsupported(e.loc, f"cannot access .{e.member} here")
        if isinstance(e, ir.Index):
            kind, base = self.path(e.expr, env)
            if kind != "stack":
                raise Unsupported(e.loc, "only header stacks can be indexed")
            if isinstance(e.index, ir.Lit):
                return ("header", f"{base}[{e.index.value}]")
            return ("stack_expr", (base, e.index))
        raise Unsupported(getattr(e, "loc", None), "expected a field or header reference")

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

    def operand(self, e: ir.Expr, env: _Env) -> dict[str, Any]:
        """An expression operand in data (non-boolean) context, as a primitive parameter."""
        e, env = self.through_params(e, env)
        leaf = self.leaf(e, env, True)
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
        if t.get("type") == "expression":
            return t
        return {"type": "expression", "value": {"op": "d2b", "left": None, "right": t}} \
            if t.get("type") == "field" else {"type": "expression", "value": t}

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
            if leaf["type"] == "field" and self.is_bool(e):
                return {"type": "expression", "value": {"op": "d2b", "left": None,
                                                        "right": leaf}}
            return leaf
        X = self.tree

        def ex(op: str, left: Any, right: Any) -> dict[str, Any]:
            return {"type": "expression", "value": {"op": op, "left": left, "right": right}}

        if isinstance(e, ir.Unary):
            if e.op == "!":
                return ex("not", None, self.bool_tree(e.expr, env))
            if e.op == "~":
                return self.wrap_arith(ex("~", None, X(e.expr, env)), e.type)
            if e.op == "-":
                zero = {"type": "hexstr", "value": hexstr(0, _width(e.type))}
                return self.wrap_arith(ex("-", zero, X(e.expr, env)), e.type)
        if isinstance(e, ir.Binary):
            op = e.op
            if op in ("&&", "||"):
                return ex("and" if op == "&&" else "or", self.bool_tree(e.left, env),
                          self.bool_tree(e.right, env))
            if op in ("==", "!=") and isinstance(ir.unwrap(e.left.type), (ir.StructLike,
                                                                          ir.Stack)):
                eq = self.aggregate_eq(e.left, e.right, env, e.loc)
                return eq if op == "==" else ex("not", None, eq)
            if op in ("==", "!="):
                if self.is_bool(e.left):
                    return ex(op, self.bool_tree(e.left, env), self.bool_tree(e.right, env))
                return ex(op, X(e.left, env), X(e.right, env))
            if op in ("<", ">", "<=", ">="):
                return ex(op, X(e.left, env), X(e.right, env))
            if op in ("&", "|", "^"):
                return ex(op, X(e.left, env), X(e.right, env))
            if op == "-" and isinstance(e.right, ir.Lit) and isinstance(e.type, ir.Bits) \
                    and not e.type.signed:
                # p4c rewrites `a - c` as `a + (2^W - c)` before masking.
                neg = (-e.right.value) & mask(e.type.bits)
                return self.wrap_arith(ex("+", X(e.left, env),
                                          {"type": "hexstr",
                                           "value": hexstr(neg, e.type.bits)}), e.type)
            if op in ("+", "-", "*", "<<"):
                return self.wrap_arith(ex(op, X(e.left, env), X(e.right, env)), e.type)
            if op in (">>", "/", "%"):
                return ex(op, X(e.left, env), X(e.right, env))
            if op in ("|+|", "|-|"):
                t = ir.unwrap(e.type)  # type: ignore[arg-type]
                assert isinstance(t, ir.Bits)
                inner = ex("+" if op == "|+|" else "-", X(e.left, env), X(e.right, env))
                return ex("sat_cast" if t.signed else "usat_cast", inner,
                          {"type": "hexstr", "value": hexstr(t.bits)})
            if op == "++":
                rw = _width(e.right.type)
                shifted = ex("<<", X(e.left, env), {"type": "hexstr", "value": hexstr(rw)})
                return self.wrap_arith(ex("|", shifted, X(e.right, env)), e.type)
        if isinstance(e, ir.Cast):
            src = ir.unwrap(e.expr.type)  # type: ignore[arg-type]
            dst = ir.unwrap(e.type)  # type: ignore[arg-type]
            if isinstance(dst, ir.Bool):
                return ex("d2b", None, X(e.expr, env))
            if isinstance(src, ir.Bool):
                return ex("b2d", None, self.bool_tree(e.expr, env))
            if isinstance(dst, ir.Bits):
                inner = X(e.expr, env)
                if dst.signed or (isinstance(src, ir.Bits) and src.signed):
                    return ex("two_comp_mod", inner, {"type": "hexstr", "value": hexstr(dst.bits)})
                return ex("&", inner, {"type": "hexstr", "value": hexstr(mask(dst.bits),
                                                                         dst.bits)})
            return X(e.expr, env)
        if isinstance(e, ir.Slice):
            lo = e.lo.value  # type: ignore[attr-defined]
            w = _width(e.type)
            inner = X(e.expr, env)
            if lo:
                inner = ex(">>", inner, {"type": "hexstr", "value": hexstr(lo)})
            return ex("&", inner, {"type": "hexstr", "value": hexstr(mask(w), w)})
        if isinstance(e, ir.Mux):
            return {"type": "expression", "value": {
                "op": "?", "left": X(e.then, env), "right": X(e.other, env),
                "cond": self.bool_tree(e.cond, env)}}
        if isinstance(e, ir.Call):
            tgt = e.target
            if tgt and tgt[0] == "builtin" and tgt[1] == "isValid":
                callee = e.callee
                assert isinstance(callee, ir.Member)
                kind, v = self.path(callee.expr, env)
                if kind == "union":
                    return ex("valid_union", None, {"type": "header_union", "value": v})
                if kind != "header":
                    raise Unsupported(e.loc, "isValid() of this expression is not supported")
                return ex("d2b", None, {"type": "field", "value": [v, "$valid$"]})
            if tgt and tgt[0] == "function":
                return X(self.inline_function(e, env), env)
            raise Unsupported(e.loc, "this call cannot be used inside an expression on bmv2; "
                              "assign its result to a variable first")
        if isinstance(e, ir.Member) and isinstance(ir.unwrap(e.expr.type), ir.Stack):
            kind, v = self.path(e.expr, env)
            st = ir.unwrap(e.expr.type)
            assert isinstance(st, ir.Stack)
            if e.member == "size":
                return {"type": "hexstr", "value": hexstr(st.size, 32)}
            if e.member == "lastIndex":
                return ex("-", ex("last_stack_index", None, {"type": "header_stack",
                                                              "value": v}),
                          {"type": "hexstr", "value": "0x0"})
        raise Unsupported(getattr(e, "loc", None), f"expression {type(e).__name__} is not "
                          "supported on bmv2")

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

        (ka, a), (kb, b) = self.path(left, env), self.path(right, env)
        t = ir.unwrap(left.type)  # type: ignore[arg-type]
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
                          "headers, header unions and header stacks as a whole)")

    def inline_function(self, call: ir.Call, env: _Env) -> ir.Expr:
        _, name, body, proto = call.target
        stmts = [s for s in body.stmts if not isinstance(s, ir.Empty)]
        if len(stmts) != 1 or not isinstance(stmts[0], ir.Return) or stmts[0].value is None:
            raise Unsupported(call.loc, f"{name}: only functions whose body is a single "
                              "`return expression;` are supported")
        subst = {p.name: a.value for p, a in zip(proto.params, call.args, strict=True)}
        return _substitute(stmts[0].value, subst)

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

    def parser_stmt(self, s: ir.Stmt, ops: list[dict[str, Any]]) -> None:
        env = _Env()
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
            rhs = s.rhs
            look = _lookahead_slice(rhs)
            if look is not None and not isinstance(ir.unwrap(rhs.type), ir.StructLike):
                ops.append({"op": "set", "parameters": [
                    self.lvalue_param(s.lhs, env),
                    {"type": "lookahead", "value": list(look)}]})
                return
            if isinstance(ir.unwrap(s.lhs.type), ir.StructLike):  # type: ignore[arg-type]
                prims: list[dict[str, Any]] = []
                self.assign(s, env, prims)
                ops.extend({"op": "primitive", "parameters": [p]} for p in prims)
                return
            src = self.operand(rhs, env)
            if src["type"] not in ("field", "hexstr", "lookahead", "expression"):
                # bmv2's parser `set` reads only these sources; others go through an
                # expression node (e.g. a stack's `.last` field).
                src = {"type": "expression", "value": src}
            ops.append({"op": "set", "parameters": [self.lvalue_param(s.lhs, env), src]})
            return
        if isinstance(s, ir.CallStmt):
            call = s.call
            tgt = call.target
            if tgt[0] == "method" and tgt[1] == "packet_in":
                m = tgt[2]
                if m == "extract":
                    arg = call.args[0].value
                    assert arg is not None
                    kind, v = self.path(arg, env)
                    if kind == "stack_next":
                        p = {"type": "stack", "value": v}
                    elif kind == "header":
                        p = {"type": "regular", "value": v}
                    else:
                        raise Unsupported(call.loc, "extract needs a header or stack.next")
                    if len(call.args) == 2:
                        ln = call.args[1].value
                        assert ln is not None
                        ops.append({"op": "extract_VL", "parameters": [
                            p, expr_param(self.data_expr(ln, env))]})
                    else:
                        ops.append({"op": "extract", "parameters": [p]})
                    return
                if m == "advance":
                    n = call.args[0].value
                    assert n is not None
                    ops.append({"op": "advance", "parameters": [self.operand(n, env)]})
                    return
                if m == "lookahead":
                    return
            if tgt[0] == "extern_function" and tgt[1] == "verify":
                cond, err = (a.value for a in call.args)
                ops.append({"op": "verify", "parameters": [
                    self.cond_expr(cond, env), self.operand(err, env)]})  # type: ignore[arg-type]
                return
            prims = []
            self.call_primitive(call, env, prims)
            ops.extend({"op": "primitive", "parameters": [p]} for p in prims)
            return
        raise Unsupported(getattr(s, "loc", None), f"{type(s).__name__} statements in parser "
                          "states are not supported on bmv2")

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
        key: list[Any] = []
        widths: list[int] = []
        for k in t.select:
            widths.append(_width(k.type))
            look = _lookahead_slice(k)
            if look is not None:
                key.append({"type": "lookahead", "value": list(look)})
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
        # No default: bmv2 itself ends parsing with error.NoMatch when nothing matches.
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
        return key, transitions

    def reject_state_name(self) -> str | None:
        """bmv2 has no reject state; v1model continues to ingress with the parser error
        set. Model reject as a state that fails `verify(false, error.NoMatch)`."""
        name = "reject"
        if not hasattr(self, "_reject_states"):
            self._reject_states: dict[str, dict[str, Any]] = {}
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
                v, m = _const(k.value, loc), _const(k.mask, loc)
                opts = [(v & m, m)]
                masked = True
            elif isinstance(k, ir.RangeKey):
                opts = _range_to_masks(_const(k.lo, loc), _const(k.hi, loc), w)
                masked = True
            else:
                opts = [(_const(k, loc) & full, full)]
            alternatives = [a + [o] for a in alternatives for o in opts]
        out = []
        for alt in alternatives:
            value = "0x" + "".join(format(v, f"0{((w + 7) // 8) * 2}x")
                                   for (v, _), w in zip(alt, widths, strict=True))
            msk = "0x" + "".join(format(m, f"0{((w + 7) // 8) * 2}x")
                                 for (_, m), w in zip(alt, widths, strict=True))
            out.append((value, msk if masked else None))
        return out

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
            order.extend(f"{v}[{i}]" for i in range(t.size))
        elif kind == "union":
            assert isinstance(t, ir.StructLike)
            order.extend(f"{v}.{f.name}" for f in t.fields)
        elif kind in ("struct", "scalar_struct"):
            assert isinstance(t, ir.StructLike)
            for f in t.fields:
                self.emit_order(ir.Member(e, f.name, e.loc, f.type), env,  # type: ignore
                                order)
        else:
            raise Unsupported(e.loc, "emit() needs a header, stack, union or struct")  # type: ignore

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

    def field_list_elements(self, data: ir.Expr, env: _Env, with_constants: bool
                            ) -> list[dict[str, Any]]:
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
            if isinstance(t, ir.StructLike):
                for f in t.fields:
                    out.extend(self.field_list_elements(
                        ir.Member(x, f.name, x.loc, f.type), env, with_constants))  # type: ignore
                continue
            leaf = self.leaf(x, env, True)
            if leaf is not None and leaf["type"] == "field":
                out.append(leaf)
            elif isinstance(x, ir.Lit) and with_constants:
                out.append({"type": "hexstr", "value": hexstr(x.value, _width(x.type)),
                            "bitwidth": _width(x.type)})
            else:
                out.append({"type": "expression", "value": self.data_expr(x, env)})
        return out

    # ------------------------------------------------------------ extern instances

    def convert_instances(self) -> None:
        bindings: dict[str, TableEntity] = {}
        for b in self.p.blocks.values():
            for t in b.tables:
                for inst in (t.counters, t.meters):
                    if inst is not None:
                        bindings[inst.qualified] = t
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
                if t is None:
                    self.diags.warn(inst.decl.loc, f"{q}: direct meter not used by any table")
                    continue
                target = self.direct_meter_targets.get(q)
                if target is None:
                    raise CompileError(inst.decl.loc, f"{q}: direct meter is never read() "
                                       "in an action of its table")
                self.meter_arrays.append({"name": q, "id": len(self.meter_arrays), **extra,
                                          "is_direct": True, "size": t.size or 1024,
                                          "rate_count": 2, "type": inst.args[0],
                                          "binding": t.qualified, "result_target": target})

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
        else:
            raise Unsupported(getattr(s, "loc", None), f"{type(s).__name__} is not supported "
                              "inside actions on bmv2")

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
                prims.append(self.prim("add_header", [{"type": "header", "value": dst}], s.loc))
                values = [x for _, x in rhs.fields] if isinstance(rhs, ir.StructExpr) \
                    else list(rhs.items)
                for f, x in zip(lt.fields, values, strict=True):
                    self.assign(ir.Assign(ir.Member(lhs, f.name, s.loc, f.type), x, s.loc),
                                env, prims)
                return
            prims.append(self.prim("assign_header", [
                {"type": "header", "value": dst},
                {"type": "header", "value": self.header_name(rhs, env)}], s.loc))
            return
        if isinstance(lt, ir.StructLike) and lt.kind == "header_union":
            kl, vl = self.path(lhs, env)
            kr, vr = self.path(rhs, env)
            prims.append(self.prim("assign_union", [{"type": "header_union", "value": vl},
                                                    {"type": "header_union", "value": vr}],
                                   s.loc))
            return
        if isinstance(lt, ir.StructLike):
            if isinstance(rhs, ir.StructExpr):
                values = dict(rhs.fields)
                for f in lt.fields:
                    self.assign(ir.Assign(ir.Member(lhs, f.name, s.loc, f.type),
                                          values[f.name], s.loc), env, prims)
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
        prims.append(self.prim("assign", [self.lvalue_param(lhs, env),
                                          self.operand(rhs, env)], s.loc))

    def assign_slice(self, lhs: ir.Slice, rhs: ir.Expr, env: _Env,
                     prims: list[dict[str, Any]], loc: Location) -> None:
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
        prims.append(self.prim("assign", [
            self.lvalue_param(base, env),
            expr_param({"op": "|", "left": old, "right": new})], loc))

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
                prims.append(self.prim("push" if m == "push_front" else "pop", [
                    {"type": "header_stack", "value": self.path(callee.expr, env)[1]},
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

    def extern_function(self, name: str, call: ir.Call, args: list[ir.Expr | None], env: _Env,
                        prims: list[dict[str, Any]]) -> None:
        loc = call.loc
        op = self.operand
        if name == "mark_to_drop":
            if args:
                prims.append(self.prim("mark_to_drop", [
                    {"type": "header", "value": "standard_metadata"}], loc))
            else:
                prims.append(self.prim("drop", [], loc))
        elif name == "hash":
            result, algo, base, data, mx = args
            assert result and algo and base and data and mx
            calc = self.add_calculation(self.algo_name(algo),
                                        self.field_list_elements(data, env, True), loc)
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
            lid = self.add_learn_list(data, env)
            prims.append(self.prim("generate_digest", [op(receiver, env),
                                                       {"type": "hexstr",
                                                        "value": hexstr(lid)}], loc))
        elif name in ("clone", "clone3", "clone_preserving_field_list"):
            ctype, session = args[0], args[1]
            assert isinstance(ctype, ir.Member) and session is not None
            if name == "clone":  # no metadata preserved: an empty list, as p4c emits
                fl = self.field_list_ids.get("empty") or \
                    self.new_field_list("empty", "empty", [])
            elif name == "clone3":
                fl = self.add_field_list_from(args[2], env)  # type: ignore[arg-type]
            elif name == "clone_preserving_field_list":
                fl = self.field_list_by_index(args[2], loc)  # type: ignore[arg-type]
            prim = "clone_ingress_pkt_to_egress" if ctype.member == "I2E" \
                else "clone_egress_pkt_to_egress"
            prims.append(self.prim(prim, [op(session, env),
                                          {"type": "hexstr", "value": hexstr(fl)}], loc))
        elif name in ("resubmit", "recirculate", "resubmit_preserving_field_list",
                      "recirculate_preserving_field_list"):
            if name.endswith("_preserving_field_list"):
                fl = self.field_list_by_index(args[0], loc)  # type: ignore[arg-type]
            else:
                fl = self.add_field_list_from(args[0], env)  # type: ignore[arg-type]
            prims.append(self.prim(name.split("_")[0], [{"type": "hexstr",
                                                         "value": hexstr(fl)}], loc))
        elif name == "truncate":
            prims.append(self.prim("truncate", [op(args[0], env)], loc))  # type: ignore
        elif name in ("assert", "assume"):
            prims.append(self.prim(name, [self.cond_expr(args[0], env)], loc))  # type: ignore
        elif name == "log_msg":
            msg = args[0]
            assert isinstance(msg, ir.StrLit)
            values: list[dict[str, Any]] = []
            if len(args) > 1:
                data = args[1]
                assert data is not None
                items = list(data.items) if isinstance(data, ir.ListExpr) else \
                    [x for _, x in data.fields] if isinstance(data, ir.StructExpr) else [data]
                values = [op(x, env) for x in items]
            prims.append(self.prim("log_msg", [{"type": "string", "value": msg.value},
                                               {"type": "parameters_vector",
                                                "value": values}], loc))
        elif name in ("verify_checksum", "update_checksum", "verify_checksum_with_payload",
                      "update_checksum_with_payload"):
            raise Unsupported(loc, f"{name} may only be called in the checksum controls")
        elif name == "verify":
            raise Unsupported(loc, "verify() may only be called in a parser")
        else:
            raise Unsupported(loc, f"extern function {name} is not supported on bmv2")

    def field_list_by_index(self, idx: ir.Expr, loc: Location) -> int:
        """clone/resubmit/recirculate_preserving_field_list(N): the metadata fields
        annotated @field_list(N)."""
        n = _const(idx, loc)
        if ("index", n) in self.field_list_ids:
            return self.field_list_ids[("index", n)]
        elements = []
        mt = self.p.metadata_type
        for f in mt.fields if mt else ():
            ann = ir.annotation(f.annotations, "field_list")
            if ann and n in [self.annotation_int(a) for a in ann.args]:
                elements.append({"type": "field", "value": ["scalars", f"userMetadata.{f.name}"]})
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
        return None

    def add_field_list_from(self, data: ir.Expr, env: _Env) -> int:
        elements = self.field_list_elements(data, env, with_constants=False)
        return self.new_field_list(None, f"fl_{len(self.field_lists) + 1}", elements)

    def add_learn_list(self, data: ir.Expr, env: _Env) -> int:
        t = ir.unwrap(data.type)  # type: ignore[arg-type]
        name = t.name if isinstance(t, ir.StructLike) and t.name else \
            f"digest_{len(self.learn_lists)}"
        for ll in self.learn_lists:
            if ll["name"] == name:
                return ll["id"]
        lid = len(self.learn_lists) + 1
        elements = self.field_list_elements(data, env, with_constants=False)
        self.learn_lists.append({"id": lid, "name": name, "elements": elements})
        return lid

    # ------------------------------------------------------------ controls

    def convert_control(self, b: TypedBlock) -> dict[str, Any]:
        self.block = b
        self.nodes: dict[str, _Node] = {}
        self.applied: set[str] = set()
        self.action_ids: dict[str, int] = {}
        used = self.used_actions(b)
        for a in used:
            self.action_ids[self.action_key(a)] = self.convert_action(a)
        self.action_profiles: list[dict[str, Any]] = []
        self.profile_names: set[str] = set()
        assert b.body is not None
        init = self.lower(list(b.body.stmts), None, None)
        init, tables, conds = self.order_nodes(init)
        pipeline: dict[str, Any] = {"name": PIPELINE_NAMES[b.role], "id": 0 if b.role == "ig"
                                    else 1}
        if (si := _source_info(b.loc, b.name)):
            pipeline["source_info"] = si
        pipeline.update({"init_table": init, "tables": tables,
                         "action_profiles": self.action_profiles, "conditionals": conds})
        self.block = None
        return pipeline

    @staticmethod
    def action_key(a: ActionEntity) -> str:
        return f"{id(a)}"

    def used_actions(self, b: TypedBlock) -> list[ActionEntity]:
        """Actions p4c keeps after its mid end: global ones used here (e.g. NoAction) first,
        then the control's own, in declaration order; only those referenced by a table or
        called from the apply block."""
        refs: list[ActionEntity] = []
        for t in b.tables:
            refs.extend(r.action for r in t.actions)
        assert b.body is not None
        for call in _calls(b.body):
            if call.target and call.target[0] == "action":
                refs.append(call.target[1])
        ids = {id(a) for a in refs}
        globals_ = []
        for a in refs:
            if a.control is None and a not in globals_:
                globals_.append(a)
        return globals_ + [a for a in b.actions if id(a) in ids]

    def lower(self, stmts: list[ir.Stmt], nxt: str | None, ret: str | None) -> str | None:
        """Build the control graph for `stmts` followed by node `nxt`; returns the entry.

        `ret` is where a `return` statement continues (the end of the control)."""
        node = nxt
        pending: list[ir.Stmt] = []
        i = len(stmts) - 1
        while i >= 0:
            s = stmts[i]
            i -= 1
            if self.is_simple(s):
                pending.insert(0, s)
                if isinstance(s, ir.Exit):
                    node = None
                    pending = [s]
                continue
            if pending:
                node = self.synth_table(pending, node)
                pending = []
            node = self.lower_stmt(s, node, ret)
        if pending:
            node = self.synth_table(pending, node)
        return node

    def is_simple(self, s: ir.Stmt) -> bool:
        if isinstance(s, ir.VarDecl) and s.init is not None and _has_apply(s.init):
            return False
        if isinstance(s, (ir.Assign, ir.VarDecl, ir.Empty, ir.Exit)):
            return not (isinstance(s, ir.Assign) and _has_apply(s.rhs))
        if isinstance(s, ir.CallStmt):
            return s.call.target[0] not in ("action", "apply", "control_apply")
        return False

    def lower_stmt(self, s: ir.Stmt, nxt: str | None, ret: str | None) -> str | None:
        if isinstance(s, ir.Block):
            return self.lower(list(s.stmts), nxt, ret)
        if isinstance(s, ir.Return):
            return ret
        if isinstance(s, ir.VarDecl) and s.init is not None:
            ref = self._var_by_unique(s.name, s.type)
            s = ir.Assign(ir.Name(s.name, s.loc, s.type, ref), s.init, s.loc)
        if isinstance(s, ir.Assign):
            # `flag = t.apply().hit;`: the table's hit/miss edges set the flag.
            hm = _hit_miss(s.rhs)
            if hm is None:
                raise Unsupported(s.loc, "a table apply can only be assigned as "
                                  "t.apply().hit or .miss")
            table, positive = hm
            on_hit = self.synth_table([ir.Assign(s.lhs, ir.BoolLit(positive), s.loc)], nxt)
            on_miss = self.synth_table([ir.Assign(s.lhs, ir.BoolLit(not positive), s.loc)],
                                       nxt)
            return self.table_node(table, s.loc, {"__HIT__": on_hit, "__MISS__": on_miss},
                                   nxt)
        if isinstance(s, ir.CallStmt):
            tgt = s.call.target
            if tgt[0] == "apply":
                return self.table_node(tgt[1], s.call.loc, {}, nxt)
            if tgt[0] == "action":
                return self.action_call_table(s.call, nxt)
            if tgt[0] == "control_apply":
                # `return` inside the inlined control ends only that control (its
                # copy-out assignments, if any, still run).
                after = self.lower(list(tgt[3]), nxt, nxt) if len(tgt) > 3 else nxt
                return self.lower(list(tgt[2].stmts), after, after)
        if isinstance(s, ir.If) and isinstance(s.cond, ir.BoolLit):
            taken = s.then if s.cond.value else s.other
            return self.lower([taken], nxt, ret) if taken is not None else nxt
        if isinstance(s, ir.If):
            then = self.lower([s.then], nxt, ret)
            other = self.lower([s.other], nxt, ret) if s.other is not None else nxt
            hm = _hit_miss(s.cond)
            if hm is not None:
                table, positive = hm
                hit, miss = (then, other) if positive else (other, then)
                return self.table_node(table, s.loc, {"__HIT__": hit, "__MISS__": miss}, nxt)
            name = self.unique_name("cond")
            cond = {"name": name, "id": 0}
            if (si := _source_info(s.loc)):
                cond["source_info"] = si
            cond.update({"expression": self.cond_expr(s.cond, _Env()), "true_next": then,
                         "false_next": other})
            self.nodes[name] = _Node(name, "conditional", cond, [then, other])
            return name
        if isinstance(s, ir.Switch):
            if isinstance(s.expr.type, ir.ActionEnum):
                return self.switch_action_run(s, nxt, ret)
            return self.lower_stmt(_switch_to_ifs(s), nxt, ret)
        raise Unsupported(getattr(s, "loc", None), f"{type(s).__name__} is not supported in "
                          "an apply block on bmv2")

    def switch_action_run(self, s: ir.Switch, nxt: str | None, ret: str | None) -> str | None:
        member = s.expr
        assert isinstance(member, ir.Member) and isinstance(member.expr, ir.Call)
        table: TableEntity = member.expr.target[1]
        targets: dict[str, str | None] = {}
        default: str | None = nxt
        pending: list[ir.SwitchCase] = []
        for c in s.cases:
            pending.append(c)
            if c.body is None:
                continue
            entry = self.lower([c.body], nxt, ret)
            for pc in pending:
                if pc.label is None:
                    default = entry
                else:
                    assert isinstance(pc.label, ir.Name)
                    targets[pc.label.ref.qualified] = entry
            pending = []
        next_tables = {}
        for r in table.actions:
            next_tables[r.action.qualified] = targets.get(r.action.qualified, default)
        return self.table_node(table, s.loc, next_tables, nxt)

    def table_node(self, t: TableEntity, loc: Location, next_tables: dict[str, str | None],
                   nxt: str | None) -> str:
        if t.qualified in self.applied:
            # bmv2 keeps one successor map per table: a second apply is only possible
            # when it continues exactly like the first (p4c: "multiple successors").
            prev = self.nodes[t.qualified].json
            same = prev["base_default_next"] == nxt and (
                prev["next_tables"] == next_tables
                or (not next_tables and set(prev["next_tables"].values()) == {nxt}))
            if same:
                return t.qualified
            raise CompileError(loc, f"{t.qualified}: table is applied more than once with "
                               "different successors; bmv2 cannot implement this (p4c: "
                               "'has multiple successors'); apply it once")
        self.applied.add(t.qualified)
        self.used_names.add(t.qualified)
        env = _Env()
        keys = []
        key_prims: list[dict[str, Any]] = []
        for k in t.keys:
            if k.match_kind == "selector":
                continue
            e = k.expr
            entry: dict[str, Any] = {"match_type": k.match_kind, "name": k.name}
            msk = None
            if isinstance(e, ir.Binary) and e.op == "&" and isinstance(e.right, ir.Lit):
                msk = hexstr(e.right.value, _width(e.type))
                e = e.left
            if isinstance(e, ir.Call) and e.target and e.target[1:2] == ("isValid",):
                callee = e.callee
                assert isinstance(callee, ir.Member)
                entry["target"] = [self.header_name(callee.expr, env), "$valid$"]
                entry["match_type"] = "exact" if k.match_kind == "exact" else k.match_kind
            else:
                try:
                    kind, v = self.path(e, env)
                except Unsupported:
                    kind, v = "expr", None
                if kind != "field":
                    # Like p4c's SimplifyKey: compute the key into a temporary first.
                    # Slices too: P4Runtime gives a slice key's value in the slice's
                    # width, which bmv2 cannot match against a masked whole field.
                    v = self.temp(e.type if not isinstance(e.type, ir.Bool)  # type: ignore
                                  else ir.Bits(1), "key")
                    key_prims.append(self.prim("assign", [{"type": "field", "value": v},
                                                          self.operand(e, env)], k.loc
                                               if hasattr(k, "loc") else t.loc))
                entry["target"] = v
            entry["mask"] = msk
            keys.append(entry)
        # bmv2's precedence: any range key makes a range table, then ternary (optional
        # keys need priorities too), then lpm, else exact.
        kinds = {k["match_type"] for k in keys}
        match_type = "range" if "range" in kinds else \
            "ternary" if kinds & {"ternary", "optional"} else \
            "lpm" if "lpm" in kinds else "exact"
        if sum(1 for k in keys if k["match_type"] == "lpm") > 1:
            raise CompileError(t.loc, f"{t.name}: multiple LPM keys in table")
        action_names = [r.action.qualified for r in t.actions]
        action_ids = [self.action_ids[self.action_key(r.action)] for r in t.actions]
        table_type = "simple"
        j: dict[str, Any] = {"name": t.qualified, "id": 0}
        if (si := _source_info(t.loc, t.name)):
            j["source_info"] = si
        j.update({"key": keys, "match_type": match_type, "type": table_type,
                  "max_size": t.size if t.size is not None else 1024,
                  "with_counters": t.counters is not None,
                  "support_timeout": t.support_timeout,
                  "direct_meters": t.meters.qualified if t.meters is not None else None,
                  "action_ids": action_ids, "actions": action_names})
        if t.implementation is not None:
            self.action_profile(t, j)
        hit_miss = "__HIT__" in next_tables
        if not next_tables:
            next_tables = {n: nxt for n in action_names}
        j["base_default_next"] = None if hit_miss else nxt
        j["next_tables"] = next_tables
        if t.default_action is not None and t.implementation is not None:
            self.diags.warn(t.loc, f"target does not support default_action for {t.name} "
                            "(due to action profiles)")
        elif t.default_action is not None:
            j["default_entry"] = self.default_entry(t.default_action, t.default_const)
        if t.entries is not None:
            j["entries"] = self.const_entries(t, keys)
        self.nodes[t.qualified] = _Node(t.qualified, "table", j,
                                        [nxt] + list(next_tables.values()))
        if key_prims:
            aname = self.unique_name(f"key_{t.name}")
            aid = self.add_action(aname, [], key_prims, t.loc)
            return self.hidden_table(self.unique_name(f"tbl_{aname}"), aname, aid, [], t.loc,
                                     t.qualified)
        return t.qualified

    def action_profile(self, t: TableEntity, j: dict[str, Any]) -> None:
        inst = t.implementation
        assert inst is not None
        kind = inst.type.name
        j["action_profile"] = inst.qualified
        if kind == "action_selector":
            j["type"] = "indirect_ws"
        elif kind == "action_profile":
            j["type"] = "indirect"
        else:
            raise Unsupported(t.loc, f"{t.name}: implementation {kind} is not supported")
        if inst.qualified in self.profile_names:
            return
        self.profile_names.add(inst.qualified)
        prof: dict[str, Any] = {"name": inst.qualified, "id": len(self.action_profiles)}
        if (si := _source_info(inst.decl.loc, inst.name)):
            prof["source_info"] = si
        if kind == "action_selector":
            algo = inst.args[0]
            if not isinstance(algo, str):
                raise Unsupported(t.loc, "selector algorithm must be a HashAlgorithm constant")
            prof["max_size"] = inst.args[1]
            env = _Env()
            prof["selector"] = {"algo": HASH_ALGOS.get(algo, algo), "input": [
                self.operand(k.expr, env) for k in t.keys if k.match_kind == "selector"]}
        else:
            prof["max_size"] = inst.args[0]
        self.action_profiles.append(prof)

    def default_entry(self, r: TypedActionRef, const: bool) -> dict[str, Any]:
        return {"action_id": self.action_ids[self.action_key(r.action)],
                "action_const": const,
                "action_data": [hexstr(_const(a, None)) for a in r.args],
                "action_entry_const": const}

    def const_entries(self, t: TableEntity, keys: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        assert t.entries is not None
        for i, en in enumerate(t.entries):
            mk = []
            for k, key, tk in zip(en.keys, keys, t.keys, strict=True):
                w = _width(tk.expr.type)
                mt = key["match_type"]
                if isinstance(k, ir.DefaultKey):
                    if mt == "ternary":
                        mk.append({"match_type": mt, "key": hexstr(0, w), "mask": hexstr(0, w)})
                    elif mt == "lpm":
                        mk.append({"match_type": mt, "key": hexstr(0, w), "prefix_length": 0})
                    elif mt == "range":
                        mk.append({"match_type": mt, "start": hexstr(0, w),
                                   "end": hexstr(mask(w), w)})
                    else:
                        raise CompileError(en.loc, "default/_ is not allowed for exact keys")
                elif isinstance(k, ir.MaskKey):
                    v, m = _const(k.value, en.loc), _const(k.mask, en.loc)
                    if mt == "lpm":
                        plen = bin(m).count("1")
                        mk.append({"match_type": mt, "key": hexstr(v & m, w),
                                   "prefix_length": plen})
                    else:
                        mk.append({"match_type": mt, "key": hexstr(v & m, w),
                                   "mask": hexstr(m, w)})
                elif isinstance(k, ir.RangeKey):
                    mk.append({"match_type": mt, "start": hexstr(_const(k.lo, en.loc), w),
                               "end": hexstr(_const(k.hi, en.loc), w)})
                else:
                    v = _const(k, en.loc)
                    if mt == "ternary":
                        mk.append({"match_type": mt, "key": hexstr(v, w),
                                   "mask": hexstr(mask(w), w)})
                    elif mt == "lpm":
                        mk.append({"match_type": mt, "key": hexstr(v, w), "prefix_length": w})
                    elif mt == "range":
                        mk.append({"match_type": mt, "start": hexstr(v, w), "end": hexstr(v, w)})
                    else:
                        mk.append({"match_type": mt, "key": hexstr(v, w)})
            entry: dict[str, Any] = {}
            if (si := _source_info(en.loc)):
                entry["source_info"] = si
            entry["match_key"] = mk
            entry["action_entry"] = {
                "action_id": self.action_ids[self.action_key(en.action.action)],
                "action_data": [hexstr(_const(a, en.loc)) for a in en.action.args]}
            # p4c: earlier entries win; without @priority, priorities follow the order.
            entry["priority"] = en.priority if en.priority is not None else i + 1
            out.append(entry)
        return out

    def action_call_table(self, call: ir.Call, nxt: str | None) -> str:
        a: ActionEntity = call.target[1]
        data = []
        for p, arg in zip(a.params, call.args, strict=True):
            if p.direction or not _is_constant(arg.value):
                # Not expressible as action data: run the action's body inline.
                return self.synth_table([ir.CallStmt(call, call.loc)], nxt)  # type: ignore
            data.append(hexstr(_const(arg.value, call.loc)))  # type: ignore[arg-type]
        name = self.unique_name(f"tbl_{a.name}")
        aid = self.action_ids[self.action_key(a)]
        return self.hidden_table(name, a.qualified, aid, data, call.loc, nxt)

    def hidden_table(self, name: str, action: str, aid: int, data: list[str],
                     loc: Location | None, nxt: str | None) -> str:
        j: dict[str, Any] = {"name": name, "id": 0}
        if (si := _source_info(loc)):
            j["source_info"] = si
        j.update({"key": [], "match_type": "exact", "type": "simple", "max_size": 1024,
                  "with_counters": False, "support_timeout": False, "direct_meters": None,
                  "action_ids": [aid], "actions": [action], "base_default_next": nxt,
                  "next_tables": {action: nxt},
                  "default_entry": {"action_id": aid, "action_const": True,
                                    "action_data": data, "action_entry_const": True}})
        self.nodes[name] = _Node(name, "table", j, [nxt])
        return name

    def synth_table(self, stmts: list[ir.Stmt], nxt: str | None) -> str | None:
        """Statements of an apply block run by a synthesized action in a hidden table."""
        stmts = [s for s in stmts if not isinstance(s, ir.Empty)
                 and not (isinstance(s, ir.VarDecl) and s.init is None)]
        if not stmts:
            return nxt
        loc = getattr(stmts[0], "loc", None)
        base = f"{Path(loc.file).stem}{loc.line}" if loc and loc.line else "act"
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in base)
        aname = self.unique_name(base)
        prims: list[dict[str, Any]] = []
        self.action_body(tuple(stmts), _Env(), prims)
        aid = self.add_action(aname, [], prims, loc)
        return self.hidden_table(self.unique_name(f"tbl_{aname}"), aname, aid, [], loc, nxt)

    def order_nodes(self, init: str | None
                    ) -> tuple[str | None, list[dict[str, Any]], list[dict[str, Any]]]:
        """Tables and conditionals in the order a forward walk meets them (as p4c lists them)."""
        seen: list[str] = []
        stack = [init]
        visited: set[str] = set()
        while stack:
            n = stack.pop(0)
            if n is None or n in visited:
                continue
            visited.add(n)
            seen.append(n)
            node = self.nodes[n]
            succ = [x for x in node.successors if x is not None]
            stack = [x for x in succ if x not in visited] + stack
        # Conditionals are named node_N in the order they are met, as p4c numbers them.
        rename: dict[str | None, str | None] = {None: None}
        for n in seen:
            rename[n] = n
        for n in seen:
            if self.nodes[n].kind == "conditional":
                new = f"node_{self.node_counter}"
                self.node_counter += 1
                rename[n] = new
        tables, conds = [], []
        for n in seen:
            node = self.nodes[n]
            j = node.json
            if node.kind == "table":
                j["id"] = len(tables)
                j["base_default_next"] = rename[j["base_default_next"]]
                j["next_tables"] = {k: rename[v] for k, v in j["next_tables"].items()}
                tables.append(j)
            else:
                j["id"] = len(conds)
                j["name"] = rename[n]
                j["true_next"] = rename[j["true_next"]]
                j["false_next"] = rename[j["false_next"]]
                conds.append(j)
        return rename[init], tables, conds


# ---------------------------------------------------------------- helpers


def _split_parser_ifs(states: list[ir.ParserState]) -> list[ir.ParserState]:
    """bmv2 parse states have no conditionals: split a state at each `if` into a
    select on the condition, one state per branch and a state for what follows."""
    out: list[ir.ParserState] = []
    taken = {s.name for s in states}

    def fresh(base: str) -> str:
        name, i = base, 0
        while name in taken:
            i += 1
            name = f"{base}_{i}"
        taken.add(name)
        return name

    def flat(stmts: tuple[ir.Stmt, ...]) -> list[ir.Stmt]:
        result: list[ir.Stmt] = []
        for x in stmts:
            if isinstance(x, ir.Block):   # local names are unique after type checking
                result.extend(flat(x.stmts))
            else:
                result.append(x)
        return result

    def split(state: ir.ParserState) -> None:
        stmts = flat(state.stmts)
        i = next((k for k, x in enumerate(stmts) if isinstance(x, ir.If)), None)
        if i is None:
            out.append(dataclasses.replace(state, stmts=tuple(stmts)))
            return
        cond_if = stmts[i]
        assert isinstance(cond_if, ir.If)
        join = fresh(f"{state.name}_join")
        true_state = fresh(f"{state.name}_true")
        false_state = fresh(f"{state.name}_false") if cond_if.other is not None else join
        one = ir.Lit(1, cond_if.loc, ir.Bits(1))
        select = ir.Transition(None, (cond_if.cond,), (
            ir.SelectCase((one,), true_state, cond_if.loc),
            ir.SelectCase((ir.DefaultKey(cond_if.loc),), false_state, cond_if.loc)),
            cond_if.loc)
        out.append(dataclasses.replace(state, stmts=tuple(stmts[:i]), transition=select))
        to_join = ir.Transition(join, loc=cond_if.loc)
        split(ir.ParserState(true_state, (cond_if.then,), to_join, (), cond_if.loc))
        if cond_if.other is not None:
            split(ir.ParserState(false_state, (cond_if.other,), to_join, (), cond_if.loc))
        split(ir.ParserState(join, tuple(stmts[i + 1:]), state.transition, (), state.loc))

    for s in states:
        split(s)
    return out


def _flat_fields(t: ir.StructLike, prefix: str = "") -> list[ir.StructField]:
    """Header fields with struct-typed fields flattened (`row0_alt0_valid`)."""
    out = []
    for f in t.fields:
        name = f"{prefix}_{f.name}" if prefix else f.name
        ft = ir.unwrap(f.type)
        if isinstance(ft, ir.StructLike) and ft.kind == "struct":
            out.extend(_flat_fields(ft, name))
        else:
            out.append(ir.StructField(name, f.type, f.annotations))
    return out


def _const(e: ir.Expr | None, loc: Location | None) -> int:
    if isinstance(e, ir.Lit):
        return e.value
    if isinstance(e, ir.BoolLit):
        return int(e.value)
    if isinstance(e, ir.Member) and isinstance(e.type, ir.Enum) and \
            isinstance(e.expr, ir.TypeName):
        t = e.type
        i = t.members.index(e.member)
        return t.values[i] if t.underlying is not None else i
    raise CompileError(getattr(e, "loc", loc), "expected a compile-time constant")


def _is_constant(e: ir.Expr | None) -> bool:
    try:
        _const(e, None)
        return True
    except CompileError:
        return False


def _range_to_masks(lo: int, hi: int, width: int) -> list[tuple[int, int]]:
    """Cover [lo, hi] with value/mask pairs (bmv2 parsers have no range transitions)."""
    out = []
    full = (1 << width) - 1
    while lo <= hi:
        size = 1
        while lo % (size * 2) == 0 and lo + size * 2 - 1 <= hi and size * 2 <= full + 1:
            size *= 2
        out.append((lo, full & ~(size - 1)))
        lo += size
    return out


def _lookahead_slice(e: ir.Expr) -> tuple[int, int] | None:
    """(bit offset, width) for `pkt.lookahead<T>()` or `pkt.lookahead<H>().field`."""
    def is_lookahead(x: ir.Expr) -> bool:
        return isinstance(x, ir.Call) and bool(x.target) and x.target[0] == "method" \
            and x.target[2] == "lookahead"

    if is_lookahead(e):
        return (0, _width(e.type))
    if isinstance(e, ir.Member) and is_lookahead(e.expr):
        t = ir.unwrap(e.expr.type)  # type: ignore[arg-type]
        assert isinstance(t, ir.StructLike)
        offset = 0
        for f in t.fields:
            if f.name == e.member:
                return (offset, _width(f.type))
            offset += _width(f.type)
    return None


def _calls(s: Any) -> list[ir.Call]:
    """Every call in a statement tree (not inside actions)."""
    out: list[ir.Call] = []

    def walk(x: Any) -> None:
        if isinstance(x, ir.Call):
            out.append(x)
            if x.target and x.target[0] == "control_apply":
                walk(x.target[2])
            for a in x.args:
                walk(a.value)
            walk(x.callee)
        elif isinstance(x, (ir.Block,)):
            for y in x.stmts:
                walk(y)
        elif isinstance(x, ir.If):
            walk(x.cond)
            walk(x.then)
            walk(x.other)
        elif isinstance(x, ir.Switch):
            walk(x.expr)
            for c in x.cases:
                walk(c.body)
        elif isinstance(x, ir.CallStmt):
            walk(x.call)
        elif isinstance(x, ir.Assign):
            walk(x.lhs)
            walk(x.rhs)
        elif isinstance(x, (ir.Member,)):
            walk(x.expr)
        elif isinstance(x, ir.Binary):
            walk(x.left)
            walk(x.right)
        elif isinstance(x, ir.Unary):
            walk(x.expr)

    walk(s)
    return out


def _has_apply(e: ir.Expr) -> bool:
    return any(c.target and c.target[0] == "apply" for c in _calls(e))


def _hit_miss(cond: ir.Expr) -> tuple[TableEntity, bool] | None:
    """`t.apply().hit` / `.miss` / `!t.apply().hit` as (table, positive-for-hit)."""
    negate = False
    while isinstance(cond, ir.Unary) and cond.op == "!":
        negate = not negate
        cond = cond.expr
    if isinstance(cond, ir.Member) and cond.member in ("hit", "miss") and \
            isinstance(cond.expr, ir.Call) and cond.expr.target and \
            cond.expr.target[0] == "apply":
        positive = (cond.member == "hit") != negate
        return cond.expr.target[1], positive
    if _has_apply(cond):
        raise Unsupported(getattr(cond, "loc", None), "a table apply inside a larger condition "
                          "is not supported; use if (t.apply().hit) or switch")
    return None


def _switch_to_ifs(s: ir.Switch) -> ir.Stmt:
    """A switch on a value as an if/else chain (case labels may fall through)."""
    result: ir.Stmt | None = None
    groups: list[tuple[list[ir.Expr | None], ir.Block]] = []
    labels: list[ir.Expr | None] = []
    for c in s.cases:
        labels.append(c.label)
        if c.body is not None:
            groups.append((labels, c.body))
            labels = []
    default_body: ir.Stmt | None = None
    for labels_, body in reversed(groups):
        if None in labels_:
            default_body = body
            continue
        cond: ir.Expr | None = None
        for lab in labels_:
            assert lab is not None
            eq = ir.Binary("==", s.expr, lab, s.loc, ir.Bool())
            cond = eq if cond is None else ir.Binary("||", cond, eq, s.loc, ir.Bool())
        assert cond is not None
        result = ir.If(cond, body, result if result is not None else default_body, s.loc)
    if result is None:
        return default_body or ir.Empty(s.loc)
    return result


def _substitute(e: Any, subst: dict[str, ir.Expr]) -> Any:
    import dataclasses

    if isinstance(e, ir.Name) and isinstance(e.ref, ParamEntity) and e.ref.owner == "function":
        return subst[e.name]
    if dataclasses.is_dataclass(e) and isinstance(e, ir.Expr):
        changes = {}
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, ir.Expr):
                changes[f.name] = _substitute(v, subst)
            elif isinstance(v, tuple) and v and isinstance(v[0], ir.Expr):
                changes[f.name] = tuple(_substitute(x, subst) for x in v)
        return dataclasses.replace(e, **changes) if changes else e
    return e


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
