"""What the type checker resolves names to (entities), the typed program it returns, and scopes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import ir
from .errors import CompileError, Location

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
    default: ir.Expr | None = None   # the declared default value, untyped


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
    # actions called from its apply block (or an inlined sub-control's), before the mid
    # end inlines the calls: P4Info lists them (p4c keeps them, without parameters)
    direct_actions: list[ActionEntity] = field(default_factory=list)
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
    global_actions: list[ActionEntity] = field(default_factory=list)  # in program order
    program_enums: set[str] = field(default_factory=set)  # enums not from v1model.p4

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
