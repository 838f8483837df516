"""The fused function simplified where values are known when it is generated (see
FusedCodegen._gen_fused): constant slots folded, and the join dispatch decided.

A slot `S_k` that the fused function assigns exactly once, to an int constant, in a
statement every later statement comes after (the top level of a top-level
`for _ in _ONCE:` block, before any `break` of that block), holds that constant in
every statement after it: those reads become the constant, as do the reads of a
slot that come before any assignment of it (they see its initial value), and the comparisons,
`and`/`or`, `not`, conditional expressions and `if`s that then have constant
operands are decided here, so their untaken branches are gone. That is what a
configuration table baked into the function (its default action's data as
constants, codegen_fused) gives: `meta.cfg.mode == FC_CREDIT` on every frame
becomes no code at all.

When no read of the slot is left, its assignment goes too, and the slot's value
reaches the hand-back of the state (`_handback`, a list from locals() over a
template) through the template instead: `constant_slots` returns those slots and
values. That needs the assignment to come before every hand-back: no rebuild of
the state (`_handback(`, `locals()`, a `_S = ` list) comes before it.

The generator lays out a join of the control-flow graph as `n = K` on the way in
and an `if n == K:` block after (codegen_control._emit_graph). Where the values `n`
may hold at such an `if` are known, the test is decided here: the path of a frame
becomes straight-line code, with no failed `n == K` tests on it."""

from __future__ import annotations

import ast
import operator

from p4switch.ast_nodes import subtree
from p4switch.program_common import _LOCAL_RE

_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_LARGEST_SHIFT = 1 << 12
FOLD_ROUNDS = 4  # S_95 = (1 if S_175 == 1 else 0), S_175 constant: S_95 in the next round  # a left shift folded here makes an int of at most this many bits


def _int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, bool)


def _is_once(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Name) \
        and stmt.iter.id == "_ONCE"


def _snapshot_node(n: ast.AST) -> bool:
    """Does `n` itself build the state list from the locals (a hand-back, a rebuild)
    or return something that may be one?"""
    if isinstance(n, ast.Return):
        return not (n.value is None or (isinstance(n.value, ast.Constant)
                                        and n.value.value is None))
    if isinstance(n, ast.Call):
        return isinstance(n.func, ast.Name) and n.func.id in ("_handback", "locals")
    if isinstance(n, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "_S" for t in n.targets)
    return False


def _snapshots(node: ast.AST) -> bool:
    """Does anything in `node` build the state list or return one (_snapshot_node)?"""
    return any(map(_snapshot_node, subtree(node)))


def _breaks_and_snapshots(node: ast.AST) -> tuple[bool, bool]:
    """Whether `node` holds a `break`, and whether it snapshots: one scan for both."""
    breaks = snapshots = False
    for n in subtree(node):
        breaks = breaks or isinstance(n, ast.Break)
        snapshots = snapshots or _snapshot_node(n)
    return breaks, snapshots


_PURE_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor)


def _pure(node: ast.AST) -> bool:
    """Evaluating `node` can neither fail nor change anything (ints and locals)."""
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.Compare):
        return _pure(node.left) and all(map(_pure, node.comparators))
    if isinstance(node, ast.BoolOp):
        return all(map(_pure, node.values))
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not) and _pure(node.operand)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _PURE_BINARY) and _pure(node.left) and _pure(node.right)
    return False


