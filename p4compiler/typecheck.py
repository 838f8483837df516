"""Name resolution and type checking: syntax tree -> typed IR.

The result (`TypedProgram`) is plain data: the v1model blocks of the `main`
package with their actions, tables, extern instances and typed bodies.
Expressions come back as the same ir nodes with `type` filled in, names
resolved (`Name.ref`) and constants folded, so later stages never look names up.
"""


from __future__ import annotations

import dataclasses
import re
from typing import Any

from . import ir
from .errors import CompileError, Diagnostics, Location
from .typecheck_blocks import BlockChecks
from .typecheck_entities import (  # noqa: F401 - also the module's API
    V1MODEL_ROLES,
    ActionEntity,
    BlockDeclEntity,
    ConstEntity,
    ExternFunctionEntity,
    FunctionEntity,
    InstanceEntity,
    ParamEntity,
    Scope,
    TableEntity,
    TypedActionRef,
    TypedBlock,
    TypedProgram,
    TypeEntity,
    ValueSetEntity,
    VarEntity,
)
from .typecheck_exprs import ExpressionChecks
from .typecheck_stmts import StatementChecks
from .typecheck_tree import (  # noqa: F401 - also the module's API
    _children,
    _equiv,
    _header_field_ok,
    _is_constant,
    _is_lvalue_path,
    _lvalue_root,
    _overlaps,
    _rewrite,
    _walk,
)


