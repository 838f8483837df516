"""The switch's program, what its code uses: which header fields are read anywhere,
and which headers are used whole (copied, hashed, stacks, varbit, checksum and meter
targets, stacks indexed at run time). Headers used whole are decoded completely at
extract time; of the others only the fields some code reads are decoded, and the rest
only when the program first writes to the header (the deparser must then re-pack it):
see the generator's `_materialize`."""

from __future__ import annotations

# primitives whose first parameter is written, not read
_WRITERS = {"assign", "modify_field", "assign_VL", "register_read",
            "modify_field_with_hash_based_offset", "modify_field_rng_uniform"}


class UsesMixin:
    """Mixin of Program (p4switch/program.py)."""

    def _scan_uses(self) -> None:
        """`read_fields` ((header, field) pairs) and `full_headers` (names)."""
        self.read_fields: set[tuple[str, str]] = set()
        self.full_headers: set[str] = set()
        for part in ("parsers", "pipelines", "actions", "calculations", "checksums",
                     "learn_lists", "field_lists"):
            self._walk_reads(self.json.get(part))
        for p in self._list("pipelines"):
            for t in p.get("tables", []):
                for k in t.get("key", []):
                    if isinstance(k.get("target"), list):
                        self.read_fields.add(tuple(k["target"]))
        for a in self._list("actions"):
            self._scan_written(a.get("primitives", []))
        for parser in self._list("parsers"):
            for st in parser.get("parse_states", []):
                for op in st.get("parser_ops", []):
                    if op.get("op") == "set" and op.get("parameters"):
                        self._walk_written_header(op["parameters"][0])
                    elif op.get("op") == "primitive":
                        self._scan_written(op.get("parameters", []))
        for c in self._list("checksums"):
            if isinstance(c.get("target"), list):
                self.full_headers.add(c["target"][0])
        for m in self._list("meter_arrays"):
            if isinstance(m.get("result_target"), list):
                self.full_headers.add(m["result_target"][0])
        for hd in self.headers.values():
            if hd.var_field:
                self.full_headers.add(hd.name)

    def _walk_reads(self, node) -> None:
        """Every field read and header used whole under a JSON node."""
        if isinstance(node, list):
            for x in node:
                self._walk_reads(x)
            return
        if not isinstance(node, dict):
            return
        if node.get("op") in ("add_header", "remove_header", "valid"):
            return  # validity only
        params = node.get("parameters")
        if node.get("op") in ("assign", "modify_field", "set") and \
                isinstance(params, list) and params and \
                isinstance(params[0], dict) and params[0].get("type") == "field":
            # The destination field is written, not read: a field only ever written
            # need not be decoded by the parser (see _materialize).
            self._walk_reads(params[1:])
            return
        self._note_use(node.get("type"), node.get("value"))
        for x in node.values():
            self._walk_reads(x)

    def _note_use(self, t, v) -> None:
        """What a JSON value node of type `t` and value `v` reads or uses whole."""
        if t == "field" and isinstance(v, list) and len(v) == 2:
            self.read_fields.add((v[0], v[1]))
        elif t == "stack_field" and isinstance(v, list):
            for hd in self.stacks.get(v[0], []):
                self.read_fields.add((hd.name, v[1]))
        elif t == "header" and isinstance(v, str):
            self.full_headers.add(v)
        elif t == "header_stack" and isinstance(v, str):
            self.full_headers.update(h.name for h in self.stacks.get(v, []))
        elif t == "union_stack_field" and isinstance(v, list) and len(v) == 3:
            for u in self.union_stacks.get(v[0], []):
                self.read_fields.add((f"{u}.{v[1]}", v[2]))
        elif t in ("header_union", "header_union_stack") and isinstance(v, str):
            for u in self.union_stacks.get(v, [v]):
                self.full_headers.update(h.name for h in self.unions.get(u, []))

    def _scan_written(self, primitives: list) -> None:
        """Stacks indexed at run time anywhere in these primitives (a written
        destination or an operand) are used whole."""
        for p in primitives:
            params = p.get("parameters", [])
            op = p.get("op")
            if op in _WRITERS and params:
                self._walk_written_header(params[0])
            elif op == "execute_meter" and len(params) == 3:
                self._walk_written_header(params[2])
            self._walk_deref(params)

    def _walk_written_header(self, param) -> None:
        if param.get("type") == "expression":
            self._walk_deref(param)

    def _walk_deref(self, node) -> None:
        """Every stack a `dereference_header_stack` names under `node`: used whole."""
        if isinstance(node, dict):
            if node.get("op") == "dereference_header_stack":
                left = node.get("left", {})
                self.full_headers.update(h.name for h in self.stacks.get(left.get("value"), []))
            for x in node.values():
                self._walk_deref(x)
        elif isinstance(node, list):
            for x in node:
                self._walk_deref(x)
