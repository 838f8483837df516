"""Helpers shared by the parts of the bmv2 back end (p4compiler/bmv2*.py): JSON value
rendering, action-parameter bindings, control-graph nodes, and IR queries."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from . import ir
from .errors import CompileError, Location, Unsupported
from .typecheck import (
    ParamEntity,
    TableEntity,
)

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


def tuple_struct(t: ir.TupleT) -> ir.StructLike:
    """The struct a tuple-typed struct field is laid out as, its elements the fields
    `f0`, `f1`, ... (p4c's EliminateTuples), so that `m.t[1]` is `m.t.f1`."""
    fields = tuple(ir.StructField(f"f{i}", et) for i, et in enumerate(t.items))
    return ir.StructLike("struct", str(t), fields)


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


def _const(e: ir.Expr | None, loc: Location | None, errors: dict[str, int] | None = None
           ) -> int:
    """The value of a compile-time constant; an `error.X` member needs the program's
    error codes (`errors`, as the JSON's "errors" numbers them)."""
    if isinstance(e, ir.ErrorMember) and errors is not None and e.name in errors:
        return errors[e.name]
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
        elif isinstance(x, ir.Loop):
            for y in (*x.init, x.cond, x.body, *x.updates):
                walk(y)
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
    # `default` matches what no label names, wherever it stands (p4c only warns when a
    # label follows it): its body ends the chain.
    default_body: ir.Stmt | None = next((b for ls, b in groups if None in ls), None)
    for labels_, body in reversed(groups):
        if None in labels_:
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
            elif isinstance(v, tuple) and v and isinstance(v[0], ir.Arg):
                # a call inside the body (`return x + incr(x);`) passes the parameter on
                changes[f.name] = tuple(dataclasses.replace(a, value=_substitute(a.value, subst))
                                        for a in v)
        return dataclasses.replace(e, **changes) if changes else e
    return e
