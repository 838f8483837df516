"""Name resolution and type checking: syntax tree -> typed IR.

The result (`TypedProgram`) is plain data: the v1model blocks of the `main`
package with their actions, tables, extern instances and typed bodies.
Expressions come back as the same ir nodes with `type` filled in, names
resolved (`Name.ref`) and constants folded, so later stages never look names up.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from . import default_values, ir, loops
from .errors import CompileError, Diagnostics, Location

# ---------------------------------------------------------------- entities


@dataclass(frozen=True)
class ParamEntity:
    """A parameter of a parser, control, action or function."""

    name: str
    direction: str
    type: ir.Type
    owner: str          # "parser" | "control" | "action" | "function"
    index: int
    annotations: tuple[ir.Annotation, ...] = ()


@dataclass(frozen=True)
class VarEntity:
    """A local variable; `unique` is its program-wide name."""

    name: str
    type: ir.Type
    unique: str


@dataclass(frozen=True)
class ConstEntity:
    name: str
    value: ir.Expr


@dataclass(frozen=True)
class TypeEntity:
    type: ir.Type
    decl: Any = None


@dataclass(frozen=True)
class ExternFunctionEntity:
    name: str
    protos: tuple[ir.MethodProto, ...]


@dataclass(frozen=True)
class FunctionEntity:
    name: str
    decl: ir.FunctionDecl


@dataclass(frozen=True)
class BlockDeclEntity:
    """A parser or control declaration (a type that can be instantiated)."""

    kind: str
    name: str
    decl: Any


@dataclass(frozen=True)
class StateEntity:
    name: str


@dataclass
class InstanceEntity:
    """An extern instance (counter, register, ...) declared in a block or globally."""

    name: str
    qualified: str
    type: ir.ExternT
    args: tuple[Any, ...]           # evaluated constructor arguments (int/str/enum member)
    decl: ir.Instantiation
    annotations: tuple[ir.Annotation, ...] = ()


@dataclass
class ControlInstance:
    """A control instantiated inside another control (`Reroute() reroute;`); each
    `reroute.apply(...)` is inlined, its locals named `Outer.reroute.x` as p4c does.
    `ctor_args` are the constructor arguments (name, constant expression)."""

    name: str
    prefix: str
    decl: Any
    ctor_args: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class AliasEntity:
    """A parameter of an inlined control bound directly to the caller's argument (an
    lvalue or a constant): uses of the parameter are uses of `value`."""

    name: str
    value: Any
    direction: str


@dataclass
class ValueSetEntity:
    name: str
    qualified: str
    type: ir.Type
    size: int
    annotations: tuple[ir.Annotation, ...] = ()
    loc: Location | None = None


@dataclass
class ActionEntity:
    name: str
    qualified: str
    params: tuple[ParamEntity, ...]
    body: ir.Block
    annotations: tuple[ir.Annotation, ...]
    loc: Location
    decl: ir.ActionDecl
    control: str | None = None

    @property
    def data_params(self) -> tuple[ParamEntity, ...]:
        """Directionless parameters: the action data the control plane supplies."""
        return tuple(p for p in self.params if not p.direction)


@dataclass(frozen=True)
class TypedKey:
    expr: ir.Expr
    match_kind: str
    name: str                        # as p4c writes it, e.g. "hdr.lrh.dlid"
    annotations: tuple[ir.Annotation, ...] = ()


@dataclass(frozen=True)
class TypedActionRef:
    action: ActionEntity
    args: tuple[ir.Expr, ...]
    annotations: tuple[ir.Annotation, ...] = ()


@dataclass(frozen=True)
class TypedEntry:
    keys: tuple[ir.Expr, ...]
    action: TypedActionRef
    priority: int | None
    loc: Location


@dataclass
class TableEntity:
    name: str
    qualified: str
    keys: tuple[TypedKey, ...]
    actions: tuple[TypedActionRef, ...]
    default_action: TypedActionRef | None
    default_const: bool
    entries: tuple[TypedEntry, ...] | None
    entries_const: bool
    size: int | None
    implementation: InstanceEntity | None
    counters: InstanceEntity | None
    meters: InstanceEntity | None
    support_timeout: bool
    annotations: tuple[ir.Annotation, ...]
    loc: Location
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class TypedBlock:
    """A parser or control of the main package, checked."""

    kind: str                        # parser | control
    name: str
    role: str                        # p, vr, ig, eg, ck, dep (v1model parameter names)
    params: tuple[ParamEntity, ...]
    actions: list[ActionEntity] = field(default_factory=list)
    tables: list[TableEntity] = field(default_factory=list)
    instances: list[InstanceEntity] = field(default_factory=list)
    variables: list[VarEntity] = field(default_factory=list)
    value_sets: list[ValueSetEntity] = field(default_factory=list)
    body: ir.Block | None = None
    states: list[ir.ParserState] = field(default_factory=list)
    loc: Location | None = None
    # control-level variables: (instance prefix of an inlined sub-control or None, decl)
    local_decls: list[tuple[str | None, ir.VarDecl]] = field(default_factory=list)


@dataclass
class TypedProgram:
    arch: str
    structs: list[ir.StructLike]
    errors: list[str]
    enums: list[ir.Enum]
    blocks: dict[str, TypedBlock]            # by v1model role
    headers_type: ir.StructLike | None
    metadata_type: ir.StructLike | None
    global_instances: list[InstanceEntity]
    controller_headers: list[ir.StructLike]
    digests: list[tuple[ir.Type, Location]] = field(default_factory=list)
    constants: dict[str, Any] = field(default_factory=dict)
    main_annotations: tuple[ir.Annotation, ...] = ()
    no_action: Any = None                    # core.p4's NoAction, for the mid end

    def block_list(self) -> list[TypedBlock]:
        return list(self.blocks.values())


# ---------------------------------------------------------------- scopes


class Scope:
    def __init__(self, parent: Scope | None = None, kind: str = "global", prefix: str = ""):
        self.parent = parent
        self.names: dict[str, Any] = {}
        self.kind = kind
        self.prefix = prefix

    def lookup(self, name: str) -> Any:
        s: Scope | None = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None

    def root(self) -> Scope:
        s = self
        while s.parent is not None:
            s = s.parent
        return s

    def declare(self, name: str, entity: Any, loc: Location, overload: bool = False) -> None:
        if name in self.names and not overload:
            raise CompileError(loc, f"{name}: duplicate declaration")
        self.names[name] = entity


V1MODEL_ROLES = ("p", "vr", "ig", "eg", "ck", "dep")


def _is_num(t: ir.Type) -> bool:
    return isinstance(ir.unwrap(t), (ir.Bits, ir.InfInt))


def _type_text(t: ir.Type | None) -> str:
    return str(t) if t is not None else "?"


class Checker:
    def __init__(self, diags: Diagnostics | None = None):
        self.diags = diags or Diagnostics()
        self.globals = Scope()
        self.structs: list[ir.StructLike] = []
        self.enums: list[ir.Enum] = []
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
            fields = tuple(ir.StructField(f.name, self.resolve_type(f.tref, g), f.annotations)
                           for f in d.fields)
            names = [f.name for f in fields]
            for f in d.fields:
                if names.count(f.name) > 1:
                    raise CompileError(f.loc, f"{f.name}: duplicate field in {d.name}")
            if d.kind == "header":
                for f in fields:
                    if not _header_field_ok(f.type):
                        raise CompileError(d.loc, f"{d.name}.{f.name}: header fields must be "
                                           f"bit<>, int<>, varbit<>, serializable enums or "
                                           f"structs of those, not {f.type}")
            t = ir.StructLike(d.kind, d.name, fields, d.annotations)
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
            self.match_kinds.update(d.members)
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
        if not isinstance(value, (ir.Lit, ir.BoolLit, ir.StrLit, ir.ErrorMember, ir.Member)):
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
            if isinstance(d, ir.ParserDecl):
                if role != "p":
                    raise CompileError(d.loc, f"{d.name}: expected a control here")
                blocks[role] = self.check_parser(d, role)
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
            blocks=blocks,
            headers_type=htype if isinstance(htype, ir.StructLike) else None,
            metadata_type=mtype if isinstance(mtype, ir.StructLike) else None,
            global_instances=self.global_instances, controller_headers=controller,
            digests=self.digests,
            constants={n: e.value.value for n, e in self.globals.names.items()
                       if isinstance(e, ConstEntity) and isinstance(e.value, ir.Lit)},
            main_annotations=main.annotations, no_action=self.globals.lookup("NoAction"))

    def all_errors(self) -> list[str]:
        return self.errors

    # ------------------------------------------------------------ types

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
        if k == "name":
            ent = scope.lookup(t.name)
            if isinstance(ent, TypeEntity):
                ty = ent.type
                if isinstance(ty, ir.ExternT) and t.args:
                    return dataclasses.replace(
                        ty, type_args=tuple(self.resolve_type(a, scope) for a in t.args))
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

    # ------------------------------------------------------------ blocks

    def _unique(self, name: str) -> str:
        """p4c-style unique local names: x -> x_0, x_1, ..."""
        i = 0
        while f"{name}_{i}" in self.unique_names:
            i += 1
        u = f"{name}_{i}"
        self.unique_names.add(u)
        return u

    def _params(self, params: tuple[ir.Param, ...], scope: Scope, owner: str
                ) -> tuple[ParamEntity, ...]:
        out = []
        for i, p in enumerate(params):
            t = self.resolve_type(p.tref, scope)
            ent = ParamEntity(p.name, p.direction, t, owner, i, p.annotations)
            scope.declare(p.name, ent, p.loc)
            out.append(ent)
        return tuple(out)

    def check_parser(self, d: ir.ParserDecl, role: str) -> TypedBlock:
        scope = Scope(self.globals, "parser", d.name)
        params = self._params(d.params, scope, "parser")
        blk = TypedBlock("parser", d.name, role, params, loc=d.loc)
        self.block = blk
        for s in d.states:
            scope.declare(s.name, StateEntity(s.name), s.loc)
        for built_in in ("accept", "reject"):
            scope.names.setdefault(built_in, StateEntity(built_in))
        for loc_decl in d.locals:
            self.control_local(loc_decl, scope, blk)
        if not any(s.name == "start" for s in d.states):
            raise CompileError(d.loc, f"{d.name}: parser has no 'start' state")
        for s in d.states:
            sscope = Scope(scope, "state", d.name)
            stmts = tuple(self.stmt(x, sscope, "parser") for x in s.stmts)
            trans = self.transition(s.transition, sscope, s) if s.transition else None
            blk.states.append(ir.ParserState(s.name, stmts, trans, s.annotations, s.loc))
        self.block = None
        return blk

    def transition(self, t: ir.Transition, scope: Scope, state: ir.ParserState) -> ir.Transition:
        def target(name: str, loc: Location) -> str:
            if not isinstance(scope.lookup(name), StateEntity):
                raise CompileError(loc, f"{name}: no parser state of that name")
            return name

        if t.state is not None:
            return ir.Transition(target(t.state, t.loc), loc=t.loc)
        keys = tuple(self.expr(k, scope) for k in t.select)
        cases = []
        for c in t.cases:
            if len(c.keys) != len(keys) and not (len(c.keys) == 1
                                                  and isinstance(c.keys[0], ir.DefaultKey)):
                raise CompileError(c.loc, f"select case has {len(c.keys)} values for "
                                   f"{len(keys)} keys")
            if len(c.keys) == 1 and isinstance(c.keys[0], ir.DefaultKey):
                ks: tuple[ir.Expr, ...] = tuple(c.keys[0] for _ in keys)
            else:
                ks = tuple(self.keyset(k, key.type, scope) for k, key in zip(c.keys, keys,
                                                                                strict=True))
            cases.append(ir.SelectCase(ks, target(c.state, c.loc), c.loc))
        return ir.Transition(None, keys, tuple(cases), t.loc)

    def keyset(self, k: ir.Expr, t: ir.Type | None, scope: Scope) -> ir.Expr:
        if isinstance(k, ir.DefaultKey):
            return k
        if isinstance(t, ir.Enum) and t.underlying is not None:
            t = t.underlying  # keysets on a serializable enum match its underlying values
        if isinstance(k, ir.MaskKey):
            return ir.MaskKey(self.coerce(self.expr(k.value, scope, t), t, k.loc),
                              self.coerce(self.expr(k.mask, scope, t), t, k.loc), k.loc, t)
        if isinstance(k, ir.RangeKey):
            return ir.RangeKey(self.coerce(self.expr(k.lo, scope, t), t, k.loc),
                               self.coerce(self.expr(k.hi, scope, t), t, k.loc), k.loc, t)
        e = self.expr(k, scope, t)
        if isinstance(e, ir.Name) and isinstance(e.ref, ValueSetEntity):
            return e
        return self.coerce(e, t, k.loc)

    def check_control(self, d: ir.ControlDecl, role: str,
                      ctor_args: tuple[tuple[str, ir.Expr], ...] = ()) -> TypedBlock:
        from .passes.local_initializers import move_initializers_with_calls
        d, scope = move_initializers_with_calls(d), Scope(self.globals, "control", d.name)
        for name, value in ctor_args:
            scope.declare(name, ConstEntity(name, value), d.loc)
        params = self._params(d.params, scope, "control")
        blk = TypedBlock("control", d.name, role, params, loc=d.loc)
        self.block = blk
        for loc_decl in d.locals:
            self.control_local(loc_decl, scope, blk)
        body = self.stmt(d.body, Scope(scope, "apply", d.name), "control")
        assert isinstance(body, ir.Block)
        self.check_uninitialized(body, ())
        blk.body = body
        self.block = None
        return blk

    def control_local(self, d: ir.Node, scope: Scope, blk: TypedBlock,
                      prefix: str | None = None) -> None:
        outer, prefix = prefix, prefix or blk.name
        if isinstance(d, ir.ConstDecl):
            self.declare_const(d, scope)
        elif isinstance(d, ir.VarDecl):
            decl = self.var_decl(d, scope)
            blk.local_decls.append((outer, decl))
        elif isinstance(d, ir.Instantiation):
            inst = self.instantiate(d, scope, prefix)
            if isinstance(inst, InstanceEntity):
                blk.instances.append(inst)
        elif isinstance(d, ir.ValueSetDecl):
            t = self.resolve_type(d.tref, scope)
            size = self.const_int(self.expr(d.size, scope), scope)
            vs = ValueSetEntity(d.name, self.qualify(d.name, d.annotations, prefix), t, size,
                                d.annotations, d.loc)
            scope.declare(d.name, vs, d.loc)
            blk.value_sets.append(vs)
        elif isinstance(d, ir.ActionDecl):
            a = self.make_action(d, scope, prefix)
            scope.declare(d.name, a, d.loc)
            blk.actions.append(a)
        elif isinstance(d, ir.TableDecl):
            t = self.make_table(d, scope, blk, prefix)
            scope.declare(d.name, t, d.loc)
            blk.tables.append(t)
        elif isinstance(d, ir.FunctionDecl):
            scope.declare(d.proto.name, FunctionEntity(d.proto.name, d), d.loc)
        else:
            raise CompileError(getattr(d, "loc", None),
                               f"unsupported declaration {type(d).__name__} in {blk.name}")

    def qualify(self, name: str, annotations: tuple[ir.Annotation, ...], block: str | None) -> str:
        """The control-plane name as p4c's front end assigns it."""
        explicit = ir.annotation_string(annotations, "name")
        if explicit is not None:
            if explicit.startswith("."):
                return explicit[1:]
            name = explicit
        return f"{block}.{name}" if block else name

    def var_decl(self, d: ir.VarDecl, scope: Scope) -> ir.VarDecl:
        t = self.resolve_type(d.tref, scope)
        init = None
        if d.init is not None:
            init = self.coerce(self.expr(d.init, scope, t), t, d.loc)
        ent = VarEntity(d.name, t, self._unique(d.name))
        scope.declare(d.name, ent, d.loc)
        self.add_variable(ent)
        return ir.VarDecl(d.tref, ent.unique, init, d.annotations, d.loc, t)

    def add_variable(self, ent: VarEntity) -> None:
        if self.block is not None:
            self.block.variables.append(ent)
        else:   # locals of global actions: laid out with the first block
            self.orphan_variables.append(ent)

    def new_temp(self, base: str, t: ir.Type, loc: Location) -> ir.Name:
        """A fresh compiler-generated local (`retval_0`, `hsiVar_0`, ...) as a Name."""
        if isinstance(t, ir.InfInt):
            t = ir.Bits(32)
        ent = VarEntity(base, t, self._unique(base))
        self.add_variable(ent)
        self.temp_names.add(ent.unique)
        return ir.Name(ent.unique, loc, t, ent)

    @staticmethod
    def temp_decl(name: ir.Name, init: ir.Expr | None, loc: Location) -> ir.Stmt:
        assert isinstance(name.ref, VarEntity)
        return ir.VarDecl(ir.TypeRef("name", name=str(name.type)), name.ref.unique, init, (),
                          loc, name.type)

    def instantiate(self, d: ir.Instantiation, scope: Scope, block: str) -> Any:
        t = self.resolve_type(d.tref, scope)
        if isinstance(t, ir.ExternT):
            ext = self.globals.lookup(t.name).decl
            ctors = [m for m in ext.methods if m.ret is None]
            ctor = next((c for c in ctors if len(c.params) == len(d.args)), None)
            if ctor is None and ctors:
                counts = " or ".join(str(len(c.params)) for c in ctors)
                raise CompileError(d.loc, f"{t.name}: constructor expects {counts} arguments, "
                                   f"got {len(d.args)}")
            args = []
            for a, p in zip(d.args, ctor.params if ctor else (), strict=False):
                pt = self.resolve_type(p.tref, self._generic_scope(ext, t))
                assert a.value is not None
                e = self.expr(a.value, scope, pt if not isinstance(pt, ir.TypeVar) else None)
                args.append(self.ctor_value(e))
            inst = InstanceEntity(d.name, self.qualify(d.name, d.annotations, block), t,
                                  tuple(args), d, d.annotations)
            scope.declare(d.name, inst, d.loc)
            return inst
        if isinstance(t, ir.BlockT) and t.kind == "control" and block:
            ent = self.globals.lookup(t.name)
            ctor_args = self.ctor_args(ent.decl, d.args, scope, d.loc)
            prefix = self.qualify(d.name, d.annotations, block)
            inst = ControlInstance(d.name, prefix, ent.decl, ctor_args)
            scope.declare(d.name, inst, d.loc)
            return inst
        if isinstance(t, ir.BlockT):
            raise CompileError(d.loc, f"instantiating {t.kind} {t.name} here is not supported")
        raise CompileError(d.loc, f"{t}: cannot instantiate this type")

    def ctor_args(self, decl: Any, args: tuple[ir.Arg, ...], scope: Scope, loc: Location
                  ) -> tuple[tuple[str, ir.Expr], ...]:
        """Constructor arguments of a parser/control: compile-time constants."""
        params = decl.ctor_params
        if any(a.name for a in args):
            by_name = {a.name: a for a in args}
            if set(by_name) != {p.name for p in params}:
                raise CompileError(loc, f"{decl.name}: constructor arguments do not match "
                                   f"its parameters ({', '.join(p.name for p in params)})")
            args = tuple(by_name[p.name] for p in params)
        if len(args) != len(params):
            raise CompileError(loc, f"{decl.name}: constructor expects {len(params)} "
                               f"arguments, got {len(args)}")
        out = []
        for a, p in zip(args, params, strict=True):
            pt = self.resolve_type(p.tref, self.globals)
            assert a.value is not None
            if isinstance(pt, ir.BlockT) and isinstance(a.value, ir.Name) and isinstance(
                    inst := scope.lookup(a.value.name), ControlInstance):
                out.append((p.name, inst))  # a control instance (`C2(c1) c2;`)
                continue
            v = self.coerce(self.expr(a.value, scope, pt), pt, a.loc)
            if not _is_constant(v):
                raise CompileError(a.loc, f"{decl.name}: constructor argument {p.name} must be "
                                   "a compile-time constant")
            out.append((p.name, v))
        return tuple(out)

    def ctor_value(self, e: ir.Expr) -> Any:
        if isinstance(e, ir.Lit):
            return e.value
        if isinstance(e, ir.BoolLit):
            return e.value
        if isinstance(e, ir.StrLit):
            return e.value
        if isinstance(e, ir.Member) and isinstance(e.type, ir.Enum):
            return e.member
        if isinstance(e, ir.Call) and isinstance(e.callee, ir.TypeName):
            return e
        raise CompileError(getattr(e, "loc", None), "constructor arguments must be constants")

    def _generic_scope(self, ext: ir.ExternDecl, t: ir.ExternT) -> Scope:
        s = Scope(self.globals, "generic")
        for name in ext.type_params:
            s.names[name] = TypeEntity(ir.TypeVar(name))
        for name, ty in zip(ext.type_params, t.type_args, strict=False):
            s.names[name] = TypeEntity(ty)
        return s

    # ------------------------------------------------------------ actions, tables

    def make_action(self, d: ir.ActionDecl, scope: Scope, block: str | None) -> ActionEntity:
        ascope = Scope(scope, "action", block or "")
        params = self._params(d.params, ascope, "action")
        seen_directionless = False
        for p in params:
            if not p.direction:
                seen_directionless = True
            elif seen_directionless:
                raise CompileError(d.loc, f"{d.name}: directionless parameters must come last")
        body = self.stmt(d.body, ascope, "action")
        assert isinstance(body, ir.Block)
        self.check_uninitialized(body, ())
        used = _referenced_params(body)
        for p, decl in zip(params, d.params, strict=True):
            if id(p) not in used and d.name != "NoAction":
                self.diags.warn(decl.loc, f"unused action parameter {p.name}")
        qualified = self.qualify(d.name, d.annotations, block)
        return ActionEntity(d.name, qualified, params, body, d.annotations, d.loc, d, block)

    def action_ref(self, r: ir.ActionRef, scope: Scope, table: str, partial: bool
                   ) -> TypedActionRef:
        a = scope.lookup(r.name)
        if not isinstance(a, ActionEntity):
            if a is None:
                raise CompileError(r.loc, f"{r.name}: undeclared action")
            raise CompileError(r.loc, f"{r.name} is not an action")
        args = r.args or ()
        need = a.params if not partial else tuple(p for p in a.params if p.direction)
        if r.args is not None or not partial:
            if len(args) != len(need) and not (partial and len(args) == len(a.params)):
                raise CompileError(r.loc, f"{r.name}: expects {len(need)} arguments, "
                                   f"got {len(args)}")
        typed = []
        for arg, p in zip(args, a.params, strict=False):
            assert arg.value is not None
            typed.append(self.coerce(self.expr(arg.value, scope, p.type), p.type, arg.loc))
        return TypedActionRef(a, tuple(typed), r.annotations)

    def make_table(self, d: ir.TableDecl, scope: Scope, blk: TypedBlock, prefix: str
                   ) -> TableEntity:
        keys = []
        for k in d.key:
            e = self.expr(k.expr, scope)
            if k.match_kind not in self.match_kinds:
                raise CompileError(k.loc, f"{k.match_kind}: unknown match kind")
            if not isinstance(ir.unwrap(e.type), (ir.Bits, ir.Bool, ir.Enum, ir.ErrorT)):
                raise CompileError(k.loc, f"table key of type {e.type} cannot be matched")
            root = _lvalue_root(k.expr)
            # A parameter of an inlined control keeps its own name (p4c names keys
            # before inlining).
            aliased = isinstance(root, ir.Name) and isinstance(scope.lookup(root.name),
                                                               AliasEntity)
            name = ir.annotation_string(k.annotations, "name") or \
                key_name(k.expr if aliased else e)
            keys.append(TypedKey(e, k.match_kind, name, k.annotations))
        if not d.actions:
            raise CompileError(d.loc, f"{d.name}: table has no actions property")
        actions = tuple(self.action_ref(r, scope, d.name, True) for r in d.actions)
        if all(a.action.name == "NoAction" for a in actions):
            self.diags.warn(d.loc, f"{d.name}: table has no actions other than NoAction")
        names = [a.action.qualified for a in actions]
        for a in actions:
            if names.count(a.action.qualified) > 1:
                raise CompileError(d.loc, f"{d.name}: action {a.action.name} listed twice")
        default = None
        if d.default_action is not None:
            default = self.action_ref(d.default_action, scope, d.name, False)
            if default.action.qualified not in names:
                raise CompileError(d.default_action.loc, f"{d.name}: default action "
                                   f"{default.action.name} is not in the actions list")
        entries = None
        if d.entries is not None:
            entries = []
            for en in d.entries:
                if len(en.keys) != len(keys):
                    raise CompileError(en.loc, f"entry has {len(en.keys)} keys, table "
                                       f"{d.name} has {len(keys)}")
                ks = tuple(self.keyset(x, k.expr.type, scope) for x, k in zip(en.keys, keys,
                                                                              strict=True))
                act = self.action_ref(en.action, scope, d.name, False)
                if act.action.qualified not in names:
                    raise CompileError(en.loc, f"{act.action.name} is not an action of "
                                       f"table {d.name}")
                prio = None
                prio_ann = ir.annotation(en.annotations, "priority")
                if en.priority is not None:
                    prio = self.const_int(self.expr(en.priority, scope), scope)
                elif prio_ann is not None and prio_ann.args:
                    prio = self.const_int(self.expr(prio_ann.args[0], scope), scope)
                entries.append(TypedEntry(ks, act, prio, en.loc))
            entries = tuple(entries)
        size = None
        impl = counters = meters = None
        timeout = False
        props: dict[str, Any] = {}
        for p in d.properties:
            if p.name == "size":
                size = self.const_int(self.expr(p.value, scope), scope)
            elif p.name in ("implementation", "counters", "meters"):
                inst = self.table_instance(p, scope, blk, d.name, prefix)
                if p.name == "implementation":
                    impl = inst
                elif p.name == "counters":
                    counters = inst
                else:
                    meters = inst
            elif p.name == "support_timeout":
                v = self.expr(p.value, scope)
                timeout = isinstance(v, ir.BoolLit) and v.value
            else:
                props[p.name] = self.expr(p.value, scope)
        return TableEntity(d.name, self.qualify(d.name, d.annotations, prefix), tuple(keys),
                           actions, default, d.default_const, entries, d.entries_const, size,
                           impl, counters,
                           meters, timeout, d.annotations, d.loc, props)

    def table_instance(self, p: ir.TableProperty, scope: Scope, blk: TypedBlock, table: str,
                       prefix: str) -> InstanceEntity:
        v = p.value
        if isinstance(v, ir.Name):
            inst = scope.lookup(v.name)
            if not isinstance(inst, InstanceEntity):
                raise CompileError(p.loc, f"{v.name}: not an extern instance")
            return inst
        if isinstance(v, ir.Call) and isinstance(v.callee, ir.TypeName):
            # An anonymous instance (`implementation = action_profile(128)`): p4c names it
            # after the table.
            d = ir.Instantiation(v.callee.tref, v.args, table, (), p.loc)
            inner = Scope(scope)
            inst = self.instantiate(d, inner, prefix)
            blk.instances.append(inst)
            return inst
        raise CompileError(p.loc, f"{p.name}: expected an extern instance")

    # ------------------------------------------------------------ statements

    def stmt(self, s: ir.Stmt, scope: Scope, ctx: str) -> ir.Stmt:
        typed = self._stmt(s, scope, ctx)
        if isinstance(typed, (ir.Block, ir.Empty, ir.Exit, ir.Loop, ir.Break, ir.Continue)):
            return typed
        return self.finish(typed, ctx)

    def _stmt(self, s: ir.Stmt, scope: Scope, ctx: str) -> ir.Stmt:
        if isinstance(s, ir.ForInStack):  # frontend hook: needs the stack's size
            stack = ir.unwrap(self.expr(s.collection, scope).type)
            if not isinstance(stack, ir.Stack):
                raise CompileError(s.loc, f"for loop over {stack}: expected a header "
                                   "stack or a range lo .. hi")
            return self._stmt(loops.unroll_for_in_stack(s, stack.size), scope, ctx)
        if isinstance(s, ir.Block):
            inner = Scope(scope, scope.kind, scope.prefix)
            stmts = tuple(self.stmt(x, inner, ctx) for x in s.stmts)
            self.warn_unreachable(stmts)
            return ir.Block(stmts, s.loc)
        if isinstance(s, ir.Loop):
            return self.run_time_loop(s, scope, ctx)
        if isinstance(s, (ir.Break, ir.Continue)):
            return s  # a run-time loop's own (loops.find_stray_jump found the others)
        if isinstance(s, ir.Assign):
            self.check_alias_write(s.lhs, scope, s.loc)
            lhs = self.expr(s.lhs, scope)
            self.check_lvalue(lhs, s.loc)
            rhs = self.coerce(self.expr(s.rhs, scope, lhs.type), lhs.type, s.loc)
            return ir.Assign(lhs, rhs, s.loc)
        if isinstance(s, ir.CallStmt):
            call = self.expr(s.call, scope)
            if not isinstance(call, ir.Call):
                raise CompileError(s.loc, "expected a call")
            return ir.CallStmt(call, s.loc)
        if isinstance(s, ir.If):
            cond = self.expr(s.cond, scope, ir.Bool())
            if not isinstance(cond.type, ir.Bool):
                raise CompileError(s.loc, f"if condition must be bool, not {cond.type}")
            then = self.stmt(s.then, Scope(scope, scope.kind, scope.prefix), ctx)
            other = self.stmt(s.other, Scope(scope, scope.kind, scope.prefix), ctx) \
                if s.other else None
            return ir.If(cond, then, other, s.loc)
        if isinstance(s, ir.VarDecl):
            return self.var_decl(s, scope)
        if isinstance(s, ir.ConstDecl):
            self.declare_const(s, scope)
            return ir.Empty(s.loc)
        if isinstance(s, (ir.Empty, ir.Exit)):
            if isinstance(s, ir.Exit) and ctx == "parser":
                raise CompileError(s.loc, "exit is not allowed in a parser")
            return s
        if isinstance(s, ir.Return):
            ret_t = _scope_attr(scope, "ret_type")
            if s.value is not None:
                if ctx != "function":
                    raise CompileError(s.loc, "return with a value outside a function")
                if isinstance(ret_t, ir.Void):
                    raise CompileError(s.loc, "return with a value in a void function")
                return ir.Return(self.coerce(self.expr(s.value, scope, ret_t), ret_t, s.loc),
                                 s.loc)
            if ctx == "function" and ret_t is not None and not isinstance(ret_t, ir.Void):
                raise CompileError(s.loc, f"return without a value in a function returning "
                                   f"{ret_t}")
            return s
        if isinstance(s, ir.Switch):
            return self.switch(s, scope, ctx)
        raise CompileError(getattr(s, "loc", None), f"unsupported statement {type(s).__name__}")

    def run_time_loop(self, s: ir.Loop, scope: Scope, ctx: str) -> ir.Loop:
        """A `for` loop the front end could not unroll: bmv2 runs it in an action."""
        if ctx == "parser":
            raise CompileError(s.loc, "this for loop's iterations are known only at run "
                               "time, and bmv2 cannot loop inside a parser state")
        inner = Scope(scope, scope.kind, scope.prefix)
        init = tuple(self.stmt(x, inner, ctx) for x in s.init)
        cond = self.expr(s.cond, inner, ir.Bool())
        if not isinstance(cond.type, ir.Bool):
            raise CompileError(s.loc, f"for loop condition must be bool, not {cond.type}")
        if _inline_calls(cond):
            raise CompileError(s.loc, "a call in the condition of a for loop whose "
                               "iterations are known only at run time is not supported")
        body = self.stmt(s.body, Scope(inner, inner.kind, inner.prefix), ctx)
        updates = tuple(self.stmt(x, inner, ctx) for x in s.updates)
        for node in (body, *updates):
            if any(isinstance(x, ir.Return) for x in _walk(node)):
                raise CompileError(s.loc, "return inside a for loop whose iterations are "
                                   "known only at run time is not supported")
        return ir.Loop(init, cond, updates, body, s.loc)

    def switch(self, s: ir.Switch, scope: Scope, ctx: str) -> ir.Switch:
        e = self.expr(s.expr, scope)
        cases = []
        seen: set[Any] = set()
        for c in s.cases:
            label = None
            if c.label is not None:
                if isinstance(e.type, ir.ActionEnum):
                    if not isinstance(c.label, ir.Name):
                        raise CompileError(c.loc, "switch on action_run needs action names")
                    a = scope.lookup(c.label.name)
                    if not isinstance(a, ActionEntity):
                        raise CompileError(c.loc, f"{c.label.name}: not an action")
                    label = ir.Name(c.label.name, c.label.loc, e.type, a)
                    key: Any = a.qualified
                else:
                    label = self.coerce(self.expr(c.label, scope, e.type), e.type, c.loc)
                    key = getattr(label, "value", None)
                if key in seen:
                    raise CompileError(c.loc, "duplicate switch label")
                seen.add(key)
            body = self.stmt(c.body, scope, ctx) if c.body is not None else None
            cases.append(ir.SwitchCase(label, body, c.loc))  # type: ignore[arg-type]
        if not isinstance(e.type, ir.ActionEnum) and not _is_num(e.type) \
                and not isinstance(e.type, ir.Enum):
            raise CompileError(s.loc, f"cannot switch on a value of type {e.type}")
        return ir.Switch(e, tuple(cases), s.loc)

    def check_lvalue(self, e: ir.Expr, loc: Location) -> None:
        base = e
        while isinstance(base, (ir.Member, ir.Index, ir.Slice)):
            base = base.expr
        if isinstance(base, ir.Name) and isinstance(base.ref, (ParamEntity, VarEntity)):
            ref = base.ref
            if isinstance(ref, ParamEntity) and ref.direction in ("in", ""):
                if ref.owner != "action" or ref.direction == "in":
                    raise CompileError(loc, f"cannot assign to {ref.name}: it is a read-only "
                                       f"parameter")
            return
        raise CompileError(loc, "the left-hand side of an assignment must be a variable, "
                           "parameter or field")

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
                if e.value >= limit and not (target.signed and e.value < 1 << target.bits):
                    raise CompileError(e.loc or loc, f"{e.value}: value does not fit in "
                                       f"{target.bits} bits ({tt})")
                return ir.Lit(_wrap(e.value, target), e.loc, tt, e.base)
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
        if isinstance(bt, ir.Stack):
            if isinstance(idx, ir.Lit) and not 0 <= idx.value < bt.size:
                raise CompileError(e.loc, f"index {idx.value} out of bounds for {bt}")
            if not _is_num(idx.type):
                raise CompileError(e.loc, f"stack index must be an integer, not {idx.type}")
            return ir.Index(base, idx, e.loc, bt.elem)
        if isinstance(bt, ir.TupleT) and isinstance(idx, ir.Lit):
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
        elif isinstance(dst, ir.StructLike) and isinstance(x, (ir.ListExpr, ir.StructExpr)):
            return self.coerce(x, to, e.loc)
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

    def e_ListExpr(self, e: ir.ListExpr, scope: Scope, expected) -> ir.Expr:
        if isinstance(expected, ir.StructLike):
            items = tuple(self.expr(x, scope, f.type) for x, f in
                          zip(e.items, expected.fields, strict=False))
            return self.list_to(ir.ListExpr(items, e.loc), expected, e.loc)
        items = tuple(self.expr(x, scope) for x in e.items)
        return ir.ListExpr(items, e.loc, ir.TupleT(tuple(i.type for i in items)))  # type: ignore

    def e_StructExpr(self, e: ir.StructExpr, scope: Scope, expected) -> ir.Expr:
        if e.fields and e.fields[-1][0] == "...":  # frontend hook: `{a = 1, ...}`
            e = default_values.fill_defaults(e, expected)
        if isinstance(expected, ir.StructLike):
            fields = []
            for name, x in e.fields:
                f = expected.field(name)
                if f is None:
                    raise CompileError(e.loc, f"{name}: no such field in {expected.name}")
                fields.append((name, self.coerce(self.expr(x, scope, f.type), f.type, e.loc)))
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
        args = list(e.args)
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

    def call_function(self, e: ir.Call, fn: ir.Name, f: FunctionEntity, scope: Scope) -> ir.Expr:
        proto = f.decl.proto
        args = self._args(e, proto.params, scope, {}, f.name)
        ret = self.resolve_type(proto.ret, scope) if proto.ret else ir.Void()
        fscope = Scope(self.globals, "function")
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
                and not _runtime_indices(stmts[0].value):
            # `return expr;`: substituted into the caller's expression by the back end.
            return ir.Call(fn, args, (), e.loc, ret, ("function", f.name, body, proto))
        if not isinstance(ret, ir.Void) and not _always_returns(body):
            raise CompileError(f.decl.loc, f"{f.name}: function does not return a value on "
                               "every path")
        # Anything else is inlined at the call site (as p4c's FunctionsInliner does).
        return ir.Call(fn, args, (), e.loc, ret, ("inline_function", f.name, body, proto,
                                                   params, _has_side_effects(body, params)))

    # ------------------------------------------------------------ statement lowering

    def finish(self, s: ir.Stmt, ctx: str) -> ir.Stmt:
        """Lowerings p4c's front/mid end does per statement: inline functions whose body
        is more than `return expr;` (copy-in/copy-out), then replace run-time header stack
        indices by an if/else chain over the constant indices (HSIndexSimplifier)."""
        pre: list[ir.Stmt] = []
        s = self.lift_calls(s, pre)
        if s is None:
            out: list[ir.Stmt] = pre
        else:
            out = pre + [s]
        out = [self.concretize(x) for x in out]
        return out[0] if len(out) == 1 else ir.Block(tuple(out), getattr(s, "loc", None)
                                                      or out[0].loc)  # type: ignore

    def lift_calls(self, s: ir.Stmt, pre: list[ir.Stmt]) -> ir.Stmt | None:
        if not _inline_calls(s):
            return s
        lift = self.lift_expr
        if isinstance(s, ir.CallStmt):
            call = s.call
            args = tuple(dataclasses.replace(a, value=lift(a.value, pre, False))
                         if a.value is not None else a for a in call.args)
            call = dataclasses.replace(call, args=args)
            if call.target and call.target[0] == "inline_function":
                self.expand_call(call, pre)
                return None
            return ir.CallStmt(call, s.loc)
        if isinstance(s, ir.Assign):
            lhs = lift(s.lhs, pre, False)
            if _inline_calls(s.rhs):   # the target is evaluated before the value
                from .passes.short_circuit import freeze_indices
                lhs = freeze_indices(self, lhs, pre)
            return ir.Assign(lhs, lift(s.rhs, pre, False), s.loc)
        if isinstance(s, ir.If):
            return dataclasses.replace(s, cond=lift(s.cond, pre, False))
        if isinstance(s, ir.VarDecl) and s.init is not None:
            return dataclasses.replace(s, init=lift(s.init, pre, False))
        if isinstance(s, ir.Switch):
            return dataclasses.replace(s, expr=lift(s.expr, pre, False))
        if isinstance(s, ir.Return) and s.value is not None:
            return dataclasses.replace(s, value=lift(s.value, pre, False))
        return s

    def lift_expr(self, e: Any, pre: list[ir.Stmt], guarded: bool) -> Any:
        """`e` with calls of inlined functions replaced by their result temporaries (the
        inlined statements go to `pre`, in evaluation order)."""
        if not isinstance(e, ir.Expr) or not _inline_calls(e):
            return e
        from .passes import short_circuit  # the passes package imports this module
        if isinstance(e, ir.Binary) and e.op in ("&&", "||"):
            if short_circuit.has_side_effect_call(e.right):
                return short_circuit.lower_and_or(self, e, pre)
            return dataclasses.replace(e, left=self.lift_expr(e.left, pre, guarded),
                                       right=self.lift_expr(e.right, pre, True))
        if isinstance(e, ir.Mux):
            if short_circuit.has_side_effect_call(e.then, e.other):
                return short_circuit.lower_mux(self, e, pre)
            return dataclasses.replace(e, cond=self.lift_expr(e.cond, pre, guarded),
                                       then=self.lift_expr(e.then, pre, True),
                                       other=self.lift_expr(e.other, pre, True))
        if isinstance(e, ir.Call):
            args = tuple(dataclasses.replace(a, value=self.lift_expr(a.value, pre, guarded))
                         if a.value is not None else a for a in e.args)
            e = dataclasses.replace(e, args=args)
            if e.target and e.target[0] == "inline_function":
                result = self.expand_call(e, pre)
                if result is None:
                    raise CompileError(e.loc, f"{e.target[1]} returns no value")
                return result
            return e
        return short_circuit.lift_operands(self, e, pre, guarded)

    def expand_call(self, call: ir.Call, pre: list[ir.Stmt]) -> ir.Expr | None:
        """Inline one function call: copy-in, the body without returns, copy-out."""
        _, name, body, proto, params, _ = call.target
        loc = call.loc
        subst: dict[int, ir.Expr] = {}
        post: list[ir.Stmt] = []
        for p, a in zip(params, call.args, strict=True):
            v = a.value
            direction = p.direction or "in"
            if direction == "in" and _is_constant(v):
                subst[id(p)] = v
                continue
            tmp = self.new_temp(p.name, p.type, loc)
            subst[id(p)] = tmp
            if direction == "out" and v is None:
                pre.append(self.temp_decl(tmp, None, loc))
                continue
            pre.append(self.temp_decl(tmp, v if direction in ("in", "inout") else None, loc))
            if direction in ("out", "inout") and v is not None:
                from .passes.short_circuit import freeze_indices  # copy-out target: now
                post.append(ir.Assign(freeze_indices(self, v, pre), tmp, loc))
        new_body = _rewrite(body, lambda x: subst.get(id(x.ref))
                            if isinstance(x, ir.Name) and isinstance(x.ref, ParamEntity)
                            else None)
        ret_t = call.type
        retval = None if isinstance(ret_t, ir.Void) or ret_t is None \
            else self.new_temp("retval", ret_t, loc)
        if retval is not None:
            pre.append(self.temp_decl(retval, None, loc))
        pre.extend(self.remove_returns(list(new_body.stmts), retval, loc))
        pre.extend(post)
        return retval

    def remove_returns(self, stmts: list[ir.Stmt], retval: ir.Name | None, loc: Location
                       ) -> list[ir.Stmt]:
        """A function body without `return` (passes/remove_returns.py)."""
        from .passes.remove_returns import remove_returns  # passes import this module

        def make_flag() -> tuple[ir.Name, ir.Stmt]:
            flag = self.new_temp("hasReturned", ir.Bool(), loc)
            return flag, self.temp_decl(flag, ir.BoolLit(False, loc), loc)
        return remove_returns(stmts, retval, make_flag)

    def concretize(self, s: ir.Stmt) -> ir.Stmt:
        """Run-time header stack indices: `hdr.s[i].f = x;` becomes
        `if (i == 0) hdr.s[0].f = x; else if (i == 1) ...` (p4c's HSIndexSimplifier;
        an index that is an expression is first saved in a `hsiVar` temporary)."""
        if isinstance(s, ir.Block):
            return ir.Block(tuple(self.concretize(x) for x in s.stmts), s.loc)
        if isinstance(s, ir.If):
            scan: Any = s.cond
            distinct: list[ir.Index] = []
            for x in _runtime_indices(scan):
                if not any(_equiv(x, y) for y in distinct):
                    distinct.append(x)
            if len(distinct) > 1:
                # Several run-time indices in one condition: evaluate it into a flag first.
                flag = self.new_temp("cond", ir.Bool(), s.loc)
                return ir.Block((self.temp_decl(flag, ir.BoolLit(False, s.loc), s.loc),
                                 self.concretize(ir.Assign(flag, s.cond, s.loc)),
                                 dataclasses.replace(s, cond=flag)), s.loc)
        elif isinstance(s, ir.Switch):
            scan = s.expr
        elif isinstance(s, (ir.Assign, ir.CallStmt, ir.VarDecl, ir.Return)):
            scan = s
        else:
            return s
        found = _runtime_indices(scan)
        if not found:
            return s
        idx = found[0]
        stack_t = ir.unwrap(idx.expr.type)  # type: ignore[arg-type]
        assert isinstance(stack_t, ir.Stack)
        pre: list[ir.Stmt] = []
        index = idx.index
        if isinstance(index, (ir.Binary, ir.Mux, ir.Unary, ir.Cast, ir.Slice, ir.Call)):
            tmp = self.new_temp("hsiVar", index.type or ir.Bits(32), idx.loc)
            pre.append(ir.Assign(tmp, index, idx.loc))
            s = _rewrite_in(s, lambda x: dataclasses.replace(x, index=tmp)
                            if isinstance(x, ir.Index) and _equiv(x, idx) else None)
            idx = ir.Index(idx.expr, tmp, idx.loc, idx.type)
            index = tmp
        it = index.type if isinstance(ir.unwrap(index.type), ir.Bits) else ir.Bits(32)  # type: ignore
        result: ir.Stmt | None = s.other if isinstance(s, ir.If) else None
        for i in reversed(range(stack_t.size)):
            lit = ir.Lit(i, idx.loc, it)
            si = _rewrite_in(s, lambda x, lit=lit: dataclasses.replace(x, index=lit)
                             if isinstance(x, ir.Index) and _equiv(x, idx) else None)
            eq = ir.Binary("==", index, lit, idx.loc, ir.Bool())
            if isinstance(si, ir.If):
                result = ir.If(ir.Binary("&&", eq, si.cond, si.loc, ir.Bool()), si.then,
                               result, si.loc)
            else:
                result = ir.If(eq, self.concretize(si), result, s.loc)  # type: ignore
        assert result is not None
        return ir.Block(tuple(pre + [result]), s.loc) if pre else result  # type: ignore

    def warn_once(self, loc: Location | None, message: str) -> None:
        key = (str(loc), message)
        if key not in self.warned:
            self.warned.add(key)
            self.diags.warn(loc, message)

    def check_uninitialized(self, body: ir.Block, params: tuple[ParamEntity, ...]) -> None:
        """p4c's "may be uninitialized" warnings: scalar locals declared without an
        initializer (and out parameters of functions) read before every path assigns
        them. Action calls and table applies count as assigning everything (actions
        may write control locals)."""
        tracked: dict[str, str] = {}
        for n in _walk(body):
            if isinstance(n, ir.VarDecl) and n.init is None and n.name not in self.temp_names \
                    and isinstance(ir.unwrap(n.type), (ir.Bits, ir.Bool, ir.Enum)):  # type: ignore
                tracked[n.name] = n.name.rsplit("_", 1)[0]
        outs = {f"param:{id(p)}": p.name for p in params if p.direction == "out"
                and isinstance(ir.unwrap(p.type), (ir.Bits, ir.Bool, ir.Enum))}
        tracked.update(outs)
        if not tracked:
            return
        end = _Uninit(self, tracked).block(list(body.stmts), set())
        if end is not None:
            for key, name in outs.items():
                if key not in end:
                    self.warn_once(body.loc, f"out parameter {name} may be uninitialized "
                                   "when the function ends")

    def warn_unreachable(self, stmts: tuple[ir.Stmt, ...]) -> None:
        for i, x in enumerate(stmts[:-1]):
            if isinstance(x, (ir.Exit, ir.Return)) or (isinstance(x, ir.If)
                                                        and _always_leaves(x)):
                rest = [y for y in stmts[i + 1:] if not isinstance(y, ir.Empty)]
                if rest:
                    self.diags.warn(getattr(rest[0], "loc", None), "unreachable code")
                return

    def check_alias_write(self, lhs: ir.Expr, scope: Scope, loc: Location) -> None:
        base = lhs
        while isinstance(base, (ir.Member, ir.Index, ir.Slice)):
            base = base.expr
        if isinstance(base, ir.Name):
            ent = scope.lookup(base.name)
            if isinstance(ent, AliasEntity) and ent.direction in ("", "in"):
                raise CompileError(loc, f"cannot assign to {ent.name}: it is a read-only "
                                   "parameter")

    def inline_control(self, e: ir.Call, fn: ir.Member, scope: Scope) -> ir.Expr:
        """`inst.apply(args)`: check the instantiated control's body in place; its
        locals join the enclosing block under the instance's name."""
        assert isinstance(fn.expr, ir.Name)
        inst: ControlInstance = fn.expr.ref
        d: ir.ControlDecl = inst.decl
        if len(e.args) != len(d.params):
            raise CompileError(e.loc, f"{d.name}.apply: expects {len(d.params)} arguments, "
                               f"got {len(e.args)}")
        blk = self.block
        assert blk is not None
        inner = Scope(self.globals, "control", inst.prefix)
        for name, value in inst.ctor_args:
            inner.declare(name, value if isinstance(value, ControlInstance)
                          else ConstEntity(name, value), d.loc)
        typed = []
        for arg, p in zip(e.args, d.params, strict=True):
            if arg.value is None:
                raise CompileError(arg.loc, f"{d.name}.apply: {p.name} needs an argument")
            pt = self.resolve_type(p.tref, self.globals)
            v = self.coerce(self.expr(arg.value, scope, pt), pt, arg.loc)
            if p.direction in ("out", "inout"):
                self.check_lvalue(v, arg.loc)
            typed.append((p, pt, v))
        # p4c's inliner passes lvalue arguments directly unless they alias another
        # argument that the control may write; anything else goes through a temporary
        # (copy-in before the body, copy-out after it).
        copy_in: list[ir.Stmt] = []
        copy_out: list[ir.Stmt] = []
        for i, (p, pt, v) in enumerate(typed):
            writable = p.direction in ("out", "inout")
            aliased = any(_overlaps(v, w) and (writable or q.direction in ("out", "inout"))
                          for j, (q, _, w) in enumerate(typed) if j != i)
            if isinstance(v, ir.Name) and isinstance(v.ref, ParamEntity) \
                    and v.ref.owner == "control" and v.type == pt and not aliased:
                inner.declare(p.name, ParamEntity(p.name, p.direction, pt, "control",
                                                  v.ref.index, p.annotations), p.loc)
            elif p.direction in ("", "in") and _is_constant(v):
                inner.declare(p.name, AliasEntity(p.name, v, "in"), p.loc)
            elif _is_lvalue_path(v) and not aliased:
                inner.declare(p.name, AliasEntity(p.name, v, p.direction), p.loc)
            else:
                tmp = self.new_temp(p.name, pt, e.loc)
                inner.declare(p.name, AliasEntity(p.name, tmp, p.direction), p.loc)
                if p.direction != "out":
                    copy_in.append(ir.Assign(tmp, v, e.loc))
                elif isinstance(ir.unwrap(pt), ir.StructLike) and \
                        ir.unwrap(pt).kind == "header":  # type: ignore[union-attr]
                    copy_in.append(ir.CallStmt(ir.Call(
                        ir.Member(tmp, "setInvalid", e.loc, ir.CallableT("builtin",
                                                                         "setInvalid")),
                        (), (), e.loc, ir.Void(), ("builtin", "setInvalid")), e.loc))
                if writable:
                    copy_out.append(ir.Assign(v, tmp, e.loc))
        first_local = len(blk.local_decls)
        for loc_decl in d.locals:
            self.control_local(loc_decl, inner, blk, inst.prefix)
        body = self.stmt(d.body, Scope(inner, "apply", inst.prefix), "control")
        assert isinstance(body, ir.Block)
        # locals with an initialiser are set at each apply (as LocalInitializers does)
        inits = tuple(x for _, x in blk.local_decls[first_local:] if x.init is not None)
        body = ir.Block(inits + body.stmts, body.loc)
        if copy_in:
            body = ir.Block(tuple(self.concretize(x) for x in copy_in) + (body,), body.loc)
        return ir.Call(fn, (), (), e.loc, ir.Void(),
                       ("control_apply", inst.prefix, body,
                        tuple(self.concretize(x) for x in copy_out)))

    def call_builtin(self, e: ir.Call, fn: ir.Member, scope: Scope) -> ir.Expr:
        m = fn.member
        if m in ir.SIZE_METHODS and not e.args and (  # folded: a constant of the type
                size := ir.size_method(fn.expr.type, m)) is not None:  # type: ignore[arg-type]
            return ir.Lit(size, e.loc, ir.InfInt())
        if m == "isValid":
            if e.args:
                raise CompileError(e.loc, "isValid takes no arguments")
            return ir.Call(fn, (), (), e.loc, ir.Bool(), ("builtin", m))
        if m in ("setValid", "setInvalid"):
            if e.args:
                raise CompileError(e.loc, f"{m} takes no arguments")
            self.check_lvalue(fn.expr, e.loc)
            return ir.Call(fn, (), (), e.loc, ir.Void(), ("builtin", m))
        if m in ("push_front", "pop_front"):
            if len(e.args) != 1:
                raise CompileError(e.loc, f"{m} expects 1 argument, got {len(e.args)}")
            assert e.args[0].value is not None
            n = self.expr(e.args[0].value, scope)
            if not isinstance(n, ir.Lit):
                raise CompileError(e.loc, f"{m}: the count must be a constant")
            return ir.Call(fn, (ir.Arg(n, "count", e.loc),), (), e.loc, ir.Void(), ("builtin", m))
        raise CompileError(e.loc, f"{m}: unknown method, or wrong arguments")

    def call_method(self, e: ir.Call, fn: ir.Member, scope: Scope) -> ir.Expr:
        inst_t = ir.unwrap(fn.expr.type)  # type: ignore[arg-type]
        assert isinstance(inst_t, ir.ExternT)
        ext = self.globals.lookup(inst_t.name).decl
        protos = [p for p in ext.methods if p.name == fn.member and p.ret is not None]
        fitting = [p for p in protos if len(p.params) == len(e.args)]
        if not fitting:
            counts = " or ".join(sorted({str(len(p.params)) for p in protos}))
            raise CompileError(e.loc, f"{inst_t.name}.{fn.member}: expects {counts} arguments, "
                               f"got {len(e.args)}")
        proto = fitting[0]
        bindings = dict(inst_t.bindings())
        for tp, ta in zip(proto.type_params, e.type_args, strict=False):
            bindings[tp] = self.resolve_type(ta, scope)
        tparams = tuple(ext.type_params) + tuple(proto.type_params)
        args = self._args(e, proto.params, scope, bindings, f"{inst_t.name}.{fn.member}",
                          tparams)
        assert proto.ret is not None
        ret = self.resolve_type(proto.ret, self._bound(bindings, tparams))
        return ir.Call(fn, args, e.type_args, e.loc, ret, ("method", inst_t.name, fn.member,
                                                            proto))