def _truth(test: ast.expr) -> ast.expr:
    """`test` where only its truth counts (an if's or a conditional expression's test):
    true operands of `and` (false ones of `or`) dropped, and a false operand of `and`
    (true of `or`) decides it when the operands before it are pure."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand)
        return ast.Constant(not inner.value) if _int(inner) else \
            ast.UnaryOp(ast.Not(), inner)
    if not isinstance(test, ast.BoolOp):
        return test
    decides = isinstance(test.op, ast.Or)  # an operand of this truth ends the chain
    kept: list[ast.expr] = []
    for v in map(_truth, test.values):
        if not _int(v):
            kept.append(v)
        elif bool(v.value) == decides:
            if all(map(_pure, kept)):
                return ast.Constant(decides)
            kept.append(v)
            break
    if not kept:
        return ast.Constant(not decides)
    return kept[0] if len(kept) == 1 else ast.BoolOp(test.op, kept)


class _Substitute(ast.NodeTransformer):
    """Reads of constant slots replaced, then constant expressions and ifs decided."""

    def __init__(self, values: dict[str, int]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return ast.copy_location(ast.Constant(self.values[node.id]), node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        operands = [node.left, *node.comparators]
        if len(node.ops) == 1 and all(map(_int, operands)) and type(node.ops[0]) in _COMPARE:
            value = _COMPARE[type(node.ops[0])](operands[0].value, operands[1].value)
            return ast.copy_location(ast.Constant(value), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        op = type(node.op)
        if _int(node.left) and _int(node.right):
            a, b = node.left.value, node.right.value
            if op in _BINARY:
                return ast.copy_location(ast.Constant(_BINARY[op](a, b)), node)
            if op is ast.RShift and b >= 0:  # a negative shift raises: at run time
                return ast.copy_location(ast.Constant(a >> b), node)
            if op is ast.LShift and 0 <= b and a.bit_length() + b <= _LARGEST_SHIFT:
                return ast.copy_location(ast.Constant(a << b), node)
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) and _int(node.operand):
            return ast.copy_location(ast.Constant(not node.operand.value), node)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        """Leading constant operands only: `c and x` is c if c is false, else x
        (the same for `or` with true), as Python evaluates it."""
        self.generic_visit(node)
        values = list(node.values)
        decides = isinstance(node.op, ast.Or)  # an operand this truthy ends the chain
        while values and _int(values[0]):
            if bool(values[0].value) == decides or len(values) == 1:
                return values[0]
            values.pop(0)
        if len(values) == 1:
            return values[0]
        node.values = values
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        node.test = _truth(node.test)
        if _int(node.test):
            return node.body if node.test.value else node.orelse
        return node

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        node.test = _truth(node.test)
        if _int(node.test):
            return node.body if node.test.value else node.orelse  # may be none: _fold
        return node


def _slot_names(fn: ast.FunctionDef) -> tuple[list[ast.Name], set[str]]:
    """The slot names in `fn`, and those assigned in a loop (not `for _ in _ONCE:`).
    subtree lists a node before those under it, so an outer loop comes before the
    loops in it, which its own scan has covered."""
    names: list[ast.Name] = []
    looped: set[str] = set()
    in_loops: set[int] = set()
    for node in subtree(fn):
        if isinstance(node, ast.Name):
            if _LOCAL_RE.fullmatch(node.id):
                names.append(node)
        elif isinstance(node, ast.While | ast.For) and id(node) not in in_loops \
                and not (isinstance(node, ast.For) and _is_once_loop(node)):
            inside = subtree(node)
            in_loops.update(map(id, inside))
            looped.update(x.id for x in inside if isinstance(x, ast.Name)
                          and not isinstance(x.ctx, ast.Load))
    return names, looped


def _unassigned_reads(names: list[ast.Name], looped: set[str], template) -> dict[str, object]:
    """The slots every read of which comes before any assignment, with their values
    from the template: what those reads see. Code only runs forward here except in
    loops (not `for _ in _ONCE:`), so a slot assigned in one is left out. `names`,
    `looped`: from _slot_names."""
    first_store: dict[str, tuple[int, int]] = {}
    last_load: dict[str, tuple[int, int]] = {}
    for n in names:
        at = (n.lineno, n.col_offset)
        if isinstance(n.ctx, ast.Load):
            last_load[n.id] = max(last_load.get(n.id, at), at)
        else:
            first_store[n.id] = min(first_store.get(n.id, at), at)
    out = {}
    for name, at in last_load.items():
        value = template[int(name[2:])]
        if name not in looped and at < first_store.get(name, (1 << 62, 0)) \
                and (value is None or type(value) in (int, bytes)):
            out[name] = value
    return out


def _constant_store(st: ast.stmt, stores: dict[str, int]) -> list[str] | None:
    """The slots `st` assigns an int constant to, each its only assignment; or None."""
    if not (isinstance(st, ast.Assign) and _int(st.value)):
        return None
    names = [t.id for t in st.targets if isinstance(t, ast.Name)]
    if len(names) != len(st.targets) or not all(
            _LOCAL_RE.fullmatch(x) and stores.get(x) == 1 for x in names):
        return None
    return names


def fold_constant_slots(fn: ast.FunctionDef, template, seen: set[int] | None = None
                        ) -> tuple[dict[int, int], bool]:
    """`fn` with its constant slots folded (see the module's doc); returns the slots
    whose assignment is gone, with their values (the hand-back's template must hold
    them), and whether anything new was folded (`seen`: the stores folded before, by
    id, updated). The reads of a slot that come before any
    assignment of it see the template's value (`template`): those are folded too.

    A constant store dominates what follows it when it is a statement of the
    function's body, or of a top-level `for _ in _ONCE:` block before any `break`
    of that block."""
    names, looped = _slot_names(fn)
    unassigned = _unassigned_reads(names, looped, template)
    stores: dict[str, int] = {}  # only slots: a constant store is of a slot
    for n in names:
        if isinstance(n.ctx, ast.Store | ast.Del):
            stores[n.id] = stores.get(n.id, 0) + 1
    candidates: dict[int, tuple[list[str], object, bool]] = {}  # id(store) -> ...
    snapshot_before = False
    for top in fn.body:
        block = top.body if _is_once(top) else [top]
        for i, st in enumerate(block):
            stored = _constant_store(st, stores)
            if stored is not None:
                candidates[id(st)] = (stored, st.value.value, snapshot_before)
                continue
            breaks, snapshots = _breaks_and_snapshots(st)
            snapshot_before = snapshot_before or snapshots
            if st is not top and breaks:  # what follows in this block may not run
                snapshot_before = snapshot_before or any(map(_snapshots, block[i + 1:]))
                break
    seen = set() if seen is None else seen
    new = candidates.keys() - seen
    seen |= new
    if not new and not unassigned:
        return {}, False
    # Each statement sees the slots whose store comes before it.
    values: dict[str, object] = dict(unassigned)

    def fold_block(stmts: list[ast.stmt], top: bool) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for st in stmts:
            if id(st) in candidates:
                names, value, _snapshot = candidates[id(st)]
                values.update(dict.fromkeys(names, value))
                out.append(st)
            elif top and _is_once(st):
                st.body = fold_block(st.body, False) or [ast.Pass()]
                out.append(st)
            else:
                out += _fold(st, values)
        return out
    fn.body = fold_block(fn.body, True)
    loads = {n.id for n in subtree(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    dropped: dict[int, int] = {}
    gone: set[str] = set()
    for names, value, snapshot in candidates.values():
        for x in names:
            k = int(x[2:])
            # a hand-back before the store has the template's value: the same one?
            if x not in loads and (not snapshot or (type(template[k]) is type(value)
                                                    and template[k] == value)):
                dropped[k] = value
                gone.add(x)
    if gone:
        _remove_stores(fn, gone)
    return dropped, True


def _remove_stores(fn: ast.FunctionDef, names: set[str]) -> None:
    """The assignments of `names` (constant stores of fn's body or its blocks) gone."""
    def strip(stmts: list[ast.stmt]) -> list[ast.stmt]:
        out = []
        for st in stmts:
            if _is_once(st):
                st.body = strip(st.body) or [ast.Pass()]
            elif isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets):
                st.targets = [t for t in st.targets if t.id not in names]
                if not st.targets:
                    continue
            out.append(st)
        return out
    fn.body = strip(fn.body)


def _fold(stmt: ast.stmt, values: dict[str, int]) -> list[ast.stmt]:
    if not values:
        return [stmt]
    out = _Substitute(dict(values)).visit(stmt)
    out = out if isinstance(out, list) else [out]
    for st in out:  # a block left with no statement gets a `pass`
        for n in subtree(st):
            if isinstance(n, ast.If | ast.For | ast.While) and not n.body:
                n.body = [ast.Pass()]
    return out


# -- join dispatch -------------------------------------------------------------------------
_UNKNOWN = None  # the dispatch variable's value cannot be told here


def _dispatch_test(test: ast.expr) -> int | None:
    """K for a test `n == K` (the join dispatch of codegen_control._emit_graph)."""
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) \
            and test.left.id == "n" and len(test.ops) == 1 \
            and isinstance(test.ops[0], ast.Eq) and _int(test.comparators[0]):
        return test.comparators[0].value
    return None


