"""A small builder for hand-written bmv2 JSON test programs (docs/JSON_format.md
of p4lang/behavioral-model), so each test states its program in a few lines."""

from __future__ import annotations

import copy

STANDARD_METADATA = [
    ["ingress_port", 9], ["egress_spec", 9], ["egress_port", 9], ["instance_type", 32],
    ["packet_length", 32], ["enq_timestamp", 32], ["enq_qdepth", 19],
    ["deq_timedelta", 32], ["deq_qdepth", 19], ["ingress_global_timestamp", 48],
    ["egress_global_timestamp", 48], ["mcast_grp", 16], ["egress_rid", 16],
    ["checksum_error", 1], ["parser_error", 32], ["priority", 3], ["_padding", 3],
]

ETHERNET = [["dst", 48], ["src", 48], ["ether_type", 16]]
IPV4ISH = [["ver_ihl", 8], ["tos", 8], ["len", 16], ["id", 16], ["frag", 16], ["ttl", 8],
           ["proto", 8], ["csum", 16], ["src", 32], ["dst", 32]]


def field(h: str, f: str) -> dict:
    return {"type": "field", "value": [h, f]}


def hexstr(v: int) -> dict:
    return {"type": "hexstr", "value": hex(v)}


def rt(i: int) -> dict:
    return {"type": "runtime_data", "value": i}


def local(i: int) -> dict:
    return {"type": "local", "value": i}


def expr(op: str, left, right, cond=None) -> dict:
    """An expression node (as in conditions and inside trees)."""
    v = {"op": op, "left": left, "right": right}
    if cond is not None:
        v["cond"] = cond
    return {"type": "expression", "value": v}


def prim(op: str, *params) -> dict:
    """A primitive; an expression node as a parameter is wrapped once more, as bmv2
    reads a parameter's value as the node."""
    return {"op": op, "parameters": [
        {"type": "expression", "value": p} if isinstance(p, dict) and
        p.get("type") == "expression" and "op" in p.get("value", {}) else p for p in params]}


def assign(dst: dict, src: dict) -> dict:
    return prim("assign", dst, src)


