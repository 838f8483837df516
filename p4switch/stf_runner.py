"""Run an STF script against a compiled program, with p4c's checking rules.

    fabriclab-stf PROGRAM.p4 SCRIPT.stf [-I DIR] [--switch embedded|bmv2]
    fabriclab-stf --corpus DIR [--switch embedded|bmv2|both] [--json FILE] [--baseline FILE]

The program is compiled by the embedded compiler; the script (p4compiler.stf)
installs entries, sends packets and states the packets expected out. Checking
follows p4c's runner (backends/bmv2/bmv2stf.py): the switch has exactly the
ports the script sends or expects on (packets sent elsewhere are dropped, as
bmv2 drops them); per port, the packets that left must be the expected ones in
order, no more and no fewer, unless the script says `expect PORT` (anything
goes). Expected data is a prefix unless it ends with `$`; `*` matches a nibble.

`--switch embedded` (default) runs p4switch.switch.Switch in-process;
`--switch bmv2` runs real simple_switch on the same JSON (p4switch.stf_bmv2).

Exit codes: 0 all expectations met, 1 a mismatch (a per-port report on
stdout) or a command the switch refused (on either switch, as p4c's runner counts
simple_switch_CLI's errors), 2 the program does not compile or the script is wrong
(one line on stderr).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections import defaultdict
from pathlib import Path

from p4compiler import stf
from p4switch.runtime_api import DataplaneError, Replica
from p4switch.stf_check import (
    NamedEntries,
    Outcome,
    StfRunError,
    check_counter,
    compare,
    ordering_notes,
)
from p4switch.stf_corpus import ProgramResult, main_corpus
from p4switch.stf_names import ProgramNames, StfNameError
from p4switch.stf_profiles import (
    DeleteGroup,
    DeleteMember,
    Group,
    GroupMember,
    GroupMemberRemoved,
    IndirectDefault,
    IndirectEntry,
    Member,
    ModifyMember,
    ProfileSteps,
    is_indirect,
)

__all__ = ["Outcome", "StfRunError", "compare", "run", "run_embedded", "main"]


# ----------------------------------------------------------- control plane
class Replication:
    """simple_switch_CLI's multicast nodes and groups, and clone sessions, kept
    as the replica lists the switch API takes."""

    def __init__(self, sw):
        self.sw = sw
        self.nodes: list[tuple[int, tuple[int, ...]]] = []   # handle -> (rid, ports)
        self.groups: dict[int, list[int]] = {}               # group -> node handles
        self.mc_sessions: dict[int, int] = {}                # clone session -> group

    def replicas(self, group: int) -> list[Replica]:
        return [Replica(p, rid) for h in self.groups.get(group, [])
                for rid, ports in [self.nodes[h]] for p in ports]

    def refresh(self) -> None:
        for g in self.groups:
            self.sw.mc_group_set(g, self.replicas(g))
        for s, g in self.mc_sessions.items():
            self.sw.clone_session_set(s, self.replicas(g))

    def apply(self, op: str, a: tuple, where: str) -> None:
        if op == "mc_mgrp_create":
            self.groups.setdefault(a[0], [])
        elif op == "mc_mgrp_destroy":
            self.groups.pop(a[0], None)
            self.sw.mc_group_delete(a[0])
        elif op == "mc_node_create":
            self._distinct_ports(a[1:])
            self.nodes.append((a[0], tuple(a[1:])))
        elif op == "mc_node_update":
            self._node(a[0], where)
            self._distinct_ports(a[1:])
            self.nodes[a[0]] = (self.nodes[a[0]][0], tuple(a[1:]))
        elif op in ("mc_node_associate", "mc_node_dissociate"):
            if a[0] not in self.groups:
                raise StfRunError(f"{where}: no multicast group {a[0]} (mc_mgrp_create it)")
            self._node(a[1], where)
            if op == "mc_node_associate":
                owner = next((g for g, nodes in self.groups.items() if a[1] in nodes), None)
                if owner is not None:  # bmv2: a node belongs to one group at most
                    raise DataplaneError(f"multicast node {a[1]} is already in group {owner} "
                                         "(bmv2: Invalid PRE operation)")
                self.groups[a[0]].append(a[1])
            elif a[1] in self.groups[a[0]]:
                self.groups[a[0]].remove(a[1])
        elif op == "mirroring_add":
            self.mc_sessions.pop(a[0], None)
            self.sw.clone_session_set(a[0], [Replica(a[1])])
        elif op == "mirroring_add_mc":
            self.mc_sessions[a[0]] = a[1]
        elif op == "mirroring_delete":
            self.mc_sessions.pop(a[0], None)
            self.sw.clone_session_delete(a[0])
        self.refresh()

    @staticmethod
    def _distinct_ports(ports: tuple) -> None:
        """simple_switch_CLI refuses a node listing a port twice (the node is not made)."""
        dup = next((p for i, p in enumerate(ports) if p in ports[:i]), None)
        if dup is not None:
            raise DataplaneError(f"multicast node lists port {dup} twice (simple_switch_CLI: "
                                 "Found duplicate port number)")

    def _node(self, handle: int, where: str) -> None:
        if not 0 <= handle < len(self.nodes):
            raise StfRunError(f"{where}: no multicast node handle {handle}")


class EmbeddedControl:
    """Applies the script's control commands to an in-process Switch."""

    def __init__(self, sw, names: ProgramNames, filename: str):
        self.sw, self.names, self.filename = sw, names, filename
        self.rep = Replication(sw)
        self.profiles = ProfileSteps(names)
        self.touched: set[str] = set()
        self.named = NamedEntries()

    def _indirect(self, c, where: str) -> bool:
        if isinstance(c, stf.ProfileCommand):
            return True
        return (isinstance(c, (stf.AddEntry, stf.SetDefault))
                and is_indirect(self.names.table(c.table, where)))

    def _step(self, s, name: str | None) -> None:
        sw = self.sw
        if isinstance(s, Member):
            sw.act_prof_add_member(s.profile, s.handle, s.call)
        elif isinstance(s, Group):
            sw.act_prof_set_group(s.profile, s.handle, [])
        elif isinstance(s, (GroupMember, GroupMemberRemoved)):
            sw.act_prof_set_group(s.profile, s.group, list(s.members))
        elif isinstance(s, ModifyMember):
            sw.act_prof_modify_member(s.profile, s.handle, s.call)
        elif isinstance(s, DeleteMember):
            sw.act_prof_delete_member(s.profile, s.handle)
        elif isinstance(s, DeleteGroup):
            sw.act_prof_delete_group(s.profile, s.handle)
        elif isinstance(s, IndirectEntry):
            h = sw.table_add(s.table["name"], s.key, s.target, (s.priority or 0) + 1)
            self.named.name(name, s.table["name"], h)
            self.touched.add(s.table["name"])
        elif isinstance(s, IndirectDefault):
            sw.table_set_default(s.table["name"], s.target)

    def apply(self, c, outcome: Outcome) -> None:
        where = f"{self.filename}:{c.line}"
        n = self.names
        try:
            if self._indirect(c, where):
                for s in self.profiles.steps(c, where):
                    self._step(s, getattr(c, "handle", None))
            elif isinstance(c, stf.AddEntry):
                t = n.table(c.table, where)
                key = n.match_key(t, c.keys, where)
                # STF priorities count from 0 (bmv2stf gives bmv2 10000 - p); P4Runtime's from 1
                prio = (c.priority or 0) + 1
                h = self.sw.table_add(t["name"], key, n.call(t, c.action, where), prio)
                self.named.name(c.handle, t["name"], h)
                self.touched.add(t["name"])
            elif isinstance(c, stf.SetDefault):
                t = n.table(c.table, where)
                self.sw.table_set_default(t["name"], n.call(t, c.action, where))
            elif isinstance(c, stf.McastGroup):
                self.sw.mc_group_set(c.group, [Replica(p, i) for i, p in enumerate(c.ports)])
            elif isinstance(c, stf.MirrorSession):
                self.sw.clone_session_set(c.session, [Replica(c.port)])
            elif isinstance(c, stf.CounterCheck):
                # a direct counter's index is an entry handle, as simple_switch_CLI's
                # counter_read takes it
                name, table, index = self.named.counter_cell(c, n, where)
                nb, np_ = (self.sw.direct_counter_read(table, index) if table else
                           self.sw.counter_read(name, index))
                msg = check_counter(c, nb, np_, self.filename, name)
                if msg:
                    outcome.mismatches.append(msg)
            elif isinstance(c, stf.Control):
                self._control(c.op, c.args, where)
        except (DataplaneError, ValueError, KeyError) as e:
            if isinstance(e, (StfNameError, StfRunError)):
                raise StfRunError(str(e)) from None
            if isinstance(e, DataplaneError):
                # the switch's answer, as simple_switch_CLI's error on bmv2 (stf_bmv2.py):
                # the test fails (exit 1) and the script goes on
                outcome.mismatches.append(f"{where}: the switch refused it: {e}")
                return
            raise StfRunError(f"{where}: the switch refused it: {e}") from None

    def _control(self, op: str, a: tuple, where: str) -> None:
        n, sw = self.names, self.sw
        if op.startswith(("mc_", "mirroring_")) and op != "mirroring_get":
            self.rep.apply(op, a, where)
        elif op == "register_write":
            sw.register_write(n.register(a[0], where), a[1], a[2])
        elif op == "register_reset":
            name = n.register(a[0], where)
            for i in range(n.registers[name]):
                sw.register_write(name, i, 0)
        elif op.startswith("counter_"):
            self._counter(op, a, where)
        elif op == "meter_set_rates":
            name = n.meter(a[0], where)
            table = n.direct_meters.get(name)   # the index is an entry handle
            if table:
                sw.direct_meter_set(table, a[1], list(a[2]))
            else:
                sw.meter_set(name, a[1], list(a[2]))
        elif op == "meter_array_set_rates":
            name = n.meter(a[0], where)
            for i in range(n.meters[name]):
                sw.meter_set(name, i, list(a[1]))
        elif op == "remove_all":
            for t in sorted(self.touched):
                sw.table_clear(t)
            self.named.entries.clear()
        elif op == "remove_entry":
            sw.table_delete(*self.named.pop(a[0], where))
        elif op in ("pvs_add", "pvs_remove", "pvs_clear"):
            name = n.value_set(a[0], where)
            if op == "pvs_clear":
                sw.value_set_clear(name)
            else:
                (sw.value_set_add if op == "pvs_add" else sw.value_set_remove)(name, a[1])
        elif op == "register_read":
            n.register(a[0], where)  # only checks the name: the CLI prints the value
        elif op == "meter_get_rates":
            n.meter(a[0], where)
        # wait, no_packet, mirroring_get: nothing to do in a synchronous run

    def _counter(self, op: str, a: tuple, where: str) -> None:
        """counter_write NAME INDEX PACKETS BYTES / counter_reset NAME / counter_read,
        with simple_switch_CLI's operands: on a direct counter INDEX is an entry handle."""
        sw, name = self.sw, self.names.counter(a[0], where)
        table = self.names.direct_counters.get(name)
        if op == "counter_write":
            index, packets, nbytes = a[1], a[2], a[3]
            if table:
                sw.direct_counter_write(table, index, nbytes, packets)
            else:
                sw.counter_write(name, index, nbytes, packets)
        elif op == "counter_reset":
            if table:
                sw.direct_counter_reset(table)
            else:
                for i in range(self.names.counters[name]):
                    sw.counter_write(name, i, 0, 0)
        # counter_read: the name is checked; the CLI only prints the value


