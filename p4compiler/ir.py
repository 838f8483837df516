"""The program as plain data: syntax nodes from the parser, filled in by the
type checker (types, resolved references) to form the typed IR.

Every node is a frozen dataclass. Expressions carry `type` (None until the
type checker has run) and statements/declarations carry their source `loc`.
`dump()` renders any node as JSON-friendly nested dicts (`--dump-ir`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .errors import UNKNOWN, Location
from .ir_types import (  # noqa: F401  (re-exported: ir.Bits is ir_types.Bits)
    SIZE_METHODS,
    ActionEnum,
    Annotation,
    ApplyResult,
    Bits,
    BlockT,
    Bool,
    CallableT,
    DontCareT,
    Enum,
    ErrorT,
    ExternT,
    InfInt,
    MatchKindT,
    NewType,
    Node,
    Stack,
    String,
    StructField,
    StructLike,
    TupleT,
    Type,
    TypeVar,
    Varbit,
    Void,
    size_method,
    unwrap,
)

# Syntactic types (resolved by the type checker into Type).

@dataclass(frozen=True)
class TypeRef(Node):
    """A type as written: kind in bit/int/varbit/bool/string/error/infint/
    match_kind/void/name/stack/tuple/dontcare."""

    kind: str
    name: str = ""
    width: Any = None           # expression for bit/int/varbit widths, stack sizes
    args: tuple[TypeRef, ...] = ()
    elem: TypeRef | None = None
    loc: Location = UNKNOWN


# Expressions. `type` is filled in by the type checker.

@dataclass(frozen=True)
class Expr(Node):
    pass


@dataclass(frozen=True)
class Lit(Expr):
    value: int
    loc: Location = UNKNOWN
    type: Type | None = None
    base: int = 10


@dataclass(frozen=True)
class BoolLit(Expr):
    value: bool
    loc: Location = UNKNOWN
    type: Type | None = Bool()


@dataclass(frozen=True)
class StrLit(Expr):
    value: str
    loc: Location = UNKNOWN
    type: Type | None = String()


@dataclass(frozen=True)
class Name(Expr):
    """A reference to a declaration; `ref` is what it resolved to."""

    name: str
    loc: Location = UNKNOWN
    type: Type | None = None
    ref: Any = None
    top: bool = False


@dataclass(frozen=True)
class TypeName(Expr):
    """A type used in an expression (enum members, constructor calls)."""

    tref: TypeRef
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class Member(Expr):
    expr: Expr
    member: str
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class Index(Expr):
    expr: Expr
    index: Expr
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class Slice(Expr):
    expr: Expr
    hi: Expr
    lo: Expr
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class Unary(Expr):
    op: str         # ! ~ - +
    expr: Expr
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class Mux(Expr):
    cond: Expr
    then: Expr
    other: Expr
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class Cast(Expr):
    to: TypeRef
    expr: Expr
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class Arg(Node):
    value: Expr | None          # None: don't care `_`
    name: str | None = None
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Call(Expr):
    """A call; `target` is filled by the type checker with what is called."""

    callee: Expr
    args: tuple[Arg, ...]
    type_args: tuple[TypeRef, ...] = ()
    loc: Location = UNKNOWN
    type: Type | None = None
    target: Any = None


@dataclass(frozen=True)
class ListExpr(Expr):
    items: tuple[Expr, ...]
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class StructExpr(Expr):
    fields: tuple[tuple[str, Expr], ...]
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class ErrorMember(Expr):
    name: str
    loc: Location = UNKNOWN
    type: Type | None = ErrorT()


@dataclass(frozen=True)
class InvalidHeader(Expr):
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class Dots(Expr):
    """`...` as a value (P4_16 8.26): the default value of the type the context gives
    (`T x = ...;`, the rest of a tuple in `{1, ...}`); the type checker replaces it."""
    loc: Location = UNKNOWN
    type: Type | None = None


# Keyset expressions (select cases, const entries).

@dataclass(frozen=True)
class DefaultKey(Expr):
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class MaskKey(Expr):
    value: Expr
    mask: Expr
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class RangeKey(Expr):
    lo: Expr
    hi: Expr
    loc: Location = UNKNOWN
    type: Type | None = None


# Statements.

@dataclass(frozen=True)
class Stmt(Node):
    pass


@dataclass(frozen=True)
class Assign(Stmt):
    lhs: Expr
    rhs: Expr
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class CallStmt(Stmt):
    call: Call
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Loop(Stmt):
    """A `for` loop whose iteration count is known only at run time (loops.unroll_for
    unrolls the others): `init`, then while `cond`: `body`, `updates`. `Break` and
    `Continue` inside `body` (not inside a nested Loop) are its own. bmv2 runs it as
    `_jump` / `_jump_if_zero` primitives inside an action."""

    init: tuple[Stmt, ...]
    cond: Expr
    updates: tuple[Stmt, ...]
    body: Stmt
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Block(Stmt):
    stmts: tuple[Stmt, ...]
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Exit(Stmt):
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr | None
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class SwitchCase(Node):
    label: Expr | None          # None: default
    body: Block | None          # None: falls through to the next case
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Switch(Stmt):
    expr: Expr
    cases: tuple[SwitchCase, ...]
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Empty(Stmt):
    loc: Location = UNKNOWN


# Declarations.

@dataclass(frozen=True)
class Param(Node):
    name: str
    direction: str              # "" (directionless), in, out, inout
    tref: TypeRef
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN
    type: Type | None = None
    default: Expr | None = None  # `bit<8> x = 3` (P4_16 6.8.2)


@dataclass(frozen=True)
class VarDecl(Stmt):
    tref: TypeRef
    name: str
    init: Expr | None
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN
    type: Type | None = None


@dataclass(frozen=True)
class ConstDecl(Stmt):
    tref: TypeRef
    name: str
    value: Expr
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class FieldDecl(Node):
    name: str
    tref: TypeRef
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class StructDecl(Node):
    kind: str                   # header, header_union, struct
    name: str
    fields: tuple[FieldDecl, ...]
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN
    type_params: tuple[str, ...] = ()  # a generic struct/header: S<T>


@dataclass(frozen=True)
class EnumDecl(Node):
    name: str
    members: tuple[str, ...]
    underlying: TypeRef | None = None
    values: tuple[Expr, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class TypedefDecl(Node):
    name: str
    tref: TypeRef
    newtype: bool = False
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class ErrorDecl(Node):
    members: tuple[str, ...]
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class MatchKindDecl(Node):
    members: tuple[str, ...]
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class MethodProto(Node):
    name: str
    ret: TypeRef | None         # None for constructors
    type_params: tuple[str, ...]
    params: tuple[Param, ...]
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class ExternDecl(Node):
    name: str
    type_params: tuple[str, ...]
    methods: tuple[MethodProto, ...]
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class ExternFunctionDecl(Node):
    proto: MethodProto
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class FunctionDecl(Node):
    proto: MethodProto
    body: Block
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class PackageDecl(Node):
    name: str
    type_params: tuple[str, ...]
    params: tuple[Param, ...]
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Instantiation(Stmt):
    tref: TypeRef
    args: tuple[Arg, ...]
    name: str
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class ValueSetDecl(Stmt):
    tref: TypeRef
    size: Expr
    name: str
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class SelectCase(Node):
    keys: tuple[Expr, ...]
    state: str
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Transition(Node):
    """`transition state;` (select is empty) or `transition select (...) {...}`."""

    state: str | None
    select: tuple[Expr, ...] = ()
    cases: tuple[SelectCase, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class ParserState(Node):
    name: str
    stmts: tuple[Stmt, ...]
    transition: Transition | None
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class ParserDecl(Node):
    name: str
    type_params: tuple[str, ...]
    params: tuple[Param, ...]
    ctor_params: tuple[Param, ...]
    locals: tuple[Stmt, ...]
    states: tuple[ParserState, ...]
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN
    is_proto: bool = False


@dataclass(frozen=True)
class ActionDecl(Node):
    name: str
    params: tuple[Param, ...]
    body: Block
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class KeyElem(Node):
    expr: Expr
    match_kind: str
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class ActionRef(Node):
    name: str
    args: tuple[Arg, ...] | None = None
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Entry(Node):
    keys: tuple[Expr, ...]
    action: ActionRef
    priority: Expr | None = None
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class TableProperty(Node):
    name: str
    value: Expr
    const: bool = False
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class TableDecl(Node):
    name: str
    key: tuple[KeyElem, ...] = ()
    actions: tuple[ActionRef, ...] = ()
    default_action: ActionRef | None = None
    default_const: bool = False
    entries: tuple[Entry, ...] | None = None
    entries_const: bool = True
    properties: tuple[TableProperty, ...] = ()
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class ControlDecl(Node):
    name: str
    type_params: tuple[str, ...]
    params: tuple[Param, ...]
    ctor_params: tuple[Param, ...]
    locals: tuple[Node, ...]
    body: Block
    annotations: tuple[Annotation, ...] = ()
    loc: Location = UNKNOWN
    is_proto: bool = False


@dataclass(frozen=True)
class Program(Node):
    decls: tuple[Node, ...]
    loc: Location = UNKNOWN


# ---------------------------------------------------------------- helpers


def annotation(annotations: tuple[Annotation, ...], name: str) -> Annotation | None:
    for a in annotations:
        if a.name == name:
            return a
    return None


def annotation_string(annotations: tuple[Annotation, ...], name: str) -> str | None:
    a = annotation(annotations, name)
    if a and a.args and isinstance(a.args[0], StrLit):
        return a.args[0].value
    return None


def dump(node: Any) -> Any:
    """A JSON-friendly rendering of any IR node, for `--dump-ir`."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        out: dict[str, Any] = {"node": type(node).__name__}
        for f in dataclasses.fields(node):
            v = getattr(node, f.name)
            if f.name == "loc":
                out["loc"] = str(v)
            elif f.name == "ref":
                out["ref"] = _ref_name(v)
            elif f.name == "target":
                out["target"] = _ref_name(v)
            elif isinstance(v, Type):
                out[f.name] = str(v)
            elif v is None or v == () or v == "":
                continue
            else:
                out[f.name] = dump(v)
        return out
    if isinstance(node, (list, tuple)):
        return [dump(x) for x in node]
    if isinstance(node, dict):
        return {str(k): dump(v) for k, v in node.items()}
    if isinstance(node, (str, int, float, bool)) or node is None:
        return node
    return repr(node)


def _ref_name(ref: Any) -> Any:
    if ref is None:
        return None
    for attr in ("qualified", "name"):
        if hasattr(ref, attr):
            return f"{type(ref).__name__}:{getattr(ref, attr)}"
    return repr(ref)




# ---------------------------------------------------------------- frontend (syntax) nodes
# Statements that exist only between parsing and loop unrolling (loops.py): no later
# stage sees them, except Break and Continue inside a Loop (a run-time loop).


@dataclass(frozen=True)
class Break(Stmt):
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class Continue(Stmt):
    loc: Location = UNKNOWN


@dataclass(frozen=True)
class ForInStack(Stmt):
    """`for (T name in stack) body`: unrolled by the type checker, which knows the
    stack's size (loops.unroll_for_in_stack)."""

    tref: TypeRef
    name: str
    collection: Expr
    body: Stmt
    loc: Location = UNKNOWN
