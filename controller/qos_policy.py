"""The SM's QoS policy file: OpenSM's QoS options (opensm.conf), a documented subset,
plus the traffic classes of a scenario.

One setting a line, `#` starts a comment:

    qos_max_vls 2                  # VLs in use (1-8); tables may name only these
    qos_high_limit 0               # limit of high priority, 4096-byte units (255 = unbounded)
    qos_vlarb_high 2:4             # high-priority table: VL:weight,... (weight in 64 bytes)
    qos_vlarb_low 0:224,1:32       # low-priority table
    qos_sl2vl 0,1,2,3,4,5,6,7,...  # VL of SL 0, 1, ... (up to 16 values; default SL n -> VL n)
    qos_class gradient 0           # fabriclab: traffic class name -> SL
    qos_class checkpoint 1

As in OpenSM, `qos_ca_<option>` applies to host (CA) ports only and
`qos_swe_<option>` to switch external ports only; a plain `qos_<option>` is the
default of both. Anything else (a misspelt option, a weight of 300, a VL
beyond qos_max_vls, an option given twice) is refused with its line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from traffic.vl_arbitration import MAX_WEIGHT, VlArbitration, VlArbitrationError

NUM_SLS = 16
PORT_KINDS = ("ca", "swe")  # host ports, switch external ports (OpenSM's names)
_TABLE_OPTIONS = ("max_vls", "high_limit", "vlarb_high", "vlarb_low", "sl2vl")
_CLASS_NAME = re.compile(r"^[A-Za-z][\w-]*$")


class QosPolicyError(ValueError):
    """A QoS policy file that cannot be used; the message names the line."""


@dataclass(frozen=True)
class PortQos:
    """What one kind of port (hosts or switch ports) gets."""

    max_vls: int
    arbitration: VlArbitration
    sl2vl: tuple[int, ...]

    def vl_of_sl(self, sl: int) -> int:
        return self.sl2vl[sl]


@dataclass(frozen=True)
class QosPolicy:
    ca: PortQos
    swe: PortQos
    classes: dict[str, int] = field(default_factory=dict)  # traffic class -> SL

    def sl_of_class(self, name: str) -> int:
        try:
            return self.classes[name]
        except KeyError:
            raise QosPolicyError(f"traffic class {name!r} is not in the QoS policy "
                                 f"(qos_class lines: {', '.join(sorted(self.classes)) or 'none'})"
                                 ) from None

    def as_dict(self) -> dict:
        """For the run's report: the arbitration configuration as installed."""
        return {"classes": dict(self.classes),
                **{kind: {"max_vls": q.max_vls, "sl2vl": list(q.sl2vl),
                          **q.arbitration.as_dict()}
                   for kind, q in (("ca", self.ca), ("swe", self.swe))}}


def parse_qos_policy(text: str, source: str = "qos policy") -> QosPolicy:
    """Parse the file's text; QosPolicyError names `source` and the line."""
    settings: dict[tuple[str, str], tuple[int, object]] = {}  # (kind|"", option) -> (line, v)
    classes: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source}:{lineno}"
        key, _, value = line.partition(" ")
        value = value.strip()
        if key == "qos_class":
            name, sl = _parse_class(value, where)
            if name in classes:
                raise QosPolicyError(f"{where}: traffic class {name!r} given twice")
            classes[name] = sl
            continue
        kind, option = _split_key(key, where)
        if not value:
            raise QosPolicyError(f"{where}: {key} needs a value")
        if (kind, option) in settings:
            first = settings[(kind, option)][0]
            raise QosPolicyError(f"{where}: {key} given twice (first on line {first})")
        settings[(kind, option)] = (lineno, _parse_value(option, value, where))
    ca = _port_qos("ca", settings, source)
    swe = _port_qos("swe", settings, source)
    return QosPolicy(ca=ca, swe=swe, classes=classes)


def load_qos_policy(path: Path | str) -> QosPolicy:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise QosPolicyError(f"{path}: {exc.strerror}") from None
    return parse_qos_policy(text, str(path))


