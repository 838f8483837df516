"""Shared by the parts of the switch's program generator (p4switch/program*.py,
codegen_*.py) and the switch: v1model constants, the fixed slots of the per-packet
state S, header layouts, errors, and the arithmetic helpers generated code calls."""

from __future__ import annotations

import re

# v1model instance types (simple_switch's values)
INSTANCE_NORMAL = 0
INSTANCE_INGRESS_CLONE = 1
INSTANCE_EGRESS_CLONE = 2
INSTANCE_RECIRC = 4
INSTANCE_REPLICATION = 5
INSTANCE_RESUBMIT = 6

DROP_PORT = 511

STANDARD_FIELDS = (
    "ingress_port", "egress_spec", "egress_port", "instance_type", "packet_length",
    "enq_timestamp", "enq_qdepth", "deq_timedelta", "deq_qdepth",
    "ingress_global_timestamp", "egress_global_timestamp", "mcast_grp", "egress_rid",
    "checksum_error", "parser_error", "priority",
)

# bmv2's built-in values, used when the JSON does not declare the core errors.
CORE_ERRORS = {
    "NoError": 0, "PacketTooShort": 1, "NoMatch": 2, "StackOutOfBounds": 3,
    "HeaderTooShort": 4, "ParserTimeout": 5, "ParserInvalidArgument": 6,
}

# Fixed slots of S.
PKT = 0        # the packet bytes raw offsets refer to
PAYLOAD = 1    # offset where the parser stopped
CLONE = 2      # clone session requested (-1: none)
CLONE_FL = 3   # field list to preserve in the clone
RESUBMIT = 4   # field list id + 1, 0: not requested
RECIRC = 5     # field list id + 1, 0: not requested
DIGESTS = 6    # None or list of learn list ids
TRUNC = 7      # truncate to this many bytes + 1 (0: no)
SPECIAL = 8    # 1 once any of CLONE, RESUBMIT, RECIRC, DIGESTS was requested
# simple_switch keeps a clone's session id in 15 bits (the 16th marks a clone requested,
# so that session 0 works): clone(I2E, 0x10005) goes to session 5 (register_access.h)
CLONE_SESSION_MASK = 0x7FFF
FIXED_SLOTS = 9

BYTE_ALIGNED_READERS = {8: "{p}[{o}]", 16: "({p}[{o}] << 8 | {p}[{o}+1])"}


TAIL_DUPLICATION_LINES = 60  # see _emit_graph
_SLOT_RE = re.compile(r"\bS\[(\d+)\]")
_S_RE = re.compile(r"\bS\b")
_MAT_RE = re.compile(r"^_mat_(\d+)\(S\)$")
_LOCAL_RE = re.compile(r"S_(\d+)")  # a local copy of slot k, in generated code


class ProgramError(ValueError):
    """A bmv2 JSON the switch cannot run; the message names the element."""


# The part of the switch that read the JSON when it met a shape it did not expect:
# module (or program.py's method) -> what it was reading.
_READING = {
    "json_checks": "the references between its elements", "codegen_parser": "the parsers",
    "codegen_control": "the pipelines' tables and conditionals",
    "codegen_actions": "the actions", "codegen_expr": "an expression",
    "codegen_assigned": "the actions", "codegen_fused": "the pipelines",
    "_layout": "the header types, headers, stacks and unions",
    "_objects": "the errors, actions, extern arrays, field lists, calculations and "
                "pipelines",
}


def malformed(exc: BaseException) -> ProgramError:
    """A ProgramError for a JSON whose shape the switch did not expect (a value of the
    wrong type, a missing attribute, an index out of range): what it was reading and the
    nearest named element, instead of a traceback."""
    reading, element = "the JSON", None
    tb = exc.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("p4switch."):
            continue
        part = module.rsplit(".", 1)[1]
        if reading == "the JSON":
            reading = _READING.get(frame.f_code.co_name if part == "program" else part,
                                   reading)
        if element is None:
            element = next((v["name"] for v in frame.f_locals.values()
                            if isinstance(v, dict) and isinstance(v.get("name"), str)),
                           None)
    near = f", near {element!r}" if element else ""
    return ProgramError(f"bmv2 JSON: an element of an unexpected shape while reading "
                        f"{reading}{near} ({type(exc).__name__}: {exc})")


class PipelineAbort(Exception):
    """An assert/assume failed: the packet is dropped and the failure logged."""


class Header:
    """Layout of one header (or metadata) instance in S."""

    def __init__(self, name: str, type_name: str, metadata: bool,
                 fields: list[tuple[str, int | str, bool]]):
        self.name = name
        self.type_name = type_name
        self.metadata = metadata
        self.fields = fields  # (name, width or "*", signed)
        self.valid = -1
        self.raw = -1
        self.dirty = -1
        self.slots: dict[str, int] = {}
        self.var_field: str | None = None
        self.var_width = -1  # slot holding the current width of the varbit field
        self.max_bytes: int | None = None  # header type's max_length (varbit headers)
        self.nbits = sum(w for _f, w, _s in fields if w != "*")
        self.index = -1

    @property
    def fixed_bytes(self) -> int:
        return self.nbits // 8


def _hex(v) -> int:
    if isinstance(v, int):
        return v
    if not isinstance(v, str):
        raise ValueError(f"expected a hexstring, found {v!r}")
    return int(v, 16)


def _indent(lines: list[str], n: int = 1) -> list[str]:
    pad = "    " * n
    return [pad + ln for ln in lines]


def _sign_extend(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def _signed_field(v: int, w: int) -> int:
    """The value an `int<w>` field holds after an assignment of v, as bmv2's
    Field::export_bytes leaves it: v itself when it fits the field's bits, signed or
    unsigned (a register's or an action parameter's 0xfe stays 254, not -2, so
    `< 0` is false and `>> 1` is 0x7f), else v wrapped to the signed range."""
    if -(1 << (w - 1)) <= v < (1 << w):
        return v
    return _sign_extend(v, w)


SHIFT_LIMIT = 1 << 16
"""A left shift by this many bits or more yields 0: beyond any field's width, so the
mask that follows every `<<` would clear it, and the huge number is never built."""


def _shift_left(v: int, n: int) -> int:
    """bmv2's `<<` by a run-time amount: Data::shift_left reads the amount as a 32-bit
    unsigned int (2**40 + 1 shifts by 1)."""
    n &= 0xFFFFFFFF
    return v << n if n < SHIFT_LIMIT else 0


def _sat_cast(v: int, w: int) -> int:
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    return max(lo, min(hi, v))


def _usat_cast(v: int, w: int) -> int:
    return max(0, min((1 << w) - 1, v))
