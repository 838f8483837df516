"""Which locals of a generated function may be read before they are assigned: the
slots the fused function's prologue must load from the template (see
FusedCodegen._gen_fused). A definite-assignment analysis over the subset of Python
the generator writes; anything else gives up and answers every slot read."""

from __future__ import annotations

import ast
import re

_SLOT_NAME_RE = re.compile(r"S_\d+")


class _GiveUp(Exception):
    """A construct the analysis does not model."""


class _Unreachable:
    """The assigned set after a break or return: every name (the meet's identity)."""


UNREACHABLE = _Unreachable()


def _meet(a, b):
    if a is UNREACHABLE:
        return b
    if b is UNREACHABLE:
        return a
    return a & b


class _Analysis:
    def __init__(self) -> None:
        self.needs: set[str] = set()

    def read(self, node: ast.AST, assigned) -> None:
        """Every slot `node` reads, checked against the names assigned on all paths."""
        for n in ast.walk(node):
            if isinstance(n, ast.NamedExpr | ast.Lambda | ast.comprehension):
                raise _GiveUp
            if isinstance(n, ast.Name) and _SLOT_NAME_RE.fullmatch(n.id) \
                    and isinstance(n.ctx, ast.Load) and n.id not in assigned:
                self.needs.add(n.id)

    def block(self, stmts: list[ast.stmt], assigned, breaks: list | None):
        for s in stmts:
            if assigned is UNREACHABLE:
                return UNREACHABLE
            assigned = self.stmt(s, assigned, breaks)
        return assigned

    def stmt(self, s: ast.stmt, a, breaks: list | None):
        if isinstance(s, ast.Assign):
            self.read(s.value, a)
            for t in s.targets:
                self.read(t, a)  # subscripts and attributes in a target read
            return a | {n.id for t in s.targets for n in ast.walk(t)
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        if isinstance(s, ast.AugAssign):
            self.read(s.value, a)
            if isinstance(s.target, ast.Name):
                self.read(ast.Name(s.target.id, ast.Load()), a)
                return a | {s.target.id}
            self.read(s.target, a)
            return a
        if isinstance(s, ast.If):
            self.read(s.test, a)
            return _meet(self.block(s.body, a, breaks), self.block(s.orelse, a, breaks))
        if isinstance(s, ast.For | ast.While):
            return self.loop(s, a)
        if isinstance(s, ast.Break | ast.Continue):
            if breaks is None or isinstance(s, ast.Continue):
                raise _GiveUp
            breaks.append(a)
            return UNREACHABLE
        if isinstance(s, ast.Return):
            if s.value is not None:
                self.read(s.value, a)
            return UNREACHABLE
        if isinstance(s, ast.Expr | ast.Pass):
            self.read(s, a)
            return a
        raise _GiveUp

    def loop(self, s: ast.For | ast.While, a):
        if s.orelse:
            raise _GiveUp
        if isinstance(s, ast.For) and isinstance(s.iter, ast.Name) and s.iter.id == "_ONCE":
            # `for _ in _ONCE:` runs its body once; a break leaves it.
            breaks: list = []
            out = self.block(s.body, a, breaks)
            for b in breaks:
                out = _meet(out, b)
            return out
        self.read(s.iter if isinstance(s, ast.For) else s.test, a)
        inner = a if isinstance(s, ast.While) else a | {
            n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}
        self.block(s.body, inner, [])
        return a  # the body may not run


def slots_to_load(src: str) -> set[int]:
    """The slots `S_k` the function in `src` may read before assigning them on
    some path (all the slots it reads if its code is beyond the analysis)."""
    fn = ast.parse(src).body[0]
    analysis = _Analysis()
    try:
        analysis.block(fn.body, frozenset(), None)
        names = analysis.needs
    except _GiveUp:
        names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Load) and _SLOT_NAME_RE.fullmatch(n.id)}
    return {int(n[2:]) for n in names}