class Checker(BlockChecks, StatementChecks, ExpressionChecks):
    def __init__(self, diags: Diagnostics | None = None):
        self.diags = diags or Diagnostics()
        self.globals = Scope()
        self.structs: list[ir.StructLike] = []
        self.generic_structs: dict[str, ir.StructDecl] = {}
        self.enums: list[ir.Enum] = []
        self.program_enums: set[str] = set()  # enums not declared by v1model.p4
        self.errors: list[str] = []
        self.match_kinds: set[str] = set()
        self.global_instances: list[InstanceEntity] = []
        self.unique_names: set[str] = set()
        self.block: TypedBlock | None = None
        self.digests: list[tuple[ir.Type, Location]] = []
        self.orphan_variables: list[VarEntity] = []
        self.temp_names: set[str] = set()
        self.in_functions: set[str] = set()
        self.warned: set[tuple[str, str]] = set()
        # control-plane name of each control instance -> (its local name, where declared)
        self.control_instances: dict[str, tuple[str, Location]] = {}

    # ------------------------------------------------------------ program

    def check(self, program: ir.Program) -> TypedProgram:
        main: ir.Instantiation | None = None
        for d in program.decls:
            if isinstance(d, ir.Instantiation) and d.name == "main":
                main = d
                continue
            self.declare_global(d)
        if main is None:
            raise CompileError(None, "program has no 'main' package instantiation")
        return self.check_main(main)

    def declare_global(self, d: ir.Node) -> None:
        g = self.globals
        if isinstance(d, ir.StructDecl):
            if d.type_params:  # generic: specialised where used (resolve_type)
                self.generic_structs[d.name] = d
                bound = Scope(g, "generic")
                for k in d.type_params:
                    bound.names[k] = TypeEntity(ir.TypeVar(k))
                t = self.struct_type(d, bound, d.name)
            else:
                t = self.struct_type(d, g, d.name)
                self.structs.append(t)
            g.declare(d.name, TypeEntity(t, d), d.loc)
        elif isinstance(d, ir.EnumDecl):
            if d.underlying is not None:
                under = self.resolve_type(d.underlying, g)
                assert isinstance(under, ir.Bits)
                values = tuple(self.const_int(self.expr(v, g, under), g) for v in d.values)
                t = ir.Enum(d.name, d.members, under, values)
            else:
                t = ir.Enum(d.name, d.members)
            self.enums.append(t)
            if not d.loc.file.endswith("v1model.p4"):
                self.program_enums.add(d.name)
            g.declare(d.name, TypeEntity(t, d), d.loc)
        elif isinstance(d, ir.TypedefDecl):
            base = self.resolve_type(d.tref, g)
            t = ir.NewType(d.name, base, d.annotations) if d.newtype else base
            g.declare(d.name, TypeEntity(t, d), d.loc)
        elif isinstance(d, ir.ErrorDecl):
            for m in d.members:
                if m not in self.errors:
                    self.errors.append(m)
        elif isinstance(d, ir.MatchKindDecl):
            # the members are values of type match_kind in the top-level namespace
            # (P4_16 7.1.3, 8.4: assignment, == and !=; `const tuple<match_kind> t = {exact};`)
            self.match_kinds.update(d.members)
            kind = ir.TypeName(ir.TypeRef("match_kind", loc=d.loc), d.loc, ir.MatchKindT())
            for m in d.members:
                g.declare(m, ConstEntity(m, ir.Member(kind, m, d.loc, ir.MatchKindT())), d.loc)
        elif isinstance(d, ir.ConstDecl):
            self.declare_const(d, g)
        elif isinstance(d, ir.ExternDecl):
            g.declare(d.name, TypeEntity(ir.ExternT(d.name, d.type_params), d), d.loc)
        elif isinstance(d, ir.ExternFunctionDecl):
            prev = g.names.get(d.proto.name)
            protos = (prev.protos if isinstance(prev, ExternFunctionEntity) else ()) + (d.proto,)
            g.declare(d.proto.name, ExternFunctionEntity(d.proto.name, protos), d.loc, True)
        elif isinstance(d, ir.FunctionDecl):
            g.declare(d.proto.name, FunctionEntity(d.proto.name, d), d.loc)
        elif isinstance(d, ir.PackageDecl):
            g.declare(d.name, TypeEntity(ir.BlockT("package", d.name), d), d.loc)
        elif isinstance(d, ir.ParserDecl):
            if d.name in g.names and d.is_proto:
                return
            g.declare(d.name, BlockDeclEntity("parser", d.name, d), d.loc, overload=not d.is_proto)
        elif isinstance(d, ir.ControlDecl):
            g.declare(d.name, BlockDeclEntity("control", d.name, d), d.loc, overload=not d.is_proto)
        elif isinstance(d, ir.ActionDecl):
            g.declare(d.name, self.make_action(d, g, None), d.loc)
        elif isinstance(d, ir.Instantiation):
            inst = self.instantiate(d, g, "")
            if isinstance(inst, InstanceEntity):
                self.global_instances.append(inst)
        else:
            raise CompileError(getattr(d, "loc", None),
                               f"unsupported top-level declaration {type(d).__name__}")

    def declare_const(self, d: ir.ConstDecl, scope: Scope) -> None:
        t = self.resolve_type(d.tref, scope)
        value = self.coerce(self.expr(d.value, scope, t), t, d.loc)
        if not _constant(value):
            raise CompileError(d.loc, f"{d.name}: initializer is not a compile-time constant")
        scope.declare(d.name, ConstEntity(d.name, value), d.loc)

    def check_main(self, main: ir.Instantiation) -> TypedProgram:
        pkg = self.globals.lookup(main.tref.name)
        if not (isinstance(pkg, TypeEntity) and isinstance(pkg.decl, ir.PackageDecl)):
            raise CompileError(main.loc, f"{main.tref.name}: main must instantiate a package")
        if pkg.decl.name != "V1Switch":
            raise CompileError(main.loc, f"package {pkg.decl.name} is not supported; "
                               "only v1model's V1Switch")
        params = pkg.decl.params
        if len(main.args) != len(params):
            raise CompileError(main.loc, f"V1Switch expects {len(params)} arguments, "
                               f"got {len(main.args)}")
        blocks: dict[str, TypedBlock] = {}
        decls: dict[str, Any] = {}
        main_args: dict[str, tuple[ir.Arg, ...]] = {}
        args = list(main.args)
        if any(a.name for a in args):
            by_name = {a.name: a for a in args}
            missing = [p.name for p in params if p.name not in by_name]
            if missing or len(by_name) != len(args):
                raise CompileError(main.loc, f"V1Switch: missing or unknown argument names "
                                   f"(expected {', '.join(p.name for p in params)})")
            args = [by_name[p.name] for p in params]
        for role, arg in zip(V1MODEL_ROLES, args, strict=True):
            v = arg.value
            if not (isinstance(v, ir.Call) and isinstance(v.callee, ir.TypeName)):
                raise CompileError(arg.loc, "V1Switch arguments must be parser/control "
                                   "instantiations such as MyIngress()")
            name = v.callee.tref.name
            ent = self.globals.lookup(name)
            if not isinstance(ent, BlockDeclEntity) or ent.decl.is_proto:
                raise CompileError(arg.loc, f"{name}: no parser or control of that name")
            decls[role] = ent.decl
            main_args[role] = v.args
        parser = decls["p"]
        if not isinstance(parser, ir.ParserDecl) or len(parser.params) != 4:
            raise CompileError(parser.loc, "the V1Switch parser must take "
                               "(packet_in, out H, inout M, inout standard_metadata_t)")
        htype = self.resolve_type(parser.params[1].tref, self.globals)
        mtype = self.resolve_type(parser.params[2].tref, self.globals)
        for role in V1MODEL_ROLES:
            d = decls[role]
            self.check_role_signature(d, role, htype, mtype)
            if isinstance(d, ir.ParserDecl):
                if role != "p":
                    raise CompileError(d.loc, f"{d.name}: expected a control here")
                blocks[role] = self.check_parser(
                    d, role, self.ctor_args(d, main_args[role], self.globals, d.loc))
            else:
                if role == "p":
                    raise CompileError(d.loc, f"{d.name}: expected a parser here")
                blocks[role] = self.check_control(
                    d, role, self.ctor_args(d, main_args[role], self.globals, d.loc))
        blocks["p"].variables[:0] = self.orphan_variables
        controller = [s for s in self.structs if s.kind == "header"
                      and ir.annotation(s.annotations, "controller_header")]
        return TypedProgram(
            arch="v1model", structs=self.structs, errors=self.all_errors(), enums=self.enums,
            program_enums=self.program_enums,
            blocks=blocks,
            headers_type=htype if isinstance(htype, ir.StructLike) else None,
            metadata_type=mtype if isinstance(mtype, ir.StructLike) else None,
            global_instances=self.global_instances, controller_headers=controller,
            digests=self.digests,
            constants={n: e.value.value for n, e in self.globals.names.items()
                       if isinstance(e, ConstEntity) and isinstance(e.value, ir.Lit)},
            main_annotations=main.annotations, no_action=self.globals.lookup("NoAction"),
            global_actions=[e for e in self.globals.names.values()
                            if isinstance(e, ActionEntity)])

    def check_role_signature(self, d: Any, role: str, htype: ir.Type, mtype: ir.Type
                             ) -> None:
        """`d`'s parameters are those v1model's V1Switch gives that role (same count and
        types, H and M those of the parser), as p4c's type unification requires: a
        control in the wrong place is an error at its declaration, not a crash later."""
        want = _ROLE_SIGNATURES[role]
        got = [(p.direction, self.resolve_type(p.tref, self.globals)) for p in d.params]

        def matches(direction: str, t: ir.Type, w: tuple[str, str]) -> bool:
            if w[1] == "H":
                return t == htype
            if w[1] == "M":
                return t == mtype
            return getattr(t, "name", None) == w[1]
        if len(got) != len(want) or not all(
                matches(dr, t, w) for (dr, t), w in zip(got, want, strict=True)):
            shape = ", ".join(f"{dr} {ty}".strip() for dr, ty in want)
            raise CompileError(d.loc, f"{d.name} cannot be V1Switch's {_ROLE_NAMES[role]}: "
                               f"it must take ({shape}), H and M the parser's types")
        # and the same directions: p4c's type unification refuses `in H hdr` where
        # V1Switch's VerifyChecksum declares `inout H hdr` (p4c's p4_16_bmv_errors
        # issue376/issue610/issue679/nested-headers/no-header2-bmv2; the `in` form is
        # v1model's before 2018)
        for p, (dr, _), w in zip(d.params, got, want, strict=True):
            if dr != w[0]:
                raise CompileError(p.loc if p.loc.line > 0 else d.loc,
                                   f"{d.name}: cannot unify {_dir_name(dr)} parameter "
                                   f"'{p.name}' with V1Switch's {_dir_name(w[0])} parameter "
                                   f"of its {_ROLE_NAMES[role]}, because they have "
                                   "different directions")

    def all_errors(self) -> list[str]:
        return self.errors

    # ------------------------------------------------------------ types

    def struct_type(self, d: ir.StructDecl, scope: Scope, name: str) -> ir.StructLike:
        fields = tuple(ir.StructField(f.name, self.resolve_type(f.tref, scope), f.annotations)
                       for f in d.fields)
        names = [f.name for f in fields]
        for f in d.fields:
            if names.count(f.name) > 1:
                raise CompileError(f.loc, f"{f.name}: duplicate field in {d.name}")
        if d.kind == "header":
            for f in fields:
                if not _header_field_ok(f.type) and not isinstance(f.type, ir.TypeVar):
                    raise CompileError(d.loc, f"{d.name}.{f.name}: header fields must be "
                                       f"bit<>, int<>, varbit<>, serializable enums or "
                                       f"structs of those, not {f.type}")
        return ir.StructLike(d.kind, name, fields, d.annotations)

    def specialise(self, d: ir.StructDecl, t: ir.TypeRef, scope: Scope) -> ir.StructLike:
        """`S<bit<8>>` of a generic `struct S<T>` (or header): a struct type of its own
        (p4c's specialisation), named after its type arguments."""
        args = [self.resolve_type(a, scope) for a in t.args]
        if not args:
            raise CompileError(t.loc, f"{d.name} is generic: give its type arguments "
                               f"({d.name}<{', '.join(d.type_params)}>)")
        if len(args) != len(d.type_params):
            raise CompileError(t.loc, f"{d.name} takes {len(d.type_params)} type "
                               f"arguments, got {len(args)}")
        bound = Scope(self.globals, "generic")
        for k, a in zip(d.type_params, args, strict=True):
            bound.names[k] = TypeEntity(a)
        name = d.name + "_" + "_".join(re.sub(r"\W+", "_", str(a)).strip("_") for a in args)
        st = self.struct_type(d, bound, name)
        if st not in self.structs:
            self.structs.append(st)
        return st

    def resolve_type(self, t: ir.TypeRef, scope: Scope) -> ir.Type:
        k = t.kind
        if k in ("bit", "int", "varbit"):
            w = self.const_int(self.expr(t.width, scope), scope)
            if w <= 0 and k != "bit":
                raise CompileError(t.loc, f"{k}<{w}>: width must be positive")
            if k == "varbit":
                return ir.Varbit(w)
            return ir.Bits(w, k == "int")
        if k == "bool":
            return ir.Bool()
        if k == "string":
            return ir.String()
        if k == "error":
            return ir.ErrorT()
        if k == "infint":
            return ir.InfInt()
        if k == "match_kind":
            return ir.MatchKindT()
        if k == "void":
            return ir.Void()
        if k == "dontcare":
            return ir.DontCareT()
        if k == "stack":
            assert t.elem is not None
            elem = self.resolve_type(t.elem, scope)
            size = self.const_int(self.expr(t.width, scope), scope)
            return ir.Stack(elem, size)
        if k == "tuple":
            return ir.TupleT(tuple(self.resolve_type(a, scope) for a in t.args))
        if k == "list":  # lists.sized typed the ones written as `{...}`
            raise CompileError(t.loc, "list<T>: only a list written out (`{a, b}`: a cast, "
                               "a local's initialiser, a for-in collection) is supported")
        if k == "name":
            ent = scope.lookup(t.name)
            if isinstance(ent, TypeEntity):
                ty = ent.type
                if isinstance(ty, ir.ExternT) and t.args:
                    return dataclasses.replace(
                        ty, type_args=tuple(self.resolve_type(a, scope) for a in t.args))
                if isinstance(ty, ir.StructLike) and t.name in self.generic_structs:
                    return self.specialise(self.generic_structs[t.name], t, scope)
                return ty
            if isinstance(ent, BlockDeclEntity):
                return ir.BlockT(ent.kind, ent.name)
            if ent is None and len(t.name) <= 2 or (ent is None and scope.kind == "generic"):
                return ir.TypeVar(t.name)
            if ent is None:
                raise CompileError(t.loc, f"{t.name}: undeclared type")
            raise CompileError(t.loc, f"{t.name} is not a type")
        raise CompileError(t.loc, f"unsupported type {k}")

    # ------------------------------------------------------------ constants

    def const_int(self, e: ir.Expr, scope: Scope) -> int:
        if isinstance(e, ir.Lit):
            return e.value
        raise CompileError(getattr(e, "loc", None), "expected a compile-time constant integer")


