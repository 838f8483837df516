"""bool action parameters (fidelity/bool_action_params runs in test_fidelity_programs on both
switches): runtime data is 1-bit data, read as a bool through d2b."""

from __future__ import annotations

import json

from fidelity_helpers import PROGRAMS

from p4compiler.compiler import compile_file


def test_bool_parameters_are_one_bit_and_read_through_d2b() -> None:
    j = compile_file(str(PROGRAMS / "bool_action_params.p4")).json
    (act,) = [a for a in j["actions"] if a["name"] == "I.set"]
    assert act["runtime_data"][0] == {"name": "flag", "bitwidth": 1}
    text = json.dumps(act["primitives"])
    local0 = '{"type": "local", "value": 0}'
    assert f'"op": "d2b", "left": null, "right": {local0}' in text
    # never a bare runtime value under a boolean operator
    assert f'"op": "b2d", "left": null, "right": {local0}' not in text