def _split_key(key: str, where: str) -> tuple[str, str]:
    if not key.startswith("qos_"):
        raise QosPolicyError(f"{where}: unknown option {key!r} (expected qos_...)")
    rest = key[4:]
    for kind in PORT_KINDS:
        if rest.startswith(kind + "_"):
            kind_rest = rest[len(kind) + 1:]
            if kind_rest in _TABLE_OPTIONS:
                return kind, kind_rest
    if rest in _TABLE_OPTIONS:
        return "", rest
    raise QosPolicyError(f"{where}: unknown option {key!r} (known: qos_[ca_|swe_]"
                         f"{{{','.join(_TABLE_OPTIONS)}}}, qos_class)")


def _int(text: str, what: str, where: str, lo: int, hi: int) -> int:
    try:
        n = int(text, 0)
    except ValueError:
        raise QosPolicyError(f"{where}: {what} {text!r} is not a number") from None
    if not lo <= n <= hi:
        raise QosPolicyError(f"{where}: {what} {n} is not {lo}-{hi}")
    return n


def _parse_value(option: str, value: str, where: str) -> object:
    if option == "max_vls":
        return _int(value, "qos_max_vls", where, 1, 8)
    if option == "high_limit":
        return _int(value, "high limit", where, 0, 255)
    if option == "sl2vl":
        vls = [_int(v.strip(), "VL", where, 0, 14) for v in value.split(",")]
        if len(vls) > NUM_SLS:
            raise QosPolicyError(f"{where}: qos_sl2vl has {len(vls)} values, at most {NUM_SLS}")
        return tuple(vls)
    entries = []
    for item in filter(None, (v.strip() for v in value.split(","))):
        vl, colon, weight = item.partition(":")
        if not colon:
            raise QosPolicyError(f"{where}: {item!r} is not VL:weight")
        entries.append((_int(vl, "VL", where, 0, 14),
                        _int(weight, "weight", where, 0, MAX_WEIGHT)))
    return tuple(entries)


def _parse_class(value: str, where: str) -> tuple[str, int]:
    parts = value.split()
    if len(parts) != 2 or not _CLASS_NAME.match(parts[0]):
        raise QosPolicyError(f"{where}: expected 'qos_class NAME SL', got {value!r}")
    return parts[0], _int(parts[1], "SL", where, 0, NUM_SLS - 1)


def _port_qos(kind: str, settings: dict, source: str) -> PortQos:
    def get(option: str, default):
        hit = settings.get((kind, option)) or settings.get(("", option))
        return hit if hit is not None else (0, default)

    max_line, max_vls = get("max_vls", 8)
    limit_line, high_limit = get("high_limit", 0)
    high_line, high = get("vlarb_high", ())
    low_line, low = get("vlarb_low", None)
    sl_line, sl2vl = get("sl2vl", ())
    if low is None:  # no tables given: every VL in use, equal weights (round robin)
        low = tuple((vl, 1) for vl in range(max_vls)) if not high else ()
    for line, table in ((high_line, high), (low_line, low)):
        for vl, _w in table:
            if vl >= max_vls:
                raise QosPolicyError(f"{source}:{line}: VL {vl} is beyond qos_max_vls "
                                     f"{max_vls} (line {max_line or 'default'})")
    for sl, vl in enumerate(sl2vl):
        if vl >= max_vls:
            raise QosPolicyError(f"{source}:{sl_line}: SL {sl} maps to VL {vl}, beyond "
                                 f"qos_max_vls {max_vls}")
    # SLs the file leaves out: SL n -> VL n where that VL is in use, else VL 0
    sl2vl = tuple(sl2vl) + tuple(sl if sl < max_vls else 0
                                 for sl in range(len(sl2vl), NUM_SLS))
    try:
        arbitration = VlArbitration(high=high, low=low, high_limit=high_limit)
    except VlArbitrationError as exc:
        line = max(high_line, low_line, limit_line)
        raise QosPolicyError(f"{source}:{line}: {exc}") from None
    return PortQos(max_vls=max_vls, arbitration=arbitration, sl2vl=sl2vl)