# ----------------------------------------------------------------- running
def run_embedded(j: dict, script: stf.StfScript, filename: str = "<stf>",
                 log: bool = False, fast: bool = False, specialised: bool = False) -> Outcome:
    """Run `script` on an in-process embedded switch loaded with bmv2 JSON `j`
    (`log`: the switch's bmv2-style per-packet log on stderr; `fast`: packets through
    the data-plane thread's per-packet function instead of the general path;
    `specialised`: that function with the configuration tables' default entries
    baked in as they stand at each packet, p4switch/specialisation.py)."""
    from p4switch.switch import ProgramError, Switch

    ports = script.ports()
    sw = Switch({p: f"stf{p}" for p in sorted(ports)}, log_console=log)
    try:
        sw.load_program(j)
    except ProgramError as e:
        raise StfRunError(f"the embedded switch cannot load the program: {e}") from None
    ctl = EmbeddedControl(sw, ProgramNames(j), filename)
    outcome = Outcome()
    seen: dict[int, int] = defaultdict(int)   # expects per port so far (for `none`)
    for c in script.commands:
        if isinstance(c, stf.Packet):
            errors = sw.pipeline_errors
            if specialised and sw.program.fused is sw.program.fused_generic:
                sw.specialise_now()
            for port, frame in sw.process(c.port, c.data, fast=fast):
                if port in ports:
                    outcome.outputs[port].append(frame)
            if sw.pipeline_errors > errors:
                outcome.mismatches.append(f"{filename}:{c.line}: the switch failed processing "
                                          "this packet (see its message on stderr)")
        elif isinstance(c, stf.Expect):
            if c.pattern is not None:
                seen[c.port] += 1
            elif not c.any and len(outcome.outputs[c.port]) > seen[c.port]:
                extra = outcome.outputs[c.port][seen[c.port]].hex()
                outcome.mismatches.append(f"{filename}:{c.line}: expected nothing more out of "
                                          f"port {c.port}, got {extra}")
        else:
            ctl.apply(c, outcome)
    outcome.mismatches.extend(compare(script, outcome.outputs, filename))
    return outcome