def _scope_attr(scope: Scope | None, name: str) -> Any:
    while scope is not None:
        if hasattr(scope, name):
            return getattr(scope, name)
        scope = scope.parent
    return None


_SKIP = ("ref", "type", "loc", "target", "tref", "annotations")


def _children(x: Any) -> list[Any]:
    out = []
    for f in dataclasses.fields(x):
        if f.name in _SKIP:
            continue
        v = getattr(x, f.name)
        if isinstance(v, ir.Node):
            out.append(v)
        elif isinstance(v, tuple):
            for y in v:
                if isinstance(y, ir.Node):
                    out.append(y)
                elif isinstance(y, tuple):
                    out.extend(z for z in y if isinstance(z, ir.Node))
    return out


def _walk(x: Any):
    """Every node of a typed tree, children first (not inside call targets)."""
    if isinstance(x, ir.Node):
        for c in _children(x):
            yield from _walk(c)
        yield x


def _rewrite(x: Any, fn) -> Any:
    """Rebuild a typed tree bottom-up; `fn(node)` returns a replacement or None."""
    if not isinstance(x, ir.Node):
        return x
    changes = {}
    for f in dataclasses.fields(x):
        if f.name in _SKIP:
            continue
        v = getattr(x, f.name)
        if isinstance(v, ir.Node):
            nv = _rewrite(v, fn)
        elif isinstance(v, tuple) and any(isinstance(y, (ir.Node, tuple)) for y in v):
            nv = tuple(_rewrite(y, fn) if isinstance(y, ir.Node) else
                       tuple(_rewrite(z, fn) for z in y) if isinstance(y, tuple) else y
                       for y in v)
        else:
            continue
        if nv is not v and nv != v:
            changes[f.name] = nv
    if changes:
        x = dataclasses.replace(x, **changes)
    r = fn(x)
    return x if r is None else r


