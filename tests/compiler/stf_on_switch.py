"""Run a program's STF script in-process: the embedded compiler, then the embedded
switch's Switch.process(); a mismatch is an AssertionError naming the STF line."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from p4compiler import stf as stf_format
from p4compiler.compiler import compile_file
from p4switch.runtime_api import ActionCall, MatchKind, MatchParam, Replica
from p4switch.switch import Switch

CPU_PORT = 510


def _action_call(tables: dict, table: str | None, j: dict, action) -> ActionCall:
    """The JSON action the STF names; among same-named copies, the one the table uses."""
    named = [a for a in j["actions"] if a["name"] == action.name
             or a["name"].rsplit(".", 1)[-1] == action.name]
    if table is not None:
        ids = set(tables[table]["action_ids"])
        named = [a for a in named if a["id"] in ids] or named
    if not named:
        raise AssertionError(f"no action {action.name} in the program")
    params = dict(action.params)
    return ActionCall(named[0]["name"], tuple(params[rd["name"]]
                                              for rd in named[0]["runtime_data"]))


def _match(table: dict, keys) -> list[MatchParam]:
    by_name = {k.name: k for k in keys}
    out = []
    for kf in table["key"]:
        k = by_name[kf["name"]]
        kind = kf["match_type"]
        if k.kind == "ternary" or (kind == "ternary" and k.kind == "exact"):
            mask = k.mask if k.kind == "ternary" else (1 << 128) - 1
            out.append(MatchParam(MatchKind.TERNARY, k.value, mask=mask))
        elif k.kind == "lpm":
            out.append(MatchParam(MatchKind.LPM, k.value, prefix_len=k.prefix_len))
        else:
            out.append(MatchParam(MatchKind(kind), k.value))
    return out


def run_stf(p4: Path) -> int:
    """Compile `p4`, run `p4` with suffix .stf; returns the number of packets checked."""
    j = compile_file(str(p4)).json
    script = stf_format.parse_file(p4.with_suffix(".stf"))
    sw = Switch({p: f"p{p}" for p in range(16)}, cpu_port=CPU_PORT)
    sw.load_program(j)
    tables = {t["name"]: t for p in j["pipelines"] for t in p["tables"]}
    outputs: dict[int, list[bytes]] = defaultdict(list)
    checked = 0
    for c in script.commands:
        kind = type(c).__name__
        if kind == "AddEntry":
            sw.table_add(c.table, _match(tables[c.table], list(c.keys)),
                         _action_call(tables, c.table, j, c.action), c.priority or 1)
        elif kind == "SetDefault":
            sw.table_set_default(c.table, _action_call(tables, c.table, j, c.action))
        elif kind == "McastGroup":
            sw.mc_group_set(c.group, [Replica(p, i) for i, p in enumerate(c.ports)])
        elif kind == "Packet":
            for port, data in sw.process(c.port, c.data):
                outputs[port].append(data)
        elif kind == "Expect":
            got = outputs[c.port]
            where = f"{p4.stem}.stf:{c.line}"
            if c.pattern is None:
                assert got == [], f"{where}: unexpected output on port {c.port}: {got[0].hex()}"
                continue
            assert got, f"{where}: nothing came out of port {c.port}"
            data = got.pop(0)
            assert c.matches(data), f"{where}: port {c.port} got {data.hex()}, " \
                f"expected {c.pattern}"
            checked += 1
    leftover = {p: [d.hex() for d in v] for p, v in outputs.items() if v and p != CPU_PORT}
    assert not leftover, f"{p4.stem}: unexpected packets {leftover}"
    return checked