def compile_program(p4: str, include_dirs: list[str]) -> dict:
    """The embedded compiler's bmv2 JSON for `p4`; StfRunError names the first error."""
    from p4compiler.compiler import compile_file
    from p4compiler.errors import CompileError

    try:
        return compile_file(p4, include_dirs=include_dirs).json
    except CompileError as e:
        raise StfRunError(f"compile error: {e}") from None
    except RecursionError:
        raise StfRunError("compile error: program nested too deeply") from None
    except Exception as e:  # noqa: BLE001 - reported as one line
        raise StfRunError(f"internal compiler error: {type(e).__name__}: {e}") from None


def run(p4: str, stf_path: str, include_dirs: list[str] | None = None,
        switch: str = "embedded", timeout: float = 60.0, log: bool = False) -> Outcome:
    script = stf.parse_file(stf_path)
    incs = list(include_dirs or []) + [str(Path(p4).resolve().parent)]
    j = compile_program(p4, incs)
    name = Path(stf_path).name
    if switch == "bmv2":
        from p4switch.stf_bmv2 import run_bmv2

        outcome = run_bmv2(j, script, name, timeout=timeout, keep=log)
    else:
        outcome = run_embedded(j, script, name, log)
    outcome.notes = ordering_notes(script, name)
    return outcome


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise _Timeout()