def _stores_n(node: ast.AST) -> bool:
    return any(isinstance(x, ast.Name) and x.id == "n" and not isinstance(x.ctx, ast.Load)
               for x in subtree(node))


class _Dispatch:
    """Which values `n` may hold, statement by statement: a set of ints, or _UNKNOWN."""

    def block(self, stmts: list[ast.stmt], vals, breaks: list | None):
        """The statements with the decidable `if n == K` decided, and the values of n
        where they fall through (an empty set: they never do)."""
        out: list[ast.stmt] = []
        for st in stmts:
            if vals is not _UNKNOWN and not vals:
                out.append(st)  # unreachable; kept as it is
                continue
            new, vals = self.stmt(st, vals, breaks)
            out += new
        return out, vals

    def stmt(self, st: ast.stmt, vals, breaks: list | None):
        if isinstance(st, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == "n" for t in st.targets) \
                    and len(st.targets) == 1 and _int(st.value):
                return [st], frozenset([st.value.value])
            return [st], (_UNKNOWN if _stores_n(st) else vals)
        if isinstance(st, ast.If):
            k = _dispatch_test(st.test)
            if k is not None and vals is not _UNKNOWN:
                if k not in vals:
                    return self.block(st.orelse, vals, breaks)
                if vals == {k}:
                    return self.block(st.body, vals, breaks)
            taken = frozenset([k]) if k is not None else vals
            left = vals - {k} if k is not None and vals is not _UNKNOWN else vals
            st.body, body_vals = self.block(st.body, taken, breaks)
            st.orelse, else_vals = self.block(st.orelse, left, breaks)
            st.body = st.body or [ast.Pass()]
            return [st], _union(body_vals, else_vals)
        if isinstance(st, ast.For) and _is_once_loop(st) and not st.orelse:
            exits: list = []
            st.body, vals = self.block(st.body, vals, exits)
            for b in exits:
                vals = _union(vals, b)
            return [st], vals
        if isinstance(st, ast.Break):
            if breaks is None:
                return [st], _UNKNOWN
            breaks.append(vals)
            return [st], frozenset()
        if isinstance(st, ast.Return):
            return [st], frozenset()
        if isinstance(st, ast.For | ast.While):  # loops: not looked into
            return [st], (_UNKNOWN if _stores_n(st) else vals)
        if isinstance(st, ast.Continue):
            return [st], _UNKNOWN
        if breaks is not None and any(isinstance(x, ast.Break) for x in subtree(st)):
            breaks.append(_UNKNOWN)  # a break inside a statement not modelled here
        return [st], (_UNKNOWN if _stores_n(st) else vals)


def _is_once_loop(st: ast.For) -> bool:
    return isinstance(st.iter, ast.Name) and st.iter.id == "_ONCE"


def _union(a, b):
    if a is _UNKNOWN or b is _UNKNOWN:
        return _UNKNOWN
    return a | b


def decide_dispatch(fn: ast.FunctionDef) -> None:
    """Every `if n == K` of a join dispatch in `fn` decided where the values `n` may
    hold there are known (set to constants on every path that reaches it)."""
    fn.body, _ = _Dispatch().block(fn.body, _UNKNOWN, None)


def fold(src: str, template) -> tuple[str, dict[int, int]]:
    """The fused function in `src` with its constant slots folded and its join
    dispatch decided where it can be; and the slots whose assignment is gone, with
    their values (see fold_constant_slots). `template`: the slots' initial values."""
    tree = ast.parse(src)
    fn = tree.body[0]
    dropped: dict[int, int] = {}
    seen: set[int] = set()
    for _ in range(FOLD_ROUNDS):  # a folded store may make the next one constant
        more, changed = fold_constant_slots(fn, template, seen)
        dropped.update(more)
        if not changed:
            break
    decide_dispatch(fn)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n", dropped
