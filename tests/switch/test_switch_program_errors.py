"""A malformed or unsupported bmv2 JSON is refused with a message naming the element."""

from __future__ import annotations

import pytest
from bmv2json import assign, ethernet_program, field, frame, hexstr, prim

from p4switch.program import Program, ProgramError
from p4switch.switch import Switch


def program_with_table(**table_overrides) -> dict:
    p = ethernet_program()
    p.table("ingress", "fwd", [("exact", ["ethernet", "dst"])], ["forward", "drop"],
            default=("drop", []))
    j = p.build()
    j["pipelines"][0]["tables"][0].update(table_overrides)
    return j


def refused(j) -> str:
    with pytest.raises(ProgramError) as e:
        Program(j)
    return str(e.value)


def test_unknown_table_match_type_names_the_table():
    msg = refused(program_with_table(match_type="foo"))
    assert msg == "pipelines[0].tables[0]: unknown match_type 'foo'"


def test_unknown_key_match_type_names_the_key():
    j = program_with_table()
    j["pipelines"][0]["tables"][0]["key"][0]["match_type"] = "fuzzy"
    assert refused(j) == "pipelines[0].tables[0].key[0]: unknown match_type 'fuzzy'"


def test_unknown_field_in_a_key():
    j = program_with_table()
    j["pipelines"][0]["tables"][0]["key"][0]["target"] = ["ethernet", "nope"]
    assert "pipelines[0].tables[0].key[0]: header 'ethernet' has no field 'nope'" in refused(j)


def test_unsupported_primitive_names_the_action():
    p = ethernet_program()
    p.action("weird", [], [prim("teleport", hexstr(1))])
    p.run("ingress", "weird")
    msg = refused(p.build())
    assert "(weird).primitives[0]: unsupported primitive 'teleport'" in msg


def test_unknown_next_state_names_the_parse_state():
    j = ethernet_program().build()
    j["parsers"][0]["parse_states"][0]["transitions"][0]["next_state"] = "nowhere"
    assert refused(j) == ("parsers[0].parse_states[0] (start): unknown next_state 'nowhere'")


def test_header_type_width_not_whole_bytes():
    p = ethernet_program().header("odd", [["a", 3]])
    assert "(odd): header width 3 bits is not a multiple of 8" in refused(p.build())


def test_missing_pipeline_and_bad_top_level():
    j = ethernet_program().build()
    j["pipelines"] = j["pipelines"][:1]
    assert "no pipeline named 'egress'" in refused(j)
    assert "expected a JSON object" in refused([])


def test_unknown_expression_op():
    p = ethernet_program()
    p.action("bad", [], [assign(field("ethernet", "src"), {
        "type": "expression", "value": {"type": "expression", "value": {
            "op": "**", "left": hexstr(1), "right": hexstr(2)}}})])
    p.run("ingress", "bad")
    assert "unsupported expression op '**'" in refused(p.build())


def test_expression_parameter_without_its_node_is_refused_as_bmv2_does():
    """bmv2 reads an expression parameter's value as an expression node; the operator
    object itself is refused ("Invalid 'type' in expression: ''")."""
    p = ethernet_program()
    p.action("bad", [], [{"op": "assign", "parameters": [field("ethernet", "src"), {
        "type": "expression", "value": {"op": "+", "left": hexstr(1), "right": hexstr(2)}}]}])
    p.run("ingress", "bad")
    msg = refused(p.build())
    assert "actions[" in msg and "(bad)" in msg and "Invalid 'type' in expression" in msg


def test_clone_of_an_undefined_field_list_is_refused():
    """bmv2 looks a clone's field list up when it clones, and aborts if it is missing."""
    p = ethernet_program()
    p.action("bad", [], [prim("clone_ingress_pkt_to_egress", hexstr(3), hexstr(0))])
    p.run("ingress", "bad")
    assert "field list 0 is not defined" in refused(p.build())


def test_parser_set_from_a_stack_field_is_refused():
    j = ethernet_program().build()
    st = j["parsers"][0]["parse_states"][0]
    st["parser_ops"].append({"op": "set", "parameters": [
        field("ethernet", "src"), {"type": "stack_field", "value": ["s", "f"]}]})
    assert "unsupported source type 'stack_field'" in refused(j)