_rewrite_in = _rewrite


def _equiv(a: Any, b: Any) -> bool:
    """Structural equality ignoring source locations."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ir.Node):
        for f in dataclasses.fields(a):
            if f.name == "loc":
                continue
            va, vb = getattr(a, f.name), getattr(b, f.name)
            if f.name == "ref":
                if va is not vb and va != vb:
                    return False
            elif not _equiv(va, vb):
                return False
        return True
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_equiv(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _runtime_indices(x: Any) -> list[ir.Index]:
    return [n for n in _walk(x) if isinstance(n, ir.Index)
            and not isinstance(n.index, ir.Lit)
            and isinstance(ir.unwrap(n.expr.type), ir.Stack)]  # type: ignore[arg-type]


def _inline_calls(x: Any) -> bool:
    return any(isinstance(n, ir.Call) and n.target and n.target[0] == "inline_function"
               for n in _walk(x))


def _has_side_effects(body: ir.Block, params: tuple[ParamEntity, ...]) -> bool:
    if any(p.direction in ("out", "inout") for p in params):
        return True
    return any(isinstance(n, ir.Call) and n.target and (
        n.target[0] in ("method", "extern_function", "action", "apply")
        or (n.target[0] in ("builtin", "inline_function") and n.target[1] != "isValid"))
        for n in _walk(body))


def _lvalue_root(e: Any) -> Any:
    while isinstance(e, (ir.Member, ir.Index, ir.Slice)):
        e = e.expr
    return e


def _is_lvalue_path(e: Any) -> bool:
    """A field/header/variable reference without run-time indices."""
    root = _lvalue_root(e)
    return isinstance(root, ir.Name) and isinstance(root.ref, (ParamEntity, VarEntity)) \
        and not _runtime_indices(e) and not isinstance(e, ir.Slice)


def _overlaps(a: Any, b: Any) -> bool:
    """Whether two lvalue-ish expressions may denote overlapping storage."""
    ra, rb = _lvalue_root(a), _lvalue_root(b)
    if not (isinstance(ra, ir.Name) and isinstance(rb, ir.Name)):
        return False
    if ra.ref is not rb.ref and not (isinstance(ra.ref, ParamEntity) and
                                     isinstance(rb.ref, ParamEntity)
                                     and ra.ref.owner == rb.ref.owner == "control"
                                     and ra.ref.index == rb.ref.index):
        return False
    ka, kb = key_name(a), key_name(b)
    return ka == kb or ka.startswith(kb + ".") or ka.startswith(kb + "[") or \
        kb.startswith(ka + ".") or kb.startswith(ka + "[")


def _is_constant(v: Any) -> bool:
    return isinstance(v, (ir.Lit, ir.BoolLit, ir.ErrorMember, ir.StrLit)) or (
        isinstance(v, ir.Member) and isinstance(v.expr, ir.TypeName))


def _always_returns(s: Any) -> bool:
    """True if every path through `s` ends in `return` (or `exit`)."""
    if isinstance(s, (ir.Return, ir.Exit)):
        return True
    if isinstance(s, ir.Block):
        return any(_always_returns(x) for x in s.stmts)
    if isinstance(s, ir.If):
        return s.other is not None and _always_returns(s.then) and _always_returns(s.other)
    if isinstance(s, ir.Switch):
        return any(c.label is None for c in s.cases) and all(
            _always_returns(c.body) for c in s.cases if c.body is not None)
    return False


_always_leaves = _always_returns


def _var_key(e: Any) -> str | None:
    if isinstance(e, ir.Name):
        if isinstance(e.ref, VarEntity):
            return e.ref.unique
        if isinstance(e.ref, ParamEntity):
            return f"param:{id(e.ref)}"
    return None


class _Uninit:
    """Definite-assignment walk for check_uninitialized. A set of assigned keys flows
    through the statements; None means the path has left (return/exit)."""

    def __init__(self, checker: Checker, tracked: dict[str, str]):
        self.c = checker
        self.tracked = tracked

    def read(self, e: Any, assigned: set[str]) -> None:
        for n in _walk(e):
            k = _var_key(n)
            if k in self.tracked and k not in assigned:
                self.c.warn_once(n.loc, f"{self.tracked[k]} may be uninitialized")
                assigned.add(k)     # report each variable once per path

    def call(self, call: ir.Call, assigned: set[str]) -> None:
        tgt = call.target or ()
        kind = tgt[0] if tgt else ""
        proto = tgt[-1] if kind in ("method", "extern_function") else \
            tgt[3] if kind in ("function", "inline_function") else None
        dirs = [p.direction for p in proto.params] if isinstance(proto, ir.MethodProto) else []
        for i, a in enumerate(call.args):
            d = dirs[i] if i < len(dirs) else "in"
            if a.value is None:
                continue
            k = _var_key(a.value)
            if d == "out" and k is not None:
                assigned.add(k)
            else:
                self.read(a.value, assigned)
                if d == "inout" and k is not None:
                    assigned.add(k)
        if kind in ("action", "apply", "control_apply"):
            assigned.update(self.tracked)

    def block(self, stmts: list[ir.Stmt], assigned: set[str] | None) -> set[str] | None:
        for s in stmts:
            if assigned is None:
                return None
            assigned = self.stmt(s, assigned)
        return assigned

    def stmt(self, s: ir.Stmt, a: set[str]) -> set[str] | None:
        if isinstance(s, ir.Block):
            return self.block(list(s.stmts), a)
        if isinstance(s, ir.VarDecl):
            if s.init is not None:
                self.read(s.init, a)
                a.add(s.name)
            return a
        if isinstance(s, ir.Assign):
            for n in _walk(s.rhs):
                if isinstance(n, ir.Call):
                    self.call(n, a)
            self.read(s.rhs, a)
            k = _var_key(s.lhs)
            if k is not None:
                a.add(k)
            else:
                self.read(s.lhs, a)
            return a
        if isinstance(s, ir.CallStmt):
            self.call(s.call, a)
            return a
        if isinstance(s, ir.If):
            for n in _walk(s.cond):
                if isinstance(n, ir.Call):
                    self.call(n, a)
            self.read(s.cond, a)
            t = self.stmt(s.then, set(a))
            o = self.stmt(s.other, set(a)) if s.other is not None else set(a)
            if t is None:
                return o
            if o is None:
                return t
            return t & o
        if isinstance(s, ir.Switch):
            for n in _walk(s.expr):
                if isinstance(n, ir.Call):
                    self.call(n, a)
            self.read(s.expr, a)
            outs = [self.stmt(c.body, set(a)) for c in s.cases if c.body is not None]
            if not any(c.label is None for c in s.cases):
                outs.append(set(a))
            live = [x for x in outs if x is not None]
            if not live:
                return None
            r = live[0]
            for x in live[1:]:
                r = r & x
            return r
        if isinstance(s, ir.Return):
            if s.value is not None:
                self.read(s.value, a)
            return None
        if isinstance(s, ir.Exit):
            return None
        if isinstance(s, ir.Loop):  # the body may run no time at all
            a = self.block(list(s.init), a)
            if a is None:
                return None
            self.read(s.cond, a)
            self.block([s.body, *s.updates], set(a))
            return a
        return a


def _header_field_ok(t: ir.Type) -> bool:
    t = ir.unwrap(t)
    if isinstance(t, ir.StructLike) and t.kind == "struct":
        return all(_header_field_ok(f.type) for f in t.fields)
    return isinstance(t, (ir.Bits, ir.Varbit, ir.Bool)) or (
        isinstance(t, ir.Enum) and t.underlying is not None)


def _referenced_params(node: Any) -> set[int]:
    """ids of the ParamEntity objects a typed statement tree refers to."""
    found: set[int] = set()

    def walk(x: Any) -> None:
        if isinstance(x, ir.Name) and isinstance(x.ref, ParamEntity):
            found.add(id(x.ref))
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                if f.name not in ("ref", "type", "loc", "target"):
                    walk(getattr(x, f.name))

    walk(node)
    return found


def _wrap(v: int, t: ir.Bits) -> int:
    """P4 wrap-around: the value modulo 2^W (two's complement range for int<W>)."""
    v &= (1 << t.bits) - 1
    if t.signed and v >= 1 << (t.bits - 1):
        v -= 1 << t.bits
    return v


def _fold(op: str, a: int, b: int, t: ir.Type | None, loc: Location) -> int:
    if op in ("/", "%") and b == 0:
        raise CompileError(loc, "division by zero")
    if isinstance(t, ir.Bits) and op in ("|+|", "|-|"):
        v = a + b if op == "|+|" else a - b
        lo = -(1 << (t.bits - 1)) if t.signed else 0
        hi = (1 << (t.bits - 1)) - 1 if t.signed else (1 << t.bits) - 1
        return max(lo, min(hi, v))
    v = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b,
         "%": lambda: a % b, "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b,
         "|+|": lambda: a + b, "|-|": lambda: a - b}[op]()
    return _wrap(v, t) if isinstance(t, ir.Bits) else v


def _describe_expr(e: ir.Expr) -> str:
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.Member):
        return f"{_describe_expr(e.expr)}.{e.member}"
    return type(e).__name__


def key_name(e: ir.Expr) -> str:
    """A table key's control-plane name as p4c writes it (source text of the key)."""
    if isinstance(e, ir.Name):
        return e.name
    if isinstance(e, ir.Member):
        return f"{key_name(e.expr)}.{e.member}"
    if isinstance(e, ir.Index):
        return f"{key_name(e.expr)}[{key_name(e.index)}]"
    if isinstance(e, ir.Lit):
        return hex(e.value) if e.base == 16 else str(e.value)
    if isinstance(e, ir.Slice):
        return f"{key_name(e.expr)}[{key_name(e.hi)}:{key_name(e.lo)}]"
    if isinstance(e, ir.Call) and isinstance(e.callee, ir.Member):
        return f"{key_name(e.callee)}()"
    if isinstance(e, ir.Binary):
        return f"{key_name(e.left)} {e.op} {key_name(e.right)}"
    if isinstance(e, ir.Cast):
        return key_name(e.expr)
    return "key"


def check(program: ir.Program, diags: Diagnostics | None = None) -> TypedProgram:
    return Checker(diags).check(program)
