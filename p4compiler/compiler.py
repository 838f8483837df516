"""The compile pipeline as one function: source file -> bmv2 JSON + P4Info."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import bmv2, ir, p4info, passes, passes_types, syntax, typecheck
from .errors import CompileError, Diagnostics, Location
from .preprocessor import Preprocessor


@dataclass
class CompileResult:
    json: dict[str, Any]
    p4info: Any                      # p4.config.v1.P4Info
    typed: typecheck.TypedProgram
    warnings: list[str] = field(default_factory=list)

    def p4info_text(self) -> str:
        return p4info.to_text(self.p4info)


def compile_file(path: str, include_dirs: list[str] | None = None,
                 defines: dict[str, str] | None = None) -> CompileResult:
    pp = Preprocessor(include_dirs, defines)
    source = pp.run(path)
    return _compile(source, Path(path).name, pp.warnings)


def compile_text(text: str, filename: str = "program.p4",
                 include_dirs: list[str] | None = None,
                 defines: dict[str, str] | None = None) -> CompileResult:
    pp = Preprocessor(include_dirs, defines)
    source = pp.run_text(text, filename)
    return _compile(source, Path(filename).name, pp.warnings)


def _compile(source: Any, program_name: str, warnings: list[str]) -> CompileResult:
    diags = Diagnostics()
    diags.warnings.extend(warnings)
    tree = passes_types.inline_subparsers(
        passes_types.move_parser_initializers(syntax.parse(source)))
    try:
        typed = typecheck.check(tree, diags)
        passes_types.run(typed)      # type/parser passes first: they see functions before inlining
        typed = passes.run(typed)
        json = bmv2.to_json(typed, program_name, diags)
        info = p4info.build(typed)
    except CompileError as e:
        if not _has_location(e.loc):
            e.loc = _nearest_declaration(tree, source, e.message)
        raise
    return CompileResult(json, info, typed, diags.warnings)


def _has_location(loc: Location) -> bool:
    return loc.line > 0 and not loc.file.startswith("<")


def _nearest_declaration(tree: ir.Program, source: Any, message: str) -> Location:
    """Where to point an error that has no place of its own: the declaration the
    message names (`T.f: ...`, `name: ...`), else the last declaration of the file
    being compiled (e.g. a missing `main`), else its last line."""
    subject = message.split(":", 1)[0].strip()
    parts = subject.split(".")
    structs = [d for d in tree.decls if isinstance(d, ir.StructDecl)]
    for d in structs:
        if d.name == parts[0]:
            field = next((f for f in d.fields if len(parts) > 1 and f.name == parts[1]), d)
            if _has_location(field.loc):
                return field.loc
    for d in reversed(structs):
        field = next((f for f in d.fields if f.name == parts[-1]), None)
        if field is not None and _has_location(field.loc):
            return field.loc
    main_file = source.origins[-1].file if source.origins else "<input>"
    named = [d for d in tree.decls if getattr(d, "name", None) == subject]
    for decl in named + list(reversed(tree.decls)):
        loc = getattr(decl, "loc", None)
        if loc is not None and _has_location(loc) and (decl in named or loc.file == main_file):
            return loc
    last = source.origins[-1] if source.origins else Location(main_file, 1)
    return Location(last.file, max(last.line, 1), 1)


def dump_ir(typed: typecheck.TypedProgram) -> Any:
    """The typed IR as plain data (`--dump-ir`)."""
    blocks = {}
    for role, b in typed.blocks.items():
        blocks[role] = {
            "kind": b.kind, "name": b.name,
            "params": [{"name": p.name, "direction": p.direction, "type": str(p.type)}
                       for p in b.params],
            "variables": [{"name": v.unique, "type": str(v.type)} for v in b.variables],
            "instances": [{"name": i.qualified, "type": str(i.type), "args": ir.dump(i.args)}
                          for i in b.instances],
            "actions": [{"name": a.qualified,
                         "params": [{"name": p.name, "direction": p.direction,
                                     "type": str(p.type)} for p in a.params],
                         "body": ir.dump(a.body)} for a in b.actions],
            "tables": [{"name": t.qualified,
                        "keys": [{"name": k.name, "match_kind": k.match_kind,
                                  "expr": ir.dump(k.expr)} for k in t.keys],
                        "actions": [r.action.qualified for r in t.actions],
                        "default_action": t.default_action.action.qualified
                        if t.default_action else None,
                        "size": t.size} for t in b.tables],
            "states": ir.dump(b.states),
            "body": ir.dump(b.body),
        }
    return {
        "arch": typed.arch,
        "types": [{"kind": s.kind, "name": s.name,
                   "fields": [[f.name, str(f.type)] for f in s.fields]} for s in typed.structs],
        "errors": typed.errors,
        "headers_type": typed.headers_type.name if typed.headers_type else None,
        "metadata_type": typed.metadata_type.name if typed.metadata_type else None,
        "blocks": blocks,
    }
