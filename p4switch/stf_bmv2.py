"""Run an STF script on real bmv2 simple_switch, as p4c's bmv2stf.py does.

simple_switch runs rootless in pcap-file mode (`--use-files 0`): port N reads
packets from the FIFO `pN_in.pcap` and writes them to `pN_out.pcap`, in a
private temporary directory. Control commands go through simple_switch_CLI
(Thrift) in batches, each batch finished before the next packet is written;
the inputs are then closed (bmv2's pcap reader merges the port files by
timestamp, so with several ports it delivers packets only once every file has
ended: as under bmv2stf, all control commands take effect before the packets
are processed), the run waits until the switch's log and outputs are quiet,
reads counters for `check_counter`, stops the switch (by its PID) and reads the
output pcaps. Every wait is bounded by `timeout`.
"""

from __future__ import annotations

import errno
import json
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from p4compiler import stf
from p4switch.lifetime import die_with_parent
from p4switch.runtime_api import MatchKind, MatchParam
from p4switch.stf_check import NamedEntries, Outcome, StfRunError, check_counter, compare
from p4switch.stf_names import ProgramNames, StfNameError
from p4switch.stf_profiles import (
    DeleteGroup,
    DeleteMember,
    Group,
    GroupMember,
    GroupMemberRemoved,
    IndirectDefault,
    Member,
    ModifyMember,
    ProfileSteps,
    is_indirect,
)

BMV2_DIR = "/usr/local/p4ref/bin"
_PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
_QUIET_S = 0.5
_GAP_US = 100
_QUEUE_DEPTH = 100000


def find_tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    path = Path(BMV2_DIR) / name
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _read_pcap(path: Path) -> list[bytes]:
    try:
        data = path.read_bytes()
    except OSError:
        return []
    if len(data) < 24:
        return []
    endian = "<" if data[:4] == b"\xd4\xc3\xb2\xa1" else ">"
    out, off = [], 24
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        out.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return out


def _key_text(p: MatchParam) -> str:
    if p.kind == MatchKind.LPM:
        return f"{p.value:#x}/{p.prefix_len}"
    if p.kind == MatchKind.TERNARY:
        return f"{p.value:#x}&&&{p.mask:#x}"
    if p.kind == MatchKind.RANGE:
        return f"{p.value:#x}->{p.high:#x}"
    if p.kind == MatchKind.OPTIONAL:
        raise StfNameError("optional match keys cannot be written with simple_switch_CLI")
    return f"{p.value:#x}"


def _priority(table: dict, priority: int | None) -> str:
    """bmv2stf's priority for a table that needs one: 10000 - the STF's (bmv2: lower wins)."""
    if any(k["match_type"] in ("ternary", "range", "optional") for k in table["key"]):
        return f" {10000 - (priority or 0)}"
    return ""


