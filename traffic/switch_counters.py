"""The switches' drop counters as a run's analysis uses them: counters.json read and
checked, cells keyed (port, reason), and only the cells of this run's switches and wired
ports kept (traffic/analysis.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path


class CountersError(Exception):
    """Switch drop counters that cannot be used: names the source and why."""


def read_counters(source: Mapping | Path | str) -> tuple[str | None, dict]:
    """(run_id or None, {switch: {(port, reason): (packets, bytes)}}) from switch counters.

    `source` is counters.json's path, its loaded content, or the SM's
    {switch: {(port, reason): (packets, bytes)}}. Raises CountersError when
    it cannot be read or has another shape.
    """
    name = str(source) if isinstance(source, (str, Path)) else "switch counters"
    if isinstance(source, (str, Path)):
        try:
            source = json.loads(Path(source).read_text())
        except FileNotFoundError:
            raise CountersError(f"{name}: missing") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CountersError(f"{name}: could not be read ({exc})") from None
    if not isinstance(source, Mapping):
        raise CountersError(f"{name}: expected an object, found {type(source).__name__}")
    run_id = source.get("run_id")
    switches = source.get("switches", source)
    if not isinstance(switches, Mapping):
        raise CountersError(f"{name}: 'switches' is not an object")
    drops: dict[str, dict[tuple[int, str], tuple[int, int]]] = {}
    for switch, cells in switches.items():
        if switch in ("run_id", "schema"):
            continue
        if not isinstance(cells, Mapping):
            raise CountersError(f"{name}: switch {switch!r}: expected its counter cells, "
                                f"found {cells!r}")
        drops[str(switch)] = {_cell_key(name, switch, key): _cell_value(name, switch, value)
                              for key, value in cells.items()}
    return (None if run_id is None else str(run_id)), drops


def _cell_key(name: str, switch, key) -> tuple[int, str]:
    if isinstance(key, tuple) and len(key) == 2:
        return int(key[0]), str(key[1])
    port, sep, reason = str(key).partition("/")
    if sep and port.startswith("port") and port[4:].isdigit() and reason:
        return int(port[4:]), reason
    raise CountersError(f"{name}: switch {switch!r}: cell {key!r} is not 'portN/reason'")


def _cell_value(name: str, switch, value) -> tuple[int, int]:
    try:
        if isinstance(value, Mapping):
            return int(value["packets"]), int(value.get("bytes", 0))
        packets, nbytes = value
        return int(packets), int(nbytes)
    except (KeyError, TypeError, ValueError):
        raise CountersError(f"{name}: switch {switch!r}: cell value {value!r} is not "
                            "{packets, bytes}") from None


def topology_ports(topology: Mapping) -> dict[str, set[int]]:
    """{switch: wired port numbers} from topology.json (nodes with kind SWITCH, links' ports)."""
    switches = {n["name"] for n in topology.get("nodes", ())
                if isinstance(n, Mapping) and "SWITCH" in str(n.get("kind", "")).upper()}
    ports: dict[str, set[int]] = {s: set() for s in switches}
    for link in topology.get("links", ()):
        for end in ("a", "b") if isinstance(link, Mapping) else ():
            if link.get(end) in ports and link.get(f"{end}_port") is not None:
                ports[link[end]].add(int(link[f"{end}_port"]))
    return ports


def usable_counters(switch_drops, run_id: str | None, topology: Mapping | None,
                     problems: list[str]) -> dict | None:
    """The counters, or None (with a problem line) when they cannot be used for this run."""
    if switch_drops is None:
        return None
    name = str(switch_drops) if isinstance(switch_drops, (str, Path)) else "switch counters"
    try:
        found_id, drops = read_counters(switch_drops)
    except CountersError as exc:
        problems.append(f"{exc}; counters ignored, unexplained_loss unknown")
        return None
    if run_id is not None and found_id is not None and found_id != str(run_id):
        problems.append(f"{name}: counters of run {found_id!r}, expected run {run_id!r}; "
                        "counters ignored, unexplained_loss unknown")
        return None
    if topology is not None and not isinstance(topology, Mapping):
        problems.append(f"topology: expected {{switch: ports}} or topology.json, found "
                        f"{type(topology).__name__}; {name} not checked against it")
    elif topology is not None:
        try:
            wired = topology_ports(topology) if "links" in topology or "nodes" in topology \
                else {str(s): {int(p) for p in ports} for s, ports in topology.items()}
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            problems.append(f"topology could not be read ({type(exc).__name__}: {exc}); "
                            f"{name} not checked against it")
            return drops
        strange = {s for s in drops if s not in wired} | {
            f"{s}:{port}" for s, cells in drops.items() if s in wired
            for port, _reason in cells if port not in wired[s]}
        if strange:
            run = f" (run {found_id!r})" if found_id is not None else ""
            problems.append(f"{name}{run}: switch(es)/port(s) not in this run's topology "
                            f"({', '.join(sorted(strange))}): counters of another fabric, "
                            "ignored; unexplained_loss unknown")
            return None
    return drops
