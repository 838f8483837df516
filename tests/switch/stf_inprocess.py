"""Run a program's STF script on the embedded switch in-process: compiled by the
embedded compiler, entries through the Dataplane API, packets through
Switch.process() (or the fast path), outputs checked per port."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from fastpath import process_fast

from p4switch.runtime_api import ActionCall, MatchKind, MatchParam, Replica
from p4switch.switch import Switch

PROGRAMS = Path(__file__).resolve().parents[1] / "compiler" / "programs"
CPU_PORT = 510


def _compile(p4: Path, skip_if_refused: bool = True) -> dict:
    try:
        from p4compiler.compiler import compile_file
    except ImportError as e:
        pytest.skip(f"embedded compiler not available: {e}")
    try:
        return compile_file(str(p4), include_dirs=[str(PROGRAMS)]).json
    except Exception as e:  # noqa: BLE001 - the compiler is developed in parallel
        if not skip_if_refused:
            raise
        pytest.skip(f"compiler cannot compile {p4.name} yet: {e}")


def _tables(j: dict) -> dict[str, dict]:
    return {t["name"]: t for p in j["pipelines"] for t in p["tables"]}


def _call(j: dict, action) -> ActionCall:
    a = next((x for x in j["actions"] if x["name"] == action.name), None)
    if a is None:
        a = next(x for x in j["actions"] if x["name"].rsplit(".", 1)[-1] == action.name)
    params = dict(action.params)
    return ActionCall(a["name"], tuple(params[rd["name"]] for rd in a["runtime_data"]))


def _key(table: dict, keys) -> list[MatchParam]:
    by_name = {k.name: k for k in keys}
    out = []
    for i, kf in enumerate(table["key"]):
        name = kf.get("name") or ".".join(kf["target"])
        k = by_name.get(name) or (keys[i] if i < len(keys) else None)
        kind = kf["match_type"]
        if k is None:  # not given: match anything
            out.append(MatchParam(MatchKind.TERNARY, 0, mask=0) if kind == "ternary" else
                       MatchParam(MatchKind(kind), 0))
        elif k.kind == "lpm":
            out.append(MatchParam(MatchKind.LPM, k.value, prefix_len=k.prefix_len))
        elif k.kind == "ternary":
            out.append(MatchParam(MatchKind.TERNARY, k.value, mask=k.mask))
        elif k.kind == "range":
            out.append(MatchParam(MatchKind.RANGE, k.value, high=k.high))
        elif kind == "lpm":
            width = 128
            out.append(MatchParam(MatchKind.LPM, k.value, prefix_len=None or width))
        elif kind == "ternary":
            out.append(MatchParam(MatchKind.TERNARY, k.value, mask=(1 << 128) - 1))
        else:
            out.append(MatchParam(MatchKind(kind), k.value))
    return out


def run_stf_in_process(stf: Path, mode: str, skip_if_refused: bool = True,
                       transform=None) -> None:
    """Compile stf's program, run the script, assert on every expectation.
    `transform`, if given, edits the bmv2 JSON before the switch loads it."""
    from p4compiler import stf as stf_format

    j = _compile(stf.with_suffix(".p4"), skip_if_refused)
    if transform is not None:
        transform(j)
    script = stf_format.parse_file(stf)
    sw = Switch({p: f"p{p}" for p in range(16)}, cpu_port=CPU_PORT)
    sw.load_program(j)
    run = sw.process if mode == "process" else lambda p, f: process_fast(sw, p, f)
    tables = _tables(j)
    outputs: dict[int, list[bytes]] = defaultdict(list)
    for c in script.commands:
        kind = type(c).__name__
        if kind == "AddEntry":
            t = tables[c.table]
            sw.table_add(c.table, _key(t, list(c.keys)), _call(j, c.action), c.priority or 1)
        elif kind == "SetDefault":
            sw.table_set_default(c.table, _call(j, c.action))
        elif kind == "McastGroup":
            sw.mc_group_set(c.group, [Replica(p, i) for i, p in enumerate(c.ports)])
        elif kind == "MirrorSession":
            sw.clone_session_set(c.session, [Replica(c.port)])
        elif kind == "Packet":
            for port, data in run(c.port, c.data):
                outputs[port].append(data)
        elif kind == "Expect":
            got = outputs[c.port]
            where = f"{stf.name}:{c.line}"
            if c.pattern is None:
                assert got == [], f"{where}: unexpected output on port {c.port}: {got[0].hex()}"
            else:
                assert got, f"{where}: nothing came out of port {c.port}"
                data = got.pop(0)
                assert c.matches(data), f"{where}: port {c.port} got {data.hex()}"
    leftover = {p: [d.hex() for d in v] for p, v in outputs.items() if v}
    assert not leftover or all(p == CPU_PORT for p in leftover), f"unexpected {leftover}"