class Bmv2Switch:
    """One simple_switch process in pcap-file mode, and its CLI."""

    def __init__(self, json_doc: dict, ports: list[int], timeout: float, keep: bool = False):
        self.ss, self.cli = find_tool("simple_switch"), find_tool("simple_switch_CLI")
        if not self.ss or not self.cli:
            raise StfRunError(f"simple_switch / simple_switch_CLI not found on PATH or in {BMV2_DIR}")
        self.deadline = time.monotonic() + timeout
        self.dir = Path(tempfile.mkdtemp(prefix="fabriclab-stf-"))
        self.keep = keep
        self.ports = ports
        self.thrift = _free_port()
        self.fifos: dict[int, int] = {}       # non-blocking write ends of the port FIFOs
        self.pending: dict[int, bytearray] = {}  # bytes not yet taken by the FIFO
        self.sent = 0
        self.proc: subprocess.Popen | None = None
        (self.dir / "prog.json").write_text(json.dumps(json_doc))
        for p in ports:
            os.mkfifo(self.dir / f"p{p}_in.pcap")

    # -------------------------------------------------------------- lifecycle
    # (the switch dies with the thread that starts it: start, run and stop happen on
    # one thread; a runner killed by a timeout must not leave simple_switch behind)
    def start(self) -> None:
        cmd = [self.ss, "--log-file", "switch", "--log-flush", "--use-files", "0",
               "--thrift-port", str(self.thrift), "--device-id", str(os.getpid() % 65536),
               "--notifications-addr", f"ipc://{self.dir}/notifications.ipc"]
        for p in self.ports:
            cmd += ["-i", f"{p}@p{p}"]
        cmd.append("prog.json")
        self.stderr = open(self.dir / "stderr.txt", "wb")
        self.proc = subprocess.Popen(cmd, cwd=self.dir, stdout=self.stderr, stderr=self.stderr,
                                     stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        pending = list(self.ports)
        while pending:   # open every input FIFO, in whatever order bmv2 opens them
            self._alive("while opening its ports")
            for p in list(pending):
                try:
                    fd = os.open(self.dir / f"p{p}_in.pcap", os.O_WRONLY | os.O_NONBLOCK)
                except OSError as e:
                    if e.errno != errno.ENXIO:
                        raise
                    continue
                self.fifos[p] = fd
                self.pending[p] = bytearray(_PCAP_HEADER)
                self._drain(p)
                pending.remove(p)
            time.sleep(0.01)
        while True:
            self._alive("while starting")
            with socket.socket() as s:
                s.settimeout(0.2)
                if s.connect_ex(("127.0.0.1", self.thrift)) == 0:
                    return
            time.sleep(0.05)

    def _alive(self, when: str) -> None:
        if self.proc.poll() is not None:
            raise StfRunError(f"simple_switch refused the program ({when}): {self._why()}")
        if time.monotonic() > self.deadline:
            raise StfRunError(f"simple_switch timed out {when}")

    def _why(self) -> str:
        text = (self.dir / "stderr.txt").read_text(errors="replace").strip()
        lines = [ln.strip() for ln in text.splitlines()
                 if ln.strip() and not ln.startswith(("Calling target", "Adding interface"))]
        return lines[0][:200] if lines else f"exit code {self.proc.returncode}"

    def close_inputs(self) -> None:
        """End of input: bmv2's pcap reader merges the port files by timestamp, so
        with several ports it delivers packets once every file has ended."""
        while any(self.pending.get(p) for p in self.fifos):
            if self.proc.poll() is not None or time.monotonic() > self.deadline:
                break
            busy = [self.fifos[p] for p in self.fifos if self.pending[p]]
            select.select([], busy, [], 0.1)
            for p in list(self.fifos):
                if self.pending[p]:
                    self._drain(p)
                if not self.pending[p]:
                    os.close(self.fifos.pop(p))
        for fd in self.fifos.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.fifos.clear()

    def stop(self) -> str | None:
        """Stop the switch; a message if it had died on its own (a crash)."""
        self.close_inputs()
        died = None
        if self.proc is not None:
            if self.proc.poll() is not None:
                died = f"simple_switch died (exit code {self.proc.returncode}): {self._why()}"
            else:
                self._signal_stop()
            self.stderr.close()
        return died

    def _signal_stop(self) -> None:
        for sig, wait in ((signal.SIGINT, 3), (signal.SIGTERM, 3), (signal.SIGKILL, 5)):
            self.proc.send_signal(sig)
            try:
                self.proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def cleanup(self) -> None:
        if self.keep:
            print(f"fabriclab-stf: simple_switch's log and pcaps are in {self.dir}",
                  file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -------------------------------------------------------------- I/O
    def send(self, port: int, data: bytes) -> None:
        # bmv2 replays the pcap timestamps: 100 us apart keeps the order
        self.sent += 1
        sec, usec = divmod(self.sent * _GAP_US, 1_000_000)
        rec = struct.pack("<IIII", 1 + sec, usec, len(data), len(data)) + data
        self.pending[port] += rec
        self._drain(port)

    def _drain(self, port: int) -> None:
        """Write what the FIFO takes now, never blocking: bmv2 reads a port's file
        only as far as its merge by timestamp needs, so a full FIFO must not stall
        the run (close_inputs() finishes the writes)."""
        buf = self.pending[port]
        while buf:
            try:
                n = os.write(self.fifos[port], buf)
            except BlockingIOError:
                return
            except BrokenPipeError:
                raise StfRunError(f"simple_switch stopped reading port {port}: "
                                  f"{self._why()}") from None
            del buf[:n]

    def outputs(self) -> dict[int, list[bytes]]:
        return {p: _read_pcap(self.dir / f"p{p}_out.pcap") for p in self.ports}

    def quiesce(self) -> None:
        """Wait until neither the switch's log nor its outputs have grown for a while
        (bmv2stf sleeps a fixed 2 s instead)."""
        files = [self.dir / "switch.txt"] + [self.dir / f"p{p}_out.pcap" for p in self.ports]

        def size(f: Path) -> int:
            try:
                return f.stat().st_size
            except FileNotFoundError:  # not yet there, or bmv2 just rotated its log
                return 0

        def sizes():
            return [size(f) for f in files]
        last, since = sizes(), time.monotonic()
        while time.monotonic() - since < _QUIET_S and time.monotonic() < self.deadline:
            if self.proc.poll() is not None:
                return
            time.sleep(0.05)
            now = sizes()
            if now != last:
                last, since = now, time.monotonic()

    def cli_run(self, commands: list[str]) -> str:
        left = max(1.0, self.deadline - time.monotonic())
        try:
            r = subprocess.run([self.cli, "--thrift-port", str(self.thrift)], cwd=self.dir,
                               input="\n".join(commands) + "\n", capture_output=True,
                               text=True, timeout=left)
        except subprocess.TimeoutExpired:
            raise StfRunError("simple_switch_CLI timed out") from None
        return r.stdout + r.stderr


# simple_switch_CLI answers after its prompt: "RuntimeCmd: Invalid table operation
# (MBR_STILL_USED)"; an error may follow another prompt on the same line
_CLI_ERROR = re.compile(r"^(?:RuntimeCmd: )*((?:Error|Invalid|Unknown|Table is ternary"
                        r"|.*not found).*)$", re.M)


class Bmv2Control:
    """STF commands -> simple_switch_CLI command lines (bmv2stf's translation)."""

    def __init__(self, names: ProgramNames, filename: str):
        self.names, self.filename = names, filename
        self.nodes = 0
        self.touched: set[str] = set()
        self.profiles = ProfileSteps(names)
        self.named = NamedEntries()

    def _step(self, s) -> str:
        if isinstance(s, Member):
            args = " ".join(f"{v:#x}" for v in s.call.args)
            return f"act_prof_create_member {s.profile} {s.call.action} {args}".rstrip()
        if isinstance(s, Group):
            return f"act_prof_create_group {s.profile}"
        if isinstance(s, GroupMember):
            return f"act_prof_add_member_to_group {s.profile} {s.member} {s.group}"
        if isinstance(s, GroupMemberRemoved):
            return f"act_prof_remove_member_from_group {s.profile} {s.member} {s.group}"
        if isinstance(s, ModifyMember):
            args = " ".join(f"{v:#x}" for v in s.call.args)
            return f"act_prof_modify_member {s.profile} {s.call.action} {s.handle} {args}".rstrip()
        if isinstance(s, DeleteMember):
            return f"act_prof_delete_member {s.profile} {s.handle}"
        if isinstance(s, DeleteGroup):
            return f"act_prof_delete_group {s.profile} {s.handle}"
        t = s.table
        group = s.target.group is not None
        handle = s.target.group if group else s.target.member
        with_group = "_with_group" if group else ""
        if isinstance(s, IndirectDefault):
            return f"table_indirect_set_default{with_group} {t['name']} {handle}"
        key = " ".join(_key_text(p) for p in s.key)
        self.touched.add(t["name"])
        return (f"table_indirect_add{with_group} {t['name']} {key} => {handle}"
                + _priority(t, s.priority))

    def lines(self, c) -> list[str]:
        n, where = self.names, f"{self.filename}:{c.line}"
        if isinstance(c, stf.ProfileCommand) or (
                isinstance(c, (stf.AddEntry, stf.SetDefault))
                and is_indirect(n.table(c.table, where))):
            return [self._step(s) for s in self.profiles.steps(c, where)]
        if isinstance(c, stf.AddEntry):
            t = n.table(c.table, where)
            call = n.call(t, c.action, where)
            key = " ".join(_key_text(p) for p in n.match_key(t, c.keys, where))
            args = " ".join(f"{v:#x}" for v in call.args)
            self.touched.add(t["name"])
            return [f"table_add {t['name']} {call.action} {key} => {args}"
                    + _priority(t, c.priority)]
        if isinstance(c, stf.SetDefault):
            t = n.table(c.table, where)
            call = n.call(t, c.action, where)
            return [f"table_set_default {t['name']} {call.action} "
                    + " ".join(f"{v:#x}" for v in call.args)]
        if isinstance(c, stf.McastGroup):
            out = [f"mc_mgrp_create {c.group}"]
            for i, p in enumerate(c.ports):
                out += [f"mc_node_create {i} {p}", f"mc_node_associate {c.group} {self.nodes}"]
                self.nodes += 1
            return out
        if isinstance(c, stf.MirrorSession):
            return [f"mirroring_add {c.session} {c.port}"]
        if isinstance(c, stf.Control):
            return self._control(c, where)
        return []

    def _control(self, c: stf.Control, where: str) -> list[str]:
        n, a, op = self.names, c.args, c.op
        if op == "mc_node_create":
            self.nodes += 1
        if op in ("wait", "no_packet"):
            return []
        if op == "remove_all":
            self.named.entries.clear()
            return [f"table_clear {t}" for t in sorted(self.touched)]
        if op == "remove_entry":
            table, handle = self.named.pop(a[0], where)
            indirect = "_indirect" if is_indirect(n.tables[table]) else ""
            return [f"table{indirect}_delete {table} {handle}"]
        if op.startswith("register_"):
            return [" ".join([op, n.register(a[0], where)] + [str(x) for x in a[1:]])]
        if op.startswith("pvs_"):
            # simple_switch_CLI wants exactly compressed_bitwidth's bytes
            vs = n.value_set(a[0], where)
            digits = (n.value_sets[vs] + 7) // 8 * 2
            return [" ".join([op, vs] + [f"0x{x:0{digits}x}" for x in a[1:]])]
        if op.startswith("counter_"):
            return [" ".join([op, n.counter(a[0], where)] + [str(x) for x in a[1:]])]
        if op.startswith("meter_"):
            rates = " ".join(f"{r}:{b}" for r, b in a[-1]) if op != "meter_get_rates" else ""
            mid = [str(x) for x in a[1:-1]] if op != "meter_get_rates" else [str(a[1])]
            return [" ".join([op, n.meter(a[0], where)] + mid + ([rates] if rates else []))]
        return [" ".join([op] + [str(x) for x in a])]


def run_bmv2(j: dict, script: stf.StfScript, filename: str = "<stf>", timeout: float = 60.0,
             keep: bool = False) -> Outcome:
    """Run `script` on real simple_switch loaded with bmv2 JSON `j`."""
    names = ProgramNames(j)
    ctl = Bmv2Control(names, filename)
    sw = Bmv2Switch(j, sorted(script.ports()), timeout, keep)
    outcome = Outcome()
    try:
        sw.start()
        # deep egress queues: the pcap replay must not overrun bmv2's default 64 packets
        batch: list[str] = [f"set_queue_depth {_QUEUE_DEPTH}"]
        checks: list[stf.CounterCheck] = []

        def flush() -> None:
            if batch:
                _cli_errors(sw.cli_run(batch), filename, outcome)
                batch.clear()
        for c in script.commands:
            if isinstance(c, stf.Packet):
                flush()
                sw.send(c.port, c.data)
            elif isinstance(c, stf.CounterCheck):
                checks.append(c)
            elif isinstance(c, stf.AddEntry) and c.handle:
                flush()   # alone, to read the handle bmv2 gives the entry
                batch.extend(ctl.lines(c))
                text = sw.cli_run(batch)
                batch.clear()
                _cli_errors(text, filename, outcome)
                handles = re.findall(r"Entry has been added with handle (\d+)", text)
                if handles:
                    t = names.table(c.table, f"{filename}:{c.line}")
                    ctl.named.name(c.handle, t["name"], int(handles[-1]))
            elif not isinstance(c, stf.Expect):
                batch.extend(ctl.lines(c))
        flush()
        sw.close_inputs()
        sw.quiesce()
        for c in checks:  # read at the end: bmv2 has processed the packets by then
            name, _, index = ctl.named.counter_cell(c, names, f"{filename}:{c.line}")
            text = sw.cli_run([f"counter_read {name} {index}"])
            counts = _counter_answer(text)
            msg = (check_counter(c, counts[1], counts[0], filename, name) if counts else
                   f"counter {name}[{index}]: simple_switch_CLI did not answer ({text[:80]})")
            if msg:
                outcome.mismatches.append(msg)
    except StfNameError as e:
        raise StfRunError(str(e)) from None
    finally:
        died = sw.stop()
        outputs = sw.outputs()
        sw.cleanup()
    if died:
        outcome.mismatches.append(died)
    outcome.outputs = defaultdict(list, outputs)
    outcome.mismatches.extend(compare(script, outcome.outputs, filename))
    return outcome


def _cli_errors(text: str, filename: str, outcome: Outcome) -> None:
    for m in _CLI_ERROR.finditer(text):
        outcome.mismatches.append(f"simple_switch_CLI ({filename}): {m.group(1)}")


def _counter_answer(text: str) -> tuple[int, int] | None:
    """(packets, bytes) from simple_switch_CLI's `counter_read` answer, in either of
    its forms: `BmCounterValue(packets=1, bytes=59)` (older bmv2) or
    `name[4]= (59 bytes, 1 packets)` (bmv2 1.15)."""
    if m := re.search(r"packets=(\d+),\s*bytes=(\d+)", text):
        return int(m.group(1)), int(m.group(2))
    if m := re.search(r"\((\d+) bytes, (\d+) packets\)", text):
        return int(m.group(2)), int(m.group(1))
    return None
