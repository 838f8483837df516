"""Which locals of a generated function may be read before they are assigned: the
slots the fused function's prologue must load from the template (see
FusedCodegen._gen_fused). A definite-assignment analysis over the subset of Python
the generator writes; anything else gives up and answers every slot read.

The analysis also follows header validity: the parser sets a header's valid slot to
1 together with its fields, and the code after it reads the fields under
`if <valid>:`. On each path it keeps, for a slot v, the names assigned wherever v
is true (`implied[v]`), and the slots known false (their template value, or a false
constant assigned), so that `if v:` adds what v implies."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from p4switch.ast_nodes import subtree
from p4switch.program_common import _LOCAL_RE as _SLOT_NAME_RE


class _GiveUp(Exception):
    """A construct the analysis does not model."""


@dataclass
class _Path:
    """What holds on every path reaching a point."""

    assigned: frozenset
    false: frozenset  # slots known false
    implied: dict = field(default_factory=dict)  # v -> names assigned wherever v is true

    def copy(self) -> _Path:
        return _Path(self.assigned, self.false, dict(self.implied))

    def when_true(self, names: set[str]) -> _Path:
        extra = set().union(*(self.implied.get(v, ()) for v in names))
        return _Path(self.assigned | extra, self.false - names, dict(self.implied))

    def assign(self, names: set[str], const=None) -> None:
        """`names` assigned; `const` is the assigned value when a plain constant."""
        self.assigned |= names
        for v in self.implied:
            self.implied[v] = self.implied[v] | names
        for x in names:
            self.implied.pop(x, None)
            if isinstance(const, ast.Constant) and isinstance(const.value, int):
                if const.value:
                    self.false -= {x}
                    self.implied[x] = self.assigned
                else:
                    self.false |= {x}
            else:
                self.false -= {x}

    def forget(self, names: set[str]) -> None:
        """Facts about `names` dropped (they may have been reassigned)."""
        self.false -= names
        for x in names:
            self.implied.pop(x, None)


def _meet(p: _Path | None, q: _Path | None) -> _Path | None:
    """Both paths joined; None is an unreachable point (after break or return)."""
    if p is None:
        return q
    if q is None:
        return p
    out = _Path(p.assigned & q.assigned, p.false & q.false)
    for v in p.implied.keys() | q.implied.keys():
        sides = [r.implied.get(v, r.assigned) for r in (p, q) if v not in r.false]
        if sides:
            out.implied[v] = sides[0] if len(sides) == 1 else sides[0] & sides[1]
    return out


def _tested_true(test: ast.expr) -> set[str]:
    """Slots that are true wherever `test` is."""
    if isinstance(test, ast.Name) and _SLOT_NAME_RE.fullmatch(test.id):
        return {test.id}
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) \
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotEq) \
            and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value == 0:
        return _tested_true(test.left)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return set().union(*(_tested_true(v) for v in test.values))
    return set()


def _stored(nodes) -> set[str]:
    return {n.id for t in nodes for n in subtree(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


class _Analysis:
    def __init__(self) -> None:
        self.needs: set[str] = set()

    def read(self, node: ast.AST, p: _Path) -> None:
        """Every slot `node` reads, checked against the names assigned on all paths."""
        for n in subtree(node):
            if isinstance(n, ast.NamedExpr | ast.Lambda | ast.comprehension):
                raise _GiveUp
            if isinstance(n, ast.Name) and _SLOT_NAME_RE.fullmatch(n.id) \
                    and isinstance(n.ctx, ast.Load) and n.id not in p.assigned:
                self.needs.add(n.id)

    def block(self, stmts: list[ast.stmt], p: _Path | None, breaks: list | None):
        for s in stmts:
            if p is None:
                return None
            p = self.stmt(s, p, breaks)
        return p

    def stmt(self, s: ast.stmt, p: _Path, breaks: list | None) -> _Path | None:
        if isinstance(s, ast.Assign):
            self.read(s.value, p)
            for t in s.targets:
                self.read(t, p)  # subscripts and attributes in a target read
            plain = all(isinstance(t, ast.Name) for t in s.targets)
            p.assign(_stored(s.targets), s.value if plain else None)
            return p
        if isinstance(s, ast.AugAssign):
            self.read(s.value, p)
            if isinstance(s.target, ast.Name):
                self.read(ast.Name(s.target.id, ast.Load()), p)
                p.assign({s.target.id})
            else:
                self.read(s.target, p)
            return p
        if isinstance(s, ast.If):
            self.read(s.test, p)
            t = s.test
            negated = isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not)
            body = self.block(s.body, p.when_true(set() if negated else _tested_true(t)),
                              breaks)
            orelse = p.when_true(_tested_true(t.operand) if negated else set())
            return _meet(body, self.block(s.orelse, orelse, breaks))
        if isinstance(s, ast.For | ast.While):
            return self.loop(s, p)
        if isinstance(s, ast.Break | ast.Continue):
            if breaks is None or isinstance(s, ast.Continue):
                raise _GiveUp
            breaks.append(p)
            return None
        if isinstance(s, ast.Return):
            if s.value is not None:
                self.read(s.value, p)
            return None
        if isinstance(s, ast.Expr | ast.Pass):
            self.read(s, p)
            return p
        if isinstance(s, ast.Try) and not (s.orelse or s.finalbody):
            # A handler may run after any part of the body: it starts from what held
            # before the body.
            out = self.block(s.body, p.copy(), breaks)
            for h in s.handlers:
                if h.type is not None:
                    self.read(h.type, p)
                out = _meet(out, self.block(h.body, p.copy(), breaks))
            return out
        raise _GiveUp

    def loop(self, s: ast.For | ast.While, p: _Path) -> _Path | None:
        if s.orelse:
            raise _GiveUp
        if isinstance(s, ast.For) and isinstance(s.iter, ast.Name) and s.iter.id == "_ONCE":
            # `for _ in _ONCE:` runs its body once; a break leaves it.
            breaks: list = []
            out = self.block(s.body, p, breaks)
            for b in breaks:
                out = _meet(out, b)
            return out
        self.read(s.iter if isinstance(s, ast.For) else s.test, p)
        changed = _stored(s.body) | (_stored([s.target]) if isinstance(s, ast.For) else set())
        p.forget(changed)  # as on a later iteration, and after the loop
        inner = p.copy()
        if isinstance(s, ast.For):
            inner.assign(_stored([s.target]))
        self.block(s.body, inner, [])
        return p  # the body may not run


def slots_to_load(src: str, false_initially: set[int] = frozenset()) -> set[int]:
    """The slots `S_k` the function in `src` may read before assigning them on
    some path (all the slots it reads if its code is beyond the analysis).
    `false_initially`: the slots whose template value is false."""
    fn = ast.parse(src).body[0]
    analysis = _Analysis()
    try:
        analysis.block(fn.body, _Path(frozenset(), frozenset(
            f"S_{k}" for k in false_initially)), None)
        names = analysis.needs
    except _GiveUp:
        names = {n.id for n in subtree(fn) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Load) and _SLOT_NAME_RE.fullmatch(n.id)}
    return {int(n[2:]) for n in names}
