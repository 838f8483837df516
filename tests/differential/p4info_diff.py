"""Field-by-field comparison of two P4Info messages (the embedded compiler's and p4c's):
every entity matched by name, then every field of it (ids, names, aliases, annotations,
match kinds, bit widths, action refs and scopes, sizes...), recursively.

Differences are returned as readable lines: `tables[I.t].match_fields[h.x].match_type:
EXACT != LPM`. Documentation strings (`doc`) and pkg_info are left out: they describe
the compiler, not the program."""

from __future__ import annotations

from pathlib import Path

IGNORED = {"doc", "pkg_info"}


def load(path: Path):
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2

    return text_format.Parse(Path(path).read_text(), p4info_pb2.P4Info())


def _key(msg) -> str:
    """How a repeated element is matched with its counterpart: by name, else by id."""
    pre = getattr(msg, "preamble", None)
    if pre is not None and pre.name:
        return pre.name
    for attr in ("name", "id"):
        v = getattr(msg, attr, None)
        if v not in (None, "", 0):
            return str(v)
    return ""


def diff(a, b, path: str = "") -> list[str]:
    """Differences between two protobuf messages of the same type."""
    out: list[str] = []
    fields = {f.name: f for f, _ in a.ListFields()} | {f.name: f for f, _ in b.ListFields()}
    for name in sorted(fields):
        if name in IGNORED:
            continue
        f = fields[name]
        va, vb = getattr(a, name), getattr(b, name)
        where = f"{path}.{name}" if path else name
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            out += _diff_map(va, vb, where, f.message_type.fields_by_name["value"])
        elif f.label == f.LABEL_REPEATED and f.message_type is not None:
            out += _diff_repeated(list(va), list(vb), where)
        elif f.message_type is not None and not (f.label == f.LABEL_REPEATED):
            out += diff(va, vb, where)
        elif f.label == f.LABEL_REPEATED:
            if list(va) != list(vb):
                out.append(f"{where}: {list(va)} != {list(vb)}")
        elif va != vb:
            out.append(f"{where}: {va!r} != {vb!r}")
    return out


def _diff_map(ma, mb, where: str, value_field) -> list[str]:
    """A protobuf map (type_info's structs, headers, enums...): by key."""
    out = [f"{where}[{k}]: only in the first" for k in sorted(ma) if k not in mb]
    out += [f"{where}[{k}]: only in the second" for k in sorted(mb) if k not in ma]
    for k in sorted(set(ma) & set(mb)):
        if value_field.message_type is not None:
            out += diff(ma[k], mb[k], f"{where}[{k}]")
        elif ma[k] != mb[k]:
            out.append(f"{where}[{k}]: {ma[k]!r} != {mb[k]!r}")
    return out


def _diff_repeated(xs: list, ys: list, where: str) -> list[str]:
    keys_a = [_key(x) for x in xs]
    keys_b = [_key(y) for y in ys]
    out = []
    if all(keys_a) and all(keys_b) and len(set(keys_a)) == len(keys_a) and \
            len(set(keys_b)) == len(keys_b):
        by_b = dict(zip(keys_b, ys))
        for k, x in zip(keys_a, xs):
            if k not in by_b:
                out.append(f"{where}[{k}]: only in the first")
            else:
                out += diff(x, by_b[k], f"{where}[{k}]")
        out += [f"{where}[{k}]: only in the second" for k in keys_b if k not in keys_a]
        if not out and keys_a != keys_b and set(keys_a) == set(keys_b):
            out.append(f"{where}: same elements in another order: {keys_a} vs {keys_b}")
        return out
    if len(xs) != len(ys):
        out.append(f"{where}: {len(xs)} elements != {len(ys)}")
    for i, (x, y) in enumerate(zip(xs, ys)):
        out += diff(x, y, f"{where}[{i}]")
    return out