def test_failed_load_keeps_the_running_program():
    p = ethernet_program()
    p.run("ingress", "forward")
    good = p.build()
    good["pipelines"][0]["tables"][0]["default_entry"]["action_data"] = ["0x2"]
    sw = Switch({1: "p1", 2: "p2"})
    sw.load_program(good)
    with pytest.raises(ProgramError):
        sw.load_program(program_with_table(match_type="foo"))
    assert sw.process(1, frame())[0][0] == 2


def test_drop_primitive_param_is_optional():
    p = ethernet_program()
    p.action("d", [], [prim("mark_to_drop")])
    p.run("ingress", "d")
    sw = Switch({1: "p1"})
    sw.load_program(p.build())
    assert sw.process(1, frame()) == []


def test_verify_takes_expression_nodes_as_they_are():
    """bmv2 reads a parser verify's parameters as expression nodes (not wrapped twice)."""
    j = ethernet_program().build()
    j["parsers"][0]["parse_states"][0]["parser_ops"].append({"op": "verify", "parameters": [
        {"type": "expression", "value": {"op": "==", "left": field("ethernet", "ether_type"),
                                         "right": hexstr(0x800)}},
        hexstr(2)]})
    Program(j)


def test_a_node_where_bmv2_reads_an_operator_is_refused():
    """verify(false, ...) as {"type": "expression", "value": {"type": "bool"}} made real
    bmv2 crash at the first packet; a constant condition is the bool node itself."""
    j = ethernet_program().build()
    j["parsers"][0]["parse_states"][0]["parser_ops"].append({"op": "verify", "parameters": [
        {"type": "expression", "value": {"type": "bool", "value": False}}, hexstr(2)]})
    assert "an expression node's value must be an operator object" in refused(j)


def test_union_stack_naming_an_unknown_union_is_refused():
    j = program_with_table()
    j["header_union_stacks"] = [{"name": "opts", "id": 0, "union_type": "U", "size": 1,
                                 "header_union_ids": [7]}]
    assert refused(j) == "header_union_stacks[0] (opts): unknown union id 7"


def test_union_stack_extract_of_an_unknown_stack_is_refused():
    j = program_with_table()
    j["parsers"][0]["parse_states"][0]["parser_ops"].insert(0, {
        "op": "extract", "parameters": [{"type": "union_stack", "value": ["nope", "a"]}]})
    assert "unknown header union stack ['nope', 'a']" in refused(j)


def test_an_element_of_the_wrong_type_is_refused_naming_what_was_read_and_where():
    """A table whose next_tables is not an object: one line naming the part of the JSON
    being read and the nearest named element, not a traceback."""
    j = program_with_table()
    j["pipelines"][0]["tables"][0]["next_tables"] = True
    msg = refused(j)
    assert msg.startswith("bmv2 JSON: an element of an unexpected shape while reading the "
                          "pipelines' tables and conditionals, near 'fwd' (TypeError"), msg


def _shapes(x, path=()):
    yield path
    children = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
    for k, v in children:
        yield from _shapes(v, (*path, k))


def test_mutated_programs_load_or_are_refused_with_a_program_error():
    """Random changes to valid JSON (an element deleted, or replaced by a value of another
    type or range): the switch loads the result or refuses it with a ProgramError, nothing
    else (fixed seed, bounded in time)."""
    import copy
    import random
    import time

    from p4compiler.compiler import compile_text
    from tests.compiler.test_fuzz import INCLUDES, ROOT

    programs = [program_with_table()]
    for name in ("ctl_hit_in_expressions", "fe_lookahead_struct_stack", "ctl_hash_complex_inputs",
                 "ctl_entry_priorities"):
        path = ROOT / "differential" / "programs" / f"{name}.p4"
        programs.append(compile_text(path.read_text(), path.name, include_dirs=INCLUDES).json)
    rng = random.Random(18)
    values = [None, 0, -1, 2**70, "", "x", 1.5, True, [], {}]
    deadline, runs, refused_runs = time.monotonic() + 6.0, 0, 0
    while time.monotonic() < deadline and runs < 1500:
        j = copy.deepcopy(rng.choice(programs))
        path = rng.choice([p for p in _shapes(j) if p])
        parent = j
        for k in path[:-1]:
            parent = parent[k]
        if rng.random() < 0.3:
            del parent[path[-1]]
        else:
            parent[path[-1]] = rng.choice(values)
        runs += 1
        try:
            Program(j)
        except ProgramError:
            refused_runs += 1
    assert runs >= 100 and refused_runs > 0
