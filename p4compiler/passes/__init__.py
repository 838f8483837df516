"""The mid end: small IR-to-IR passes between the type checker and the bmv2 back end.

Each pass takes the typed program and rewrites it in place into simpler forms, in the
order of `PASSES` (docs/compiler.md, "Passes", says what each guarantees to the next).
"""

from __future__ import annotations

from ..typecheck_entities import TypedProgram
from .aggregate_mux import SplitAggregateMux
from .default_actions import DefaultActions
from .drop_pure_calls import DropPureCalls
from .hoist_table_applies import HoistTableApplies
from .inline_actions import InlineActions
from .key_side_effects import KeySideEffects
from .local_initializers import LocalInitializers
from .remove_unused_tables import RemoveUnusedTables
from .runtime_index_keys import RuntimeIndexKeys
from .slice_out_args import SliceOutArguments
from .strength_reduction import StrengthReduction
from .temps import Temps

PASSES = (DefaultActions, LocalInitializers, InlineActions, HoistTableApplies,
          KeySideEffects, RuntimeIndexKeys, StrengthReduction, DropPureCalls, RemoveUnusedTables,
          SplitAggregateMux, SliceOutArguments)


def run(program: TypedProgram) -> TypedProgram:
    temps = Temps(program)
    for cls in PASSES:
        cls(temps).run(program)
    return program
