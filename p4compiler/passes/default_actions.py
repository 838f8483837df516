"""DefaultActions (p4c's front end, "default_action = NoAction()" for tables without one).

A table that declares no `default_action` gets `@defaultonly NoAction` appended to its
action list (unless NoAction is already there) and `default_action = NoAction()`, not
const, exactly as p4c's front end writes it: a miss then does nothing (P4_16 spec 14.2.1.3),
and the P4Info lists NoAction with scope DEFAULT_ONLY. Tables with an action profile or
selector get them too (p4c's front end does not look at `implementation`): NoAction is then
one of their actions in the JSON and the P4Info, so the control plane may make a member of
it; the bmv2 back end leaves their default entry out, with p4c's warning.

Guarantees to the next pass: every table has a default action.
"""

from __future__ import annotations

from .. import ir
from ..errors import UNKNOWN
from ..typecheck_entities import ActionEntity, TypedActionRef, TypedProgram
from .temps import Temps


def _find_no_action(program: TypedProgram) -> ActionEntity | None:
    if isinstance(program.no_action, ActionEntity):
        return program.no_action
    for b in program.blocks.values():
        for t in b.tables:
            refs = list(t.actions) + ([t.default_action] if t.default_action else [])
            for r in refs:
                if r.action.qualified == "NoAction" and r.action.control is None:
                    return r.action
    return None


def _new_no_action() -> ActionEntity:
    """core.p4's `action NoAction() {}`, for a program that never names it."""
    body = ir.Block((), UNKNOWN)
    decl = ir.ActionDecl("NoAction", (), body, (), UNKNOWN)
    return ActionEntity("NoAction", "NoAction", (), body, (), UNKNOWN, decl, None)


class DefaultActions:
    name = "DefaultActions"

    def __init__(self, temps: Temps):
        self.temps = temps

    def run(self, program: TypedProgram) -> None:
        no_action = _find_no_action(program)
        for b in program.blocks.values():
            for t in b.tables:
                if t.default_action is not None:
                    continue
                if no_action is None:
                    no_action = _new_no_action()
                ref = next((r for r in t.actions if r.action is no_action), None)
                if ref is None:
                    ref = TypedActionRef(no_action, (), (ir.Annotation("defaultonly"),))
                    t.actions = t.actions + (ref,)
                t.default_action = TypedActionRef(no_action, ())
                t.default_const = False
