"""Syntax-level desugaring: compound assignment, nested slices and `for` loops.

Runs while the parse tree becomes IR, so the type checker and the backend never
see these forms:

* `x op= e` becomes `x = x op e`, the target evaluated once (P4_16 8.13.1, as
  p4c does): an index with a call in it (`a[f(i)].x |= e`) is computed first
  into a temporary (bit<32>: the value of any index that can be in range), and
  both occurrences read it;
* `x[h1:l1][h2:l2]` with constant bounds becomes `x[l1+h2:l1+l2]`, so nested
  slices work as values and as assignment targets;
* `for (init; cond; updates) body` and `for (T v in lo .. hi) body` (P4_16
  1.2.5) are unrolled as p4c's midend does for bmv2, which has no loops in
  control flow: the loop variables are simulated at compile time to count the
  iterations, and each iteration becomes a copy of the body followed by the
  updates. `break` and `continue` set per-loop boolean flags that guard the rest
  of the iteration and the iterations after it. A loop whose iteration count is
  not known at compile time (or that would unroll too large) stays a loop,
  `ir.Loop`, which the bmv2 back end runs with jump primitives inside an action,
  as p4c does.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from . import ir, lists
from .errors import CompileError, Location

MAX_ITERATIONS = 1024
MAX_SIMULATED = 1 << 16  # iterations simulated to find a loop that never ends
MAX_UNROLLED_NODES = 200_000


class _NotConstant(Exception):
    pass


class _RunTimeLoop(Exception):
    """The loop cannot be unrolled: it stays a loop (ir.Loop)."""


# -- compound assignment and slices ----------------------------------------------------


_compound_temps = itertools.count()


def compound_assign(lhs: ir.Expr, op: str, rhs: ir.Expr, loc: Location) -> ir.Stmt:
    """`lhs op= rhs` as `lhs = lhs op rhs`, with any index of `lhs` that calls
    something evaluated once, before `rhs`: a block declaring it first."""
    hoisted: list[ir.Stmt] = []

    def once(e: ir.Expr) -> ir.Expr:
        if isinstance(e, ir.Index):
            base, index = once(e.expr), e.index
            if any(isinstance(n, ir.Call) for n in _walk(index)):
                name = f"__index{next(_compound_temps)}"
                bit32 = ir.TypeRef("bit", width=ir.Lit(32, index.loc), loc=index.loc)
                hoisted.append(ir.VarDecl(bit32, name, ir.Cast(bit32, index, index.loc),
                                          loc=index.loc))
                index = ir.Name(name, index.loc)
            return ir.Index(base, index, e.loc)
        if isinstance(e, ir.Member):
            return ir.Member(once(e.expr), e.member, e.loc)
        if isinstance(e, ir.Slice):
            return ir.Slice(once(e.expr), e.hi, e.lo, e.loc)
        return e

    target = once(lhs)
    assign = ir.Assign(target, ir.Binary(op[:-1], target, rhs, loc), loc)
    return ir.Block((*hoisted, assign), loc) if hoisted else assign


def flatten_slice(s: ir.Slice) -> ir.Slice:
    """A slice of a slice with literal bounds, as one slice of the innermost value."""
    inner = s.expr
    if isinstance(inner, ir.Slice) and all(isinstance(b, ir.Lit)
                                           for b in (s.hi, s.lo, inner.hi, inner.lo)):
        width = inner.hi.value - inner.lo.value + 1  # type: ignore[attr-defined]
        hi, lo = s.hi.value, s.lo.value  # type: ignore[attr-defined]
        if not 0 <= lo <= hi < width:
            raise CompileError(s.loc, f"slice [{hi}:{lo}] is out of range of the "
                               f"{width}-bit value it is taken from")
        base = inner.lo.value  # type: ignore[attr-defined]
        return ir.Slice(inner.expr, ir.Lit(base + hi, s.hi.loc), ir.Lit(base + lo, s.lo.loc),
                        s.loc)
    return s


# -- for loops -----------------------------------------------------------------------


def unroll_for(init: list[ir.Stmt], cond: ir.Expr | None, updates: list[ir.Stmt],
               body: ir.Stmt, loc: Location,
               declared: dict[str, ir.TypeRef] | None = None) -> ir.Block:
    """The loop as straight-line code with one copy of the body per iteration, or, if
    its iterations are not known at compile time, as a run-time loop (ir.Loop).
    `declared` gives the types of variables declared before the loop, so that a loop
    variable declared outside it wraps around at its own width."""
    try:
        states = _iterations(init, cond, updates, body, loc, declared or {})
    except _RunTimeLoop:
        # the initialisers run once, before the loop, as ordinary statements (they may
        # apply a table: `for (i = f(t.apply().hit); ...)`, which a loop running inside
        # a synthesized action could not)
        return ir.Block(tuple(init) + (ir.Loop((), cond if cond is not None else
                                               ir.BoolLit(True, loc), tuple(updates), body,
                                               loc),), loc)
    iterations = [[_constant_slices(body, values), *updates] for values in states]
    return ir.Block(tuple(init) + _iterate(iterations, loc), loc)


def _iterations(init: list[ir.Stmt], cond: ir.Expr | None, updates: list[ir.Stmt],
                body: ir.Stmt, loc: Location, declared: dict[str, ir.TypeRef]
                ) -> list[dict[str, int]]:
    """The loop variables' values at the start of each iteration, simulated from its
    header; _RunTimeLoop if they are not known at compile time (or the unrolled loop
    would be too large)."""
    if cond is None:
        raise _RunTimeLoop()
    env, widths = _initial_values(init, loc, declared)
    for u in updates:
        if not (isinstance(u, ir.Assign) and isinstance(u.lhs, ir.Name)) \
                or u.lhs.name not in env:
            raise _RunTimeLoop()
    if _body_assigns(body, set(env)):
        raise _RunTimeLoop()
    breaks = any(isinstance(n, ir.Break) for n in _walk(body))
    count = 0
    seen: set[tuple] = set()
    states: list[dict[str, int]] = []
    while _evaluate(cond, env, loc, "condition"):
        count += 1
        if count <= MAX_ITERATIONS:
            states.append(dict(env))
        if count > MAX_ITERATIONS:
            # Too long to unroll: a run-time loop, unless it provably never ends.
            state = tuple(sorted(env.items()))
            if state in seen and not breaks:
                raise CompileError(loc, "for loop never ends: its variables come back to "
                                   + ", ".join(f"{k} = {v}" for k, v in state))
            if count > MAX_SIMULATED or state in seen:
                raise _RunTimeLoop()
            seen.add(state)
        for u in updates:
            assert isinstance(u, ir.Assign) and isinstance(u.lhs, ir.Name)
            env[u.lhs.name] = _wrap(_evaluate(u.rhs, env, loc, "update"),
                                    widths.get(u.lhs.name))
    if count > MAX_ITERATIONS or \
            sum(1 for _ in _walk(body, into_loops=True)) * count > MAX_UNROLLED_NODES:
        raise _RunTimeLoop()  # it ends, but is too long to unroll
    return states


def _constant_slices(body: ir.Stmt, values: dict[str, int]) -> ir.Stmt:
    """The body of one unrolled iteration with the loop variables' values in the bounds
    of its slices (`x[i:i]` with `i` = 3 is `x[3:3]`), which must be compile-time known;
    elsewhere the variables stay (they are declared and updated as written). A variable
    the body declares again keeps its name."""
    shadowed = {n.name for n in _walk(body, into_loops=True) if isinstance(n, ir.VarDecl)}
    known = {k: v for k, v in values.items() if k not in shadowed}
    if not known:
        return body

    def bound(e: Any) -> Any:
        if isinstance(e, ir.Name) and e.name in known:
            return ir.Lit(known[e.name], e.loc)
        return _rebuild(e, bound)

    def walk(x: Any) -> Any:
        if isinstance(x, ir.Slice):
            return ir.Slice(walk(x.expr), bound(x.hi), bound(x.lo), x.loc)
        return _rebuild(x, walk)

    return walk(body)


def _rebuild(x: Any, fn: Any) -> Any:
    """`x` with `fn` applied to its child nodes (a new node only if one changed)."""
    if isinstance(x, tuple):
        new = tuple(fn(y) for y in x)
        return new if any(a is not b for a, b in zip(new, x, strict=True)) else x
    if not (dataclasses.is_dataclass(x) and isinstance(x, ir.Node)):
        return x
    changes = {}
    for f in dataclasses.fields(x):
        if f.name in ("loc", "type", "annotations", "tref", "ref"):
            continue
        old = getattr(x, f.name)
        new = fn(old)
        if new is not old:
            changes[f.name] = new
    return dataclasses.replace(x, **changes) if changes else x


def unroll_for_in(tref: ir.TypeRef, name: str, collection: Any, body: ir.Stmt,
                  loc: Location) -> ir.Block:
    """`for (T name in lo .. hi)`: one copy of the body per value, with `name` declared."""
    items = lists.literal_items(collection)
    if items is not None:
        return _unroll_for_in_items(tref, name, items, body, loc)
    if not (isinstance(collection, tuple) and collection[0] == "range"):
        return ir.Block((ir.ForInStack(tref, name, collection, body, loc),), loc)
    try:
        lo = _evaluate(collection[1], {}, loc, "range start")
        hi = _evaluate(collection[2], {}, loc, "range end")
    except _RunTimeLoop:
        return _run_time_range(tref, name, collection[1], collection[2], body, loc)
    if hi - lo + 1 > MAX_ITERATIONS:
        raise CompileError(loc, f"for loop range has more than {MAX_ITERATIONS} values; "
                           "it cannot be unrolled")
    _check_size(body, hi - lo + 1, loc)
    iterations = [[ir.VarDecl(tref, name, ir.Lit(v, loc), (), loc),
                   _constant_slices(body, {name: v})] for v in range(lo, hi + 1)]
    return ir.Block(_iterate(iterations, loc), loc)


def _run_time_range(tref: ir.TypeRef, name: str, lo: ir.Expr, hi: ir.Expr, body: ir.Stmt,
                    loc: Location) -> ir.Block:
    """`for (T name in lo .. hi)` with bounds known only at run time: `lo` then `hi`
    evaluated once into `__for<line>_<col>_lo`/`_hi`, then a run-time loop over a counter
    `_cur` (`_go` says whether a value is left, so `hi` = the type's largest value ends
    it); `name` is a copy of the counter in each iteration, as in an unrolled range."""
    n = f"__for{loc.line}_{loc.col}"

    def var(suffix: str) -> ir.Name:
        return ir.Name(n + suffix, loc)

    bool_t = ir.TypeRef("bool", loc=loc)
    bounds = (ir.VarDecl(tref, n + "_lo", lo, (), loc), ir.VarDecl(tref, n + "_hi", hi, (), loc))
    init = (ir.VarDecl(tref, n + "_cur", var("_lo"), (), loc),
            ir.VarDecl(bool_t, n + "_go", ir.Binary("<=", var("_lo"), var("_hi"), loc), (), loc))
    updates = (ir.Assign(var("_go"), ir.Binary("!=", var("_cur"), var("_hi"), loc), loc),
               ir.Assign(var("_cur"), ir.Binary("+", var("_cur"), ir.Lit(1, loc), loc), loc))
    each = ir.Block((ir.VarDecl(tref, name, var("_cur"), (), loc), body), loc)
    return ir.Block(bounds + (ir.Loop(init, var("_go"), updates, each, loc),), loc)


def _unroll_for_in_items(tref: ir.TypeRef, name: str, items: tuple[ir.Expr, ...],
                         body: ir.Stmt, loc: Location) -> ir.Block:
    """`for (T name in {a, b})`: the elements evaluated once, in order, into temporaries
    `__for<line>_<col>_item<i>` before the first iteration, then one copy of the body per
    value, `name` a copy of it (the body may change `name`, not the values)."""
    _check_size(body, len(items), loc)
    n = f"__for{loc.line}_{loc.col}_item"
    values = [ir.VarDecl(tref, f"{n}{i}", e, (), loc) for i, e in enumerate(items)]
    iterations = [[ir.VarDecl(tref, name, ir.Name(f"{n}{i}", loc), (), loc), body]
                  for i in range(len(items))]
    return ir.Block(tuple(values) + _iterate(iterations, loc), loc)


def unroll_for_in_stack(s: ir.ForInStack, size: int, is_stack: bool = True) -> ir.Block:
    """`for (T name in stack)`: one copy of the body per element, `name` a copy of it
    (the body may change the copy, as with a range; the stack keeps its element).
    A stack given by a call (`for (H x in f(t.apply().hit))`) is evaluated once, before
    the first iteration, into `__for<line>_<col>_stack` (P4_16 12.5: the collection is
    evaluated once; each copy of the call would apply the table again)."""
    collection, before = s.collection, ()
    if is_stack and any(isinstance(n, ir.Call) for n in _walk(s.collection)):
        tmp = f"__for{s.loc.line}_{s.loc.col}_stack"
        stack_t = ir.TypeRef("stack", elem=s.tref, width=ir.Lit(size, s.loc), loc=s.loc)
        before = (ir.VarDecl(stack_t, tmp, s.collection, (), s.loc),)
        collection = ir.Name(tmp, s.loc)
    iterations = [[ir.VarDecl(s.tref, s.name, ir.Index(collection, ir.Lit(i, s.loc), s.loc),
                              (), s.loc), s.body] for i in range(size)]
    return ir.Block(before + _iterate(iterations, s.loc), s.loc)


def _iterate(iterations: list[list[ir.Stmt]], loc: Location) -> tuple[ir.Stmt, ...]:
    """The iterations in sequence, with break/continue turned into guard flags."""
    # Named by the loop's position, so that compiling twice gives the same JSON; a nested
    # loop, unrolled first, keeps its own flags inside each copy of the outer body.
    n = f"{loc.line}_{loc.col}"
    brk, cont = f"__for{n}_break", f"__for{n}_continue"
    used: set[str] = set()
    out: list[ir.Stmt] = []
    for stmts in iterations:
        body = [_lower_jumps(s, brk, cont, used)[0] for s in stmts]
        block: ir.Stmt = ir.Block(tuple(body), loc)
        if cont in used:
            block = ir.Block((_set(cont, False, loc), block), loc)
        if brk in used:
            block = ir.If(ir.Unary("!", ir.Name(brk, loc), loc), block, None, loc)
        out.append(block)
    flags = [ir.VarDecl(ir.TypeRef("bool", loc=loc), f, ir.BoolLit(False, loc), (), loc)
             for f in (brk, cont) if f in used]
    return tuple(flags) + tuple(out)


def _set(flag: str, value: bool, loc: Location) -> ir.Assign:
    return ir.Assign(ir.Name(flag, loc), ir.BoolLit(value, loc), loc)


def _lower_jumps(s: ir.Stmt, brk: str, cont: str, used: set[str]) -> tuple[ir.Stmt, bool]:
    """The statement with break/continue as flag assignments; whether it may jump."""
    if isinstance(s, ir.Break):
        used.add(brk)
        return _set(brk, True, s.loc), True
    if isinstance(s, ir.Continue):
        used.add(cont)
        return _set(cont, True, s.loc), True
    if isinstance(s, ir.Block):
        out: list[ir.Stmt] = []
        for i, stmt in enumerate(s.stmts):
            lowered, jumps = _lower_jumps(stmt, brk, cont, used)
            out.append(lowered)
            if jumps:
                rest = s.stmts[i + 1:]
                if rest:
                    tail, _ = _lower_jumps(ir.Block(rest, rest[0].loc), brk, cont, used)
                    out.append(ir.If(_still_running(brk, cont, used, s.loc), tail, None, s.loc))
                return ir.Block(tuple(out), s.loc), True
        return ir.Block(tuple(out), s.loc), False
    if isinstance(s, ir.If):
        then, j1 = _lower_jumps(s.then, brk, cont, used)
        other, j2 = _lower_jumps(s.other, brk, cont, used) if s.other else (None, False)
        return ir.If(s.cond, then, other, s.loc), j1 or j2
    if isinstance(s, ir.Switch):
        cases, jumps = [], False
        for c in s.cases:
            body, j = _lower_jumps(c.body, brk, cont, used) if c.body else (None, False)
            cases.append(ir.SwitchCase(c.label, body, c.loc))
            jumps = jumps or j
        return ir.Switch(s.expr, tuple(cases), s.loc), jumps
    return s, False


def _still_running(brk: str, cont: str, used: set[str], loc: Location) -> ir.Expr:
    terms = [ir.Unary("!", ir.Name(f, loc), loc) for f in (brk, cont) if f in used]
    cond = terms[0]
    for t in terms[1:]:
        cond = ir.Binary("&&", cond, t, loc)
    return cond


def _initial_values(init: list[ir.Stmt], loc: Location, declared: dict[str, ir.TypeRef]
                    ) -> tuple[dict[str, int], dict]:
    env: dict[str, int] = {}
    widths: dict[str, tuple[int, bool] | None] = {}
    for s in init:
        if isinstance(s, ir.VarDecl) and s.init is not None:
            env[s.name] = _evaluate(s.init, env, s.loc, "initial value")
            widths[s.name] = _width_of(s.tref)
            env[s.name] = _wrap(env[s.name], widths[s.name])
        elif isinstance(s, ir.Assign) and isinstance(s.lhs, ir.Name):
            tref = declared.get(s.lhs.name)
            widths[s.lhs.name] = _width_of(tref) if tref is not None else None
            env[s.lhs.name] = _wrap(_evaluate(s.rhs, env, s.loc, "initial value"),
                                    widths[s.lhs.name])
        else:
            raise _RunTimeLoop()
    return env, widths


def _width_of(tref: ir.TypeRef) -> tuple[int, bool] | None:
    if tref.kind in ("bit", "int") and isinstance(tref.width, ir.Lit):
        return tref.width.value, tref.kind == "int"
    return None


def _wrap(value: int, width: tuple[int, bool] | None) -> int:
    if width is None or isinstance(value, bool):
        return value
    bits, signed = width
    value &= (1 << bits) - 1
    if signed and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _check_size(body: ir.Stmt, count: int, loc: Location) -> None:
    """Nested loops multiply: keep the unrolled program to a size later passes handle."""
    nodes = sum(1 for _ in _walk(body, into_loops=True))
    if nodes * count > MAX_UNROLLED_NODES:
        raise CompileError(loc, f"for loop unrolls to {nodes * count} syntax nodes (more "
                           f"than {MAX_UNROLLED_NODES}); it cannot be unrolled")


def _body_assigns(body: ir.Stmt, names: set[str]) -> bool:
    """Unrolling counts iterations from the header alone: not if the body assigns them."""
    return any(isinstance(node, ir.Assign) and isinstance(node.lhs, ir.Name)
               and node.lhs.name in names for node in _walk(body, into_loops=True))


def _walk(node: Any, into_loops: bool = False):
    yield node
    if isinstance(node, (ir.ForInStack, ir.Loop)) and not into_loops:
        return  # their break/continue are their own
    if isinstance(node, ir.Node):
        for v in vars(node).values():
            if isinstance(v, (ir.Node, tuple, list)):
                yield from _walk(v, into_loops)
    elif isinstance(node, (tuple, list)):
        for v in node:
            yield from _walk(v, into_loops)


def find_stray_jump(program: ir.Program) -> ir.Stmt | None:
    """A break/continue left outside every loop (loops consume theirs)."""
    for node in _walk(program):
        if isinstance(node, (ir.Break, ir.Continue)):
            return node
    return None


# -- compile-time evaluation of loop headers --------------------------------------------

_BINARY = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a // b, "%": lambda a, b: a % b, "&": lambda a, b: a & b,
    "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b, "&&": lambda a, b: bool(a) and bool(b),
    "||": lambda a, b: bool(a) or bool(b),
}


def _evaluate(e: ir.Expr, env: dict[str, int], loc: Location, what: str,
              run_time: bool = True) -> int:
    try:
        return _value(e, env)
    except _NotConstant:
        if run_time:
            raise _RunTimeLoop() from None
        raise CompileError(getattr(e, "loc", loc) or loc,
                           f"for loop {what} is not known at compile time") from None
    except ZeroDivisionError:
        raise CompileError(loc, f"division by zero in the for loop {what}") from None


def _value(e: ir.Expr, env: dict[str, int]) -> int:
    if isinstance(e, ir.Lit):
        return e.value
    if isinstance(e, ir.BoolLit):
        return int(e.value)
    if isinstance(e, ir.Name) and e.name in env:
        return env[e.name]
    if isinstance(e, ir.Binary) and e.op in _BINARY:
        return int(_BINARY[e.op](_value(e.left, env), _value(e.right, env)))
    if isinstance(e, ir.Unary):
        v = _value(e.expr, env)
        return {"!": int(not v), "-": -v, "~": ~v}[e.op]
    if isinstance(e, ir.Cast) and e.to.kind in ("bit", "int"):
        return _wrap(_value(e.expr, env), _width_of(e.to))
    raise _NotConstant()
