"""The switch's program generator, actions: an action's primitives in order, its
branches (the compilers' forward jumps) as nested ifs, anything else (run-time loops)
as a bounded program-counter loop. Each primitive is codegen_primitives.py's."""

from __future__ import annotations

import re

from p4switch.program_common import _indent

MAX_ACTION_STEPS = 1 << 20  # primitives one action call may run


class ActionCodegen:
    """Mixin of Program (p4switch/program.py)."""

    # -- actions ----------------------------------------------------------------------
    def _action_body(self, aid: int, where: str) -> list[str]:
        a = self.actions[aid]
        self._ad_widths = tuple(rd.get("bitwidth") for rd in a.get("runtime_data", []))
        where = f"{where} ({a['name']})"
        prims = a.get("primitives", [])
        if any(p.get("op") in ("_jump", "_jump_if_zero") for p in prims):
            # Ifs inside an action, as the compilers lay them out (forward jumps only):
            # nested Python ifs again, as fast as the apply block's own.
            structured = self._structured(prims, 0, len(prims), where)
            if structured is not None:
                return structured
            # Anything else (run-time loops): a program-counter loop, stopped with an
            # error where bmv2 would spin for ever.
            lines = ["pc = 0", f"steps = {MAX_ACTION_STEPS}", "while True:",
                     "    steps -= 1",
                     "    if steps < 0:",
                     f"        raise RuntimeError({where!r} + ' ran {MAX_ACTION_STEPS} "
                     "primitives: a loop that does not end')"]
            for i, p in enumerate(prims):
                pw = f"{where}.primitives[{i}]"
                lines.append(f"    {'if' if i == 0 else 'elif'} pc == {i}:")
                op = p.get("op")
                params = p.get("parameters", [])
                if op == "_jump":
                    pre = []
                    tgt = self.expr(params[0], pw, pre)
                    lines += _indent(pre + [f"pc = {tgt}"], 2)
                elif op == "_jump_if_zero":
                    pre = []
                    c = self.expr(params[0], pw, pre)
                    tgt = self.expr(params[1], pw, pre)
                    lines += _indent(pre + [f"pc = {tgt} if {c} == 0 else {i + 1}"], 2)
                else:
                    lines += _indent(self._primitive(p, pw) + [f"pc = {i + 1}"], 2)
            lines += ["    else:", "        break"]
            return lines
        lines = []
        for i, p in enumerate(prims):
            lines += self._primitive(p, f"{where}.primitives[{i}]")
        return _unpack_action_data(lines, len(self._ad_widths))

    def _structured(self, prims: list[dict], lo: int, hi: int, where: str
                    ) -> list[str] | None:
        """prims[lo:hi] as nested ifs, or None where a jump does not fit that shape.

        `_jump_if_zero(c, t)` opens an if whose body is prims[i+1:t]; when that body
        ends with `_jump(e)` (t <= e <= hi), prims[t:e] is its else. Every jump must
        land inside the block it belongs to; a backward jump (a loop) or a jump out of
        the middle of a block gives None."""
        lines: list[str] = []
        i = lo
        while i < hi:
            p = prims[i]
            op = p.get("op")
            pw = f"{where}.primitives[{i}]"
            if op == "_jump":
                return None
            if op != "_jump_if_zero":
                lines += self._primitive(p, pw)
                i += 1
                continue
            params = p.get("parameters", [])
            t = _const_target(params)
            if t is None or not i < t <= hi:
                return None
            end, then_hi = t, t
            last = prims[t - 1] if t - 1 > i else None
            if last is not None and last.get("op") == "_jump":
                e = _const_target(last.get("parameters", []), 0)
                if e is None or not t <= e <= hi:
                    return None
                end, then_hi = e, t - 1
            then = self._structured(prims, i + 1, then_hi, where)
            other = self._structured(prims, t, end, where)
            if then is None or other is None:
                return None
            pre: list[str] = []
            c = self.expr(params[0], pw, pre)
            lines += pre + [f"if {c}:", *_indent(then or ["pass"])]
            if other:
                lines += ["else:", *_indent(other)]
            i = end
        return lines


def _const_target(params: list, index: int = 1) -> int | None:
    """A jump's target when it is a hexstr constant, as the compilers write it."""
    if len(params) <= index or params[index].get("type") != "hexstr":
        return None
    try:
        return int(params[index]["value"], 16)
    except (TypeError, ValueError):
        return None


_AD_COPY = re.compile(r"^S\[(\d+)\] = ad\[(\d+)\]$")


def _unpack_action_data(lines: list[str], nargs: int) -> list[str]:
    """`S[a] = ad[0]`, `S[b] = ad[1]`, ... for every parameter, first in an action
    (how a configuration action copies its data): one tuple unpack instead."""
    if nargs < 2 or len(lines) < nargs:
        return lines
    slots = []
    for i, ln in enumerate(lines[:nargs]):
        m = _AD_COPY.match(ln)
        if m is None or int(m.group(2)) != i:
            return lines
        slots.append(m.group(1))
    if len(set(slots)) != nargs:
        return lines
    return [", ".join(f"S[{k}]" for k in slots) + " = ad"] + lines[nargs:]