class Program:
    """Accumulates one v1model-style bmv2 JSON program."""

    def __init__(self):
        self.j = {
            "__meta__": {"version": [2, 23], "compiler": "tests"},
            "header_types": [{"name": "standard_metadata", "id": 0,
                              "fields": copy.deepcopy(STANDARD_METADATA)},
                             {"name": "scalars_0", "id": 1, "fields": []}],
            "headers": [{"name": "standard_metadata", "id": 0,
                         "header_type": "standard_metadata", "metadata": True},
                        {"name": "scalars", "id": 1, "header_type": "scalars_0",
                         "metadata": True}],
            "header_stacks": [], "header_union_types": [], "header_unions": [],
            "header_union_stacks": [], "field_lists": [], "errors": [
                ["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2],
                ["StackOutOfBounds", 3], ["HeaderTooShort", 4], ["ParserTimeout", 5],
                ["ParserInvalidArgument", 6]],
            "enums": [],
            "parsers": [{"name": "parser", "id": 0, "init_state": "start",
                         "parse_states": []}],
            "parse_vsets": [],
            "deparsers": [{"name": "deparser", "id": 0, "order": []}],
            "meter_arrays": [], "counter_arrays": [], "register_arrays": [],
            "calculations": [], "learn_lists": [], "actions": [],
            "pipelines": [
                {"name": "ingress", "id": 0, "init_table": None, "tables": [],
                 "action_profiles": [], "conditionals": []},
                {"name": "egress", "id": 1, "init_table": None, "tables": [],
                 "action_profiles": [], "conditionals": []},
            ],
            "checksums": [], "force_arith": [], "extern_instances": [], "field_aliases": [],
        }

    # -- declarations ---------------------------------------------------------
    def header(self, name: str, fields: list, metadata: bool = False) -> Program:
        tid = len(self.j["header_types"])
        self.j["header_types"].append({"name": f"{name}_t", "id": tid,
                                       "fields": copy.deepcopy(fields)})
        self.j["headers"].append({"name": name, "id": len(self.j["headers"]),
                                  "header_type": f"{name}_t", "metadata": metadata})
        if not metadata:
            self.j["deparsers"][0]["order"].append(name)
        return self

    def scalar(self, name: str, width: int) -> Program:
        self.j["header_types"][1]["fields"].append([name, width])
        return self

    def state(self, name: str, ops: list, key: list | None = None,
              transitions: list | None = None) -> Program:
        """transitions: [(value or None for default, mask or None, next state or None)]."""
        trs = []
        for value, mask, nxt in transitions or [(None, None, None)]:
            if value is None:
                trs.append({"type": "default", "value": None, "mask": None, "next_state": nxt})
            else:
                trs.append({"type": "hexstr", "value": hex(value),
                            "mask": None if mask is None else hex(mask), "next_state": nxt})
        self.j["parsers"][0]["parse_states"].append({
            "name": name, "id": len(self.j["parsers"][0]["parse_states"]),
            "parser_ops": ops, "transition_key": key or [], "transitions": trs})
        return self

    def action(self, name: str, params: list[tuple[str, int]], prims: list) -> int:
        aid = len(self.j["actions"])
        self.j["actions"].append({"name": name, "id": aid, "runtime_data": [
            {"name": n, "bitwidth": w} for n, w in params], "primitives": prims})
        return aid

    def table(self, pipeline: str, name: str, key: list, actions: list[str],
              default: tuple[str, list[int]] | None = None, next_tables: dict | None = None,
              base_next: str | None = None, match_type: str = "exact", size: int = 1024,
              with_counters: bool = False, **extra) -> Program:
        """key: [(match_type, [header, field])]."""
        pl = self._pipeline(pipeline)
        ids = [self._action_id(a) for a in actions]
        t = {"name": name, "id": sum(len(p["tables"]) for p in self.j["pipelines"]),
             "match_type": match_type, "type": "simple", "max_size": size,
             "with_counters": with_counters, "support_timeout": False,
             "key": [{"match_type": mt, "target": tgt, "mask": None} for mt, tgt in key],
             "actions": actions, "action_ids": ids, "base_default_next": base_next,
             "next_tables": next_tables or {a: base_next for a in actions},
             "direct_meters": None}
        if default is not None:
            t["default_entry"] = {"action_id": self._action_id(default[0]),
                                  "action_const": False,
                                  "action_data": [hex(x) for x in default[1]],
                                  "action_entry_const": False}
        t.update(extra)
        pl["tables"].append(t)
        if pl["init_table"] is None:
            pl["init_table"] = name
        return self

    def conditional(self, pipeline: str, name: str, expression: dict, true_next, false_next,
                    init: bool = False) -> Program:
        pl = self._pipeline(pipeline)
        pl["conditionals"].append({"name": name, "id": len(pl["conditionals"]),
                                   "expression": expression, "true_next": true_next,
                                   "false_next": false_next})
        if init or pl["init_table"] is None:
            pl["init_table"] = name
        return self

    def run(self, pipeline: str, action: str, next_node: str | None = None) -> str:
        """Apply `action` unconditionally (p4c's keyless 'tbl_' table); returns its name."""
        name = f"tbl_{action}_{len(self._pipeline(pipeline)['tables'])}"
        self.table(pipeline, name, [], [action], default=(action, []), base_next=next_node)
        return name

    def counter(self, name: str, size: int) -> Program:
        self.j["counter_arrays"].append({"name": name, "id": len(self.j["counter_arrays"]),
                                         "size": size, "is_direct": False})
        return self

    def register(self, name: str, size: int, width: int) -> Program:
        self.j["register_arrays"].append({"name": name, "id": len(self.j["register_arrays"]),
                                          "size": size, "bitwidth": width})
        return self

    def calculation(self, name: str, algo: str, inputs: list) -> Program:
        self.j["calculations"].append({"name": name, "id": len(self.j["calculations"]),
                                       "algo": algo, "input": inputs})
        return self

    def field_list(self, fid: int, fields: list) -> Program:
        self.j["field_lists"].append({"id": fid, "name": f"fl{fid}", "elements": [
            {"type": "field", "value": f} for f in fields]})
        return self

    def build(self) -> dict:
        return copy.deepcopy(self.j)

    def _pipeline(self, name: str) -> dict:
        return next(p for p in self.j["pipelines"] if p["name"] == name)

    def _action_id(self, name: str) -> int:
        return next(a["id"] for a in self.j["actions"] if a["name"] == name)


def extract(h: str) -> dict:
    return {"op": "extract", "parameters": [{"type": "regular", "value": h}]}


def ethernet_program() -> Program:
    """Ethernet, and an IPv4-like header after EtherType 0x0800; ingress empty."""
    p = Program()
    p.header("ethernet", ETHERNET).header("ipv4", IPV4ISH)
    p.state("start", [extract("ethernet")], key=[field("ethernet", "ether_type")],
            transitions=[(0x0800, None, "parse_ipv4"), (None, None, None)])
    p.state("parse_ipv4", [extract("ipv4")])
    p.action("NoAction", [], [])
    p.action("forward", [("port", 9)], [assign(field("standard_metadata", "egress_spec"),
                                                rt(0))])
    p.action("drop", [], [prim("mark_to_drop", {"type": "header",
                                                "value": "standard_metadata"})])
    return p


def frame(dst: int = 0x0000000000B2, src: int = 0x0000000000A1, ether_type: int = 0x0800,
          payload: bytes = b"", ipv4: dict | None = None) -> bytes:
    head = dst.to_bytes(6, "big") + src.to_bytes(6, "big") + ether_type.to_bytes(2, "big")
    if ipv4 is not None:
        v = {"ver_ihl": 0x45, "tos": 0, "len": 20, "id": 0, "frag": 0, "ttl": 64, "proto": 17,
             "csum": 0, "src": 0x0A000001, "dst": 0x0A000002}
        v.update(ipv4)
        b = b""
        for name, w in IPV4ISH:
            b += v[name].to_bytes(w // 8, "big")
        head += b
    return head + payload
