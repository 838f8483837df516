"""What the store's parts share: the records kept per table, the data-plane call
wrapper and small helpers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from ..runtime_api import DataplaneError
from .errors import (
    P4RuntimeError,
    invalid,
)
from .translate import (
    MatchKey,
)

Undo = Callable[[], None]
INSERT, MODIFY, DELETE = (
    p4runtime_pb2.Update.INSERT,
    p4runtime_pb2.Update.MODIFY,
    p4runtime_pb2.Update.DELETE,
)


def noop() -> None:
    pass


@dataclass
class TableRecord:
    entry: p4runtime_pb2.TableEntry  # canonical, without direct resource data
    handle: int | None  # None for entries the program installed itself (const entries)
    meter_config: p4runtime_pb2.MeterConfig | None = None


@dataclass
class TableState:
    entries: dict[tuple[MatchKey, int], TableRecord] = field(default_factory=dict)
    default_action: p4runtime_pb2.TableAction | None = None  # None: the program's default
    default_entry_extra: p4runtime_pb2.TableEntry | None = None  # cookies of the default entry


def dp_call(call: Callable, *args):
    """Call the data plane; its refusals become INTERNAL with its message."""
    try:
        return call(*args)
    except DataplaneError as e:
        raise P4RuntimeError(code_pb2.INTERNAL, f"data plane: {e}") from e


def meter_rates(cfg: p4runtime_pb2.MeterConfig) -> list[tuple[float, int]]:
    """MeterConfig (units per second) -> data-plane rates (units per microsecond)."""
    if min(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst) < 0:
        raise invalid("meter config: negative rate or burst")
    if cfg.pir < cfg.cir:
        raise invalid(f"meter config: pir {cfg.pir} < cir {cfg.cir}")
    return [(cfg.cir / 1e6, cfg.cburst), (cfg.pir / 1e6, cfg.pburst)]


def copy_msg(msg):
    out = type(msg)()
    out.CopyFrom(msg)
    return out
