"""Test-only: the embedded compiler's JSON in the form real bmv2 loads.

Real simple_switch rejects a primitive argument that is a bare expression
("Invalid 'type' in expression: ''"): p4c writes it wrapped twice,
`{"type": "expression", "value": {"type": "expression", "value": {"op": ...}}}`.
The embedded compiler's JSON is being fixed to do the same (p4compiler/bmv2.py);
until then the bmv2 tests run on the embedded compiler's output through
`wrap_expressions`, which changes nothing in JSON that is already wrapped, so it
becomes a no-op once the compiler is fixed, and can then go.
"""

from __future__ import annotations

import json
from pathlib import Path


def _wrap(param: dict) -> dict:
    value = param.get("value")
    if param.get("type") == "expression" and isinstance(value, dict) and "op" in value:
        return {"type": "expression", "value": {"type": "expression", "value": value}}
    return param


def wrap_expressions(program: dict) -> int:
    """Wrap every bare expression argument of a primitive in place; how many."""
    changed = 0
    for action in program.get("actions", []):
        for primitive in action.get("primitives", []):
            params = primitive.get("parameters", [])
            wrapped = [_wrap(p) for p in params]
            changed += sum(a is not b for a, b in zip(wrapped, params))
            primitive["parameters"] = wrapped
    return changed


def patch_compiled(monkeypatch, module) -> None:
    """Make `module.compile_program` hand bmv2 a JSON it loads when the embedded
    compiler builds for the bmv2 switch (a copy beside the cached one)."""
    from topologies.targets import CompiledProgram, Compiler, SwitchKind

    real = module.compile_program

    def compile_program(target, source, out_dir):
        program = real(target, source, out_dir)
        if target.switch is not SwitchKind.BMV2 or target.compiler is not Compiler.EMBEDDED:
            return program
        data = json.loads(Path(program.bmv2_json).read_text())
        wrap_expressions(data)
        fixed = Path(program.bmv2_json).with_name("bmv2-loadable.json")
        fixed.write_text(json.dumps(data))
        return CompiledProgram(fixed, program.p4info)

    monkeypatch.setattr(module, "compile_program", compile_program)
