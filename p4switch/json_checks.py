"""What real bmv2 (simple_switch) refuses in a JSON, or aborts on, refused at load time
by the embedded switch too, with a message naming the place: the embedded switch must
not run programs that bmv2 cannot (docs/JSON_format.md of p4lang/behavioral-model).

The shapes checked here are the ones the two used to disagree on; everything else is
checked where the program is generated (p4switch/program.py)."""

from __future__ import annotations

from typing import Any

# A parser `set` reads its source from one of these (bmv2: "Parser 'set' operation has
# unsupported source type").
PARSER_SET_SOURCES = ("field", "hexstr", "lookahead", "expression")
# What a field list may hold (bmv2: "Invalid entry type '...' in field list"); a
# constant preserves nothing.
FIELD_LIST_ENTRIES = ("field", "hexstr")
# Primitives whose second parameter names a field list bmv2 looks up when it clones.
CLONE_PRIMITIVES = ("clone_ingress_pkt_to_egress", "clone_egress_pkt_to_egress")


class JsonRuleError(ValueError):
    """The JSON breaks a rule bmv2 enforces; the message says where and which."""


def check(j: dict[str, Any]) -> None:
    """Raise JsonRuleError for the first thing bmv2 would refuse (or abort on)."""
    field_lists = {fl.get("id") for fl in j.get("field_lists") or [] if isinstance(fl, dict)}
    for fi, fl in enumerate(j.get("field_lists") or []):
        for el in fl.get("elements") or [] if isinstance(fl, dict) else []:
            if isinstance(el, dict) and el.get("type") not in FIELD_LIST_ENTRIES:
                raise JsonRuleError(f"field_lists[{fi}] ({fl.get('name')}): Invalid entry "
                                    f"type {el.get('type')!r} in field list")
    for ai, a in enumerate(j.get("actions") or []):
        if not isinstance(a, dict):
            continue
        where = f"actions[{ai}] ({a.get('name')})"
        for pi, p in enumerate(a.get("primitives") or []):
            _primitive(p, f"{where}.primitives[{pi}]", field_lists)
    for pi, pipe in enumerate(j.get("pipelines") or []):
        for ci, c in enumerate(pipe.get("conditionals") or [] if isinstance(pipe, dict) else []):
            if isinstance(c, dict):
                _node(c.get("expression"), f"pipelines[{pi}].conditionals[{ci}] "
                      f"({c.get('name')}).expression")
    for ci, c in enumerate(j.get("checksums") or []):
        if isinstance(c, dict) and c.get("if_cond") is not None:
            _node(c["if_cond"], f"checksums[{ci}] ({c.get('name')}).if_cond")
    for parser in j.get("parsers") or []:
        for si, st in enumerate(parser.get("parse_states") or [] if isinstance(parser, dict)
                                else []):
            where = f"parsers[{parser.get('name')}].parse_states[{si}] ({st.get('name')})"
            for oi, op in enumerate(st.get("parser_ops") or []):
                _parser_op(op, f"{where}.parser_ops[{oi}]", field_lists)


def _parser_op(op: Any, where: str, field_lists: set) -> None:
    if not isinstance(op, dict):
        return
    params = op.get("parameters") or []
    if op.get("op") == "primitive":
        for p in params:
            _primitive(p, where, field_lists)
        return
    if op.get("op") == "set" and len(params) == 2 and isinstance(params[1], dict):
        t = params[1].get("type")
        if t not in PARSER_SET_SOURCES:
            raise JsonRuleError(f"{where}: parser 'set' operation has unsupported source "
                                f"type {t!r} (bmv2 takes {', '.join(PARSER_SET_SOURCES)}; "
                                "wrap other operands in an expression)")
    # `set`'s source and `extract_VL`'s length are read like primitive parameters;
    # `verify`'s parameters are expression nodes themselves.
    if op.get("op") in ("set", "extract_VL") and len(params) == 2:
        _expression_param(params[1], f"{where}.parameters[1]")
    elif op.get("op") == "verify":
        for i, x in enumerate(params):
            _node(x, f"{where}.parameters[{i}]")


def _primitive(p: Any, where: str, field_lists: set) -> None:
    if not isinstance(p, dict):
        return
    params = p.get("parameters") or []
    for i, x in enumerate(params):
        _expression_param(x, f"{where} ({p.get('op')}).parameters[{i}]", data=True)
    if p.get("op") in CLONE_PRIMITIVES and len(params) == 2 and isinstance(params[1], dict) \
            and params[1].get("type") == "hexstr":
        try:
            fl = int(str(params[1].get("value")), 0)
        except ValueError:
            return
        if fl not in field_lists:
            raise JsonRuleError(f"{where} ({p['op']}): field list {fl} is not defined "
                                "(bmv2 looks it up on every clone and aborts; a clone that "
                                "preserves nothing names an empty field list)")


# Operators whose result is a boolean: bmv2 types an expression by its root.
BOOLEAN_OPS = ("==", "!=", "<", ">", "<=", ">=", "and", "or", "not", "d2b", "valid",
               "valid_union")


def _expression_param(x: Any, where: str, data: bool = False) -> None:
    """An "expression" parameter's value is an expression node (with its own "type"),
    not the operator object: bmv2 says "Invalid 'type' in expression: ''". A primitive's
    parameter (`data`) holds data, not a boolean: bmv2 aborts ("Invalid expression
    type") on a condition there unless it is converted with b2d."""
    if isinstance(x, dict) and x.get("type") == "expression":
        v = x.get("value")
        if not isinstance(v, dict) or "type" not in v:
            raise JsonRuleError(
                f"{where}: an expression parameter's value must be an expression node "
                "({\"type\": \"expression\", \"value\": {\"op\": ...}}), not the operator "
                "itself (bmv2: Invalid 'type' in expression: '')")
        root = v.get("value") if v.get("type") == "expression" else None
        if data and (v.get("type") == "bool" or (isinstance(root, dict)
                                                 and root.get("op") in BOOLEAN_OPS)):
            raise JsonRuleError(f"{where}: a primitive's expression parameter must be data, "
                                "not a boolean (bmv2 aborts: Invalid expression type); "
                                "convert the condition with b2d")
        _node(v, f"{where}.value")


def _node(x: Any, where: str) -> None:
    """An expression node: {"type": "expression"}'s value is an operator object (bmv2
    reads its "op"; another node there crashes it), and so on down the tree."""
    if not isinstance(x, dict) or x.get("type") != "expression":
        return
    v = x.get("value")
    if not isinstance(v, dict) or "op" not in v:
        raise JsonRuleError(f"{where}: an expression node's value must be an operator "
                            "object ({\"op\": ..., \"left\": ..., \"right\": ...}); "
                            f"got {str(v)[:60]} (bmv2 crashes on it)")
    for k in ("left", "right", "cond"):
        _node(v.get(k), f"{where}.{k}")