def run_program(p4: str, switches: tuple[str, ...], includes: list[str], timeout: float
                ) -> ProgramResult:
    """One program of a corpus (fabriclab-stf --corpus, p4switch/stf_corpus.py), in a
    worker process: compile once, run the script on each switch, within `timeout` s."""
    path = Path(p4)
    res = ProgramResult(path.stem)

    def every(verdict: str, detail: str) -> ProgramResult:
        for s in switches:
            res.verdicts[s], res.details[s] = verdict, detail
        return res

    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(max(1, int(timeout)))
    try:
        try:
            script = stf.parse_file(path.with_suffix(".stf"))
            j = compile_program(p4, includes + [str(path.parent)])
        except StfRunError as e:
            return every("compile-error", str(e))
        except stf.StfError as e:
            return every("run-error", f"script: {e}")
        for s in switches:
            try:
                if s == "bmv2":
                    from p4switch.stf_bmv2 import run_bmv2
                    outcome = run_bmv2(j, script, path.with_suffix(".stf").name,
                                       timeout=timeout)
                else:
                    outcome = run_embedded(j, script, path.with_suffix(".stf").name)
            except (StfRunError, stf.StfError) as e:
                res.verdicts[s], res.details[s] = "run-error", str(e)
                continue
            except _Timeout:
                raise
            except Exception as e:  # noqa: BLE001 - one verdict, never a traceback
                res.verdicts[s], res.details[s] = "run-error", f"{type(e).__name__}: {e}"
                continue
            first = outcome.mismatches[0] if outcome.mismatches else ""
            res.verdicts[s] = "pass" if outcome.passed else "mismatch"
            res.details[s] = " ".join(first.split())[:300]
        if not res.agree and (notes := ordering_notes(script, path.with_suffix(".stf").name)):
            for s in switches:   # the likely reason the two differ
                res.details[s] = (res.details[s] + " | " + " ".join(notes[0].split()))[:500]
        return res
    except _Timeout:
        for s in switches:
            res.verdicts.setdefault(s, "timeout")
            res.details.setdefault(s, f"over {timeout:.0f} s")
        return res
    finally:
        signal.alarm(0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="fabriclab-stf", description=(
        "Compile a v1model P4 program with the embedded compiler and run an STF test "
        "script (p4c's format) against the embedded switch or real bmv2."))
    ap.add_argument("program", nargs="?", help="P4_16 v1model program")
    ap.add_argument("script", nargs="?", help="STF script")
    ap.add_argument("--corpus", metavar="DIR",
                    help="run every PROGRAM.p4 of DIR that has a PROGRAM.stf (e.g. p4c's "
                         "testdata/p4_16_samples) and summarise (p4switch/stf_corpus.py)")
    ap.add_argument("--pattern", default="*.p4", metavar="GLOB",
                    help="--corpus: which programs (default *.p4; p4c's samples: '*-bmv2.p4')")
    ap.add_argument("-j", "--jobs", type=int, default=None,
                    help="--corpus: programs run at once (default: the CPU count)")
    ap.add_argument("--json", metavar="FILE", help="--corpus: every verdict as JSON")
    ap.add_argument("--baseline", metavar="FILE",
                    help="--corpus: an earlier run's --json; list what passed there and "
                         "fails now (exit 1 only for those) and what passes now")
    ap.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR",
                    help="include directory (the program's own directory is searched too)")
    ap.add_argument("--switch", choices=["embedded", "bmv2", "both"], default="embedded",
                    help="both (--corpus only): run on each and compare their verdicts")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds the bmv2 run may take (default 60)")
    ap.add_argument("--log", action="store_true",
                    help="embedded: the switch's per-packet log on stderr; bmv2: keep its "
                         "directory (log, pcaps) and print its path")
    args = ap.parse_args(argv)
    if args.corpus:
        if args.program or args.script:
            ap.error("--corpus takes no PROGRAM or SCRIPT")
        try:
            return main_corpus(args.corpus, args.switch, args.includes, args.jobs,
                               args.timeout, args.json, run_program, args.pattern,
                               args.baseline)
        except KeyboardInterrupt:
            return 130
    if not (args.program and args.script):
        ap.error("PROGRAM and SCRIPT are required (or --corpus DIR)")
    if args.switch == "both":
        ap.error("--switch both needs --corpus")
    for path in (args.program, args.script):
        if not Path(path).is_file():
            print(f"fabriclab-stf: error: no such file: {path}", file=sys.stderr)
            return 2
    try:
        outcome = run(args.program, args.script, args.includes, args.switch, args.timeout,
                      args.log)
    except (stf.StfError, StfRunError) as e:
        print(f"fabriclab-stf: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 2
    except Exception as e:  # noqa: BLE001 - one line, never a traceback
        print(f"fabriclab-stf: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    try:
        for n in outcome.notes:
            print(f"fabriclab-stf: note: {n}", file=sys.stderr)
        print(f"{'PASS' if outcome.passed else 'FAIL'} {args.script}")
        for m in outcome.mismatches:
            print(m)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if outcome.passed else 1


if __name__ == "__main__":
    sys.exit(main())
