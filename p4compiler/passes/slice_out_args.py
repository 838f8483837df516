"""SliceOutArguments (part of p4c's SideEffectOrdering: "If the parameter is out and
the argument is a slice then also use a temporary").

A slice is an l-value (P4_16 6.7), so it may be the `out`/`inout` argument of an extern
method or extern function: `r.read(h.f[15:8], i)`, `hash(m.x[15:0], ...)`,
`random(h.f[7:4], lo, hi)`. bmv2's primitives write whole fields only, so such a call
becomes, as p4c writes it,

    bit<W> tmp_N = h.f[15:8];     // W: the slice's width; inout only: copy-in
    r.read(tmp_N, i);
    h.f[15:8] = tmp_N;            // copy-out, a slice assignment the back end lowers

with the copy-outs in parameter order after the call. Calls of actions, functions and
controls copy their arguments in and out already (InlineActions, the type checker's
inliners).

Guarantees to the back end: no `out`/`inout` argument of an extern method or extern
function call statement is a slice, in apply blocks, actions and parser states.
"""

from __future__ import annotations

from typing import Any

from .. import ir
from ..typecheck_entities import TypedBlock, TypedProgram
from ..typecheck_tree import _rewrite
from .temps import Temps, into_sub_controls

_EXTERN_CALLS = ("method", "extern_function")


def _directions(call: ir.Call) -> list[str]:
    proto = call.target[-1]
    if not isinstance(proto, ir.MethodProto):
        return []
    return [p.direction for p in proto.params]


def _slice_outs(call: ir.Call) -> list[int]:
    """Indices of the arguments that are slices bound to out/inout parameters."""
    if not (call.target and call.target[0] in _EXTERN_CALLS):
        return []
    dirs = _directions(call)
    return [i for i, a in enumerate(call.args)
            if isinstance(a.value, ir.Slice) and i < len(dirs) and dirs[i] in ("out", "inout")]


class SliceOutArguments:
    name = "SliceOutArguments"

    def __init__(self, temps: Temps):
        self.temps = temps

    def run(self, program: TypedProgram) -> None:
        for b in program.blocks.values():
            self.temps.block = b
            self.block(b)

    def block(self, b: TypedBlock) -> None:
        if b.body is not None:
            b.body = self.rewrite(b.body)
        b.states = [self.rewrite(s) for s in b.states]
        for a in b.actions:
            a.body = self.rewrite(a.body)
        for t in b.tables:
            for r in t.actions:
                r.action.body = self.rewrite(r.action.body)

    def rewrite(self, body: Any) -> Any:
        made: set[int] = set()      # the blocks made here, spliced into their parent block

        def visit(x: Any) -> Any:
            if isinstance(x, ir.CallStmt) and _slice_outs(x.call):
                block = self.through_temps(x)
                made.add(id(block))
                return block
            if isinstance(x, ir.Block) and any(id(s) in made for s in x.stmts):
                stmts = (t for s in x.stmts for t in (s.stmts if id(s) in made else (s,)))
                return ir.Block(tuple(stmts), x.loc)
            return into_sub_controls(x, self.rewrite)
        return _rewrite(body, visit)

    def through_temps(self, s: ir.CallStmt) -> ir.Stmt:
        call = s.call
        dirs = _directions(call)
        pre: list[ir.Stmt] = []
        post: list[ir.Stmt] = []
        args = list(call.args)
        for i in _slice_outs(call):
            arg = args[i]
            target = arg.value
            assert isinstance(target, ir.Slice) and target.type is not None
            tmp = self.temps.new("tmp", target.type, arg.loc)
            if dirs[i] == "inout":
                pre.append(Temps.decl(tmp, target, arg.loc))
            post.append(ir.Assign(target, tmp, arg.loc))
            args[i] = ir.Arg(tmp, arg.name, arg.loc)
        new_call = ir.Call(call.callee, tuple(args), call.type_args, call.loc, call.type,
                           call.target)
        return ir.Block((*pre, ir.CallStmt(new_call, s.loc), *post), s.loc)