def check(program: ir.Program, diags: Diagnostics | None = None) -> TypedProgram:
    return Checker(diags).check(program)


def _constant(e: ir.Expr) -> bool:
    """A compile-time constant: a literal, an enum or error member, or a struct / list
    expression of constants (a struct- or tuple-typed `const`)."""
    if isinstance(e, ir.StructExpr):
        return all(_constant(x) for _, x in e.fields)
    if isinstance(e, ir.ListExpr):
        return all(_constant(x) for x in e.items)
    return isinstance(e, (ir.Lit, ir.BoolLit, ir.StrLit, ir.ErrorMember, ir.Member))


# v1model.p4's V1Switch: what each of its blocks takes (H, M: the parser's types)
def _dir_name(direction: str) -> str:
    return f"'{direction}'" if direction else "a directionless"


_ROLE_SIGNATURES = {
    "p": (("", "packet_in"), ("out", "H"), ("inout", "M"), ("inout", "standard_metadata_t")),
    "vr": (("inout", "H"), ("inout", "M")),
    "ig": (("inout", "H"), ("inout", "M"), ("inout", "standard_metadata_t")),
    "eg": (("inout", "H"), ("inout", "M"), ("inout", "standard_metadata_t")),
    "ck": (("inout", "H"), ("inout", "M")),
    "dep": (("", "packet_out"), ("in", "H")),
}
_ROLE_NAMES = {"p": "parser", "vr": "checksum verification", "ig": "ingress",
               "eg": "egress", "ck": "checksum computation", "dep": "deparser"}
