"""The P4 type system as plain data: the types the type checker gives every
expression and declaration (bits, structs and headers, stacks, enums, externs...),
with `unwrap` (through typedef'd new types) and the size methods of headers.

`ir` re-exports every name here, so `ir.Bits` and `ir_types.Bits` are one class.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .errors import UNKNOWN, Location


@dataclass(frozen=True)
class Node:
    """Base of every IR node (ir.py's syntax and declarations)."""


@dataclass(frozen=True)
class Annotation(Node):
    name: str
    args: tuple[Any, ...] = ()
    kv: tuple[tuple[str, Any], ...] = ()
    loc: Location = UNKNOWN


# ---------------------------------------------------------------- types


class Type:
    """A semantic P4 type (after typedefs are resolved)."""

    def width(self) -> int | None:
        return None


@dataclass(frozen=True)
class Bits(Type):
    """bit<W> (signed=False) or int<W> (signed=True)."""

    bits: int
    signed: bool = False

    def width(self) -> int:
        return self.bits

    def __str__(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.bits}>"


@dataclass(frozen=True)
class InfInt(Type):
    """The type of an integer literal without a width (arbitrary precision)."""

    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class Bool(Type):
    def width(self) -> int:
        return 1

    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class Varbit(Type):
    max_bits: int

    def width(self) -> int:
        return self.max_bits

    def __str__(self) -> str:
        return f"varbit<{self.max_bits}>"


@dataclass(frozen=True)
class String(Type):
    def __str__(self) -> str:
        return "string"


@dataclass(frozen=True)
class ErrorT(Type):
    def width(self) -> int:
        return 32

    def __str__(self) -> str:
        return "error"


@dataclass(frozen=True)
class MatchKindT(Type):
    def __str__(self) -> str:
        return "match_kind"


@dataclass(frozen=True)
class Void(Type):
    def __str__(self) -> str:
        return "void"


@dataclass(frozen=True)
class DontCareT(Type):
    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class TypeVar(Type):
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class StructField:
    name: str
    type: Type
    annotations: tuple[Annotation, ...] = ()


@dataclass(frozen=True)
class StructLike(Type):
    """header, header_union or struct (kind says which)."""

    kind: str
    name: str
    fields: tuple[StructField, ...]
    annotations: tuple[Annotation, ...] = ()

    def field(self, name: str) -> StructField | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def width(self) -> int | None:
        total = 0
        for f in self.fields:
            w = f.type.width()
            if w is None:
                return None
            total += w
        return total

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Stack(Type):
    elem: Type
    size: int

    def __str__(self) -> str:
        return f"{self.elem}[{self.size}]"


@dataclass(frozen=True)
class Enum(Type):
    name: str
    members: tuple[str, ...]
    underlying: Bits | None = None
    values: tuple[int, ...] = ()

    def width(self) -> int | None:
        return self.underlying.bits if self.underlying else 32

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class NewType(Type):
    """A `type` declaration: a distinct type with the representation of `base`."""

    name: str
    base: Type
    annotations: tuple[Any, ...] = dataclasses.field(default=(), compare=False)

    def width(self) -> int | None:
        return self.base.width()

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class TupleT(Type):
    items: tuple[Type, ...]

    def width(self) -> int | None:
        ws = [t.width() for t in self.items]
        return None if None in ws else sum(ws)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(map(str, self.items)) + ">"


@dataclass(frozen=True)
class ExternT(Type):
    """An extern object type, possibly specialized (type_args bound to type_params)."""

    name: str
    type_params: tuple[str, ...]
    type_args: tuple[Type, ...] = ()

    def bindings(self) -> dict[str, Type]:
        return dict(zip(self.type_params, self.type_args, strict=False))

    def __str__(self) -> str:
        if self.type_args:
            return f"{self.name}<{', '.join(map(str, self.type_args))}>"
        return self.name


@dataclass(frozen=True)
class BlockT(Type):
    """A parser, control or package type."""

    kind: str
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class CallableT(Type):
    """Actions, tables, functions and methods as named things."""

    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


@dataclass(frozen=True)
class ApplyResult(Type):
    """The result of `table.apply()`: fields hit, miss, action_run."""

    table: str

    def __str__(self) -> str:
        return f"apply_result({self.table})"


@dataclass(frozen=True)
class ActionEnum(Type):
    """`table.apply().action_run`."""

    table: str

    def __str__(self) -> str:
        return f"action_list({self.table})"


def unwrap(t: Type) -> Type:
    """The representation type of a `type` declaration."""
    while isinstance(t, NewType):
        t = t.base
    return t


SIZE_METHODS = ("minSizeInBits", "minSizeInBytes", "maxSizeInBits", "maxSizeInBytes")


def size_method(t: Type, method: str) -> int | None:
    """`h.minSizeInBits()` and its siblings (P4_16 8.18): a header's fields, a varbit
    counting 0 (min) or its maximum (max); a union its smallest/largest member; a
    struct or stack the sum of its parts. None where the type has no size."""
    t = unwrap(t)
    maximum = method.startswith("max")
    if isinstance(t, Varbit):
        bits: int | None = t.max_bits if maximum else 0
    elif isinstance(t, StructLike):
        parts = [size_method(f.type, method.replace("Bytes", "Bits")) for f in t.fields]
        if any(p is None for p in parts):
            return None
        sizes = [p for p in parts if p is not None]
        bits = (max if maximum else min)(sizes, default=0) if t.kind == "header_union" \
            else sum(sizes)
    elif isinstance(t, Stack):
        elem = size_method(t.elem, method.replace("Bytes", "Bits"))
        bits = None if elem is None else elem * t.size
    else:
        bits = t.width()
    if bits is None:
        return None
    return (bits + 7) // 8 if method.endswith("Bytes") else bits


# ---------------------------------------------------------------- syntax
