"""Run the compiler's STF-like packet tests against a switch *process*, the same
way for the embedded switch and for bmv2's simple_switch_grpc.

For one target (see TARGETS):

1. compile the .p4 with the target's compiler command line (the embedded
   compiler's CLI takes p4c's flags): bmv2 JSON + text P4Info;
2. a switch process with one veth per STF port (`ptyN`, the peer `ptyNp` in the
   namespace `pty-h`), started with simple_switch_grpc's command line (target
   options after `--`);
3. SetForwardingPipelineConfig, table entries, default actions, multicast groups
   and clone sessions over P4Runtime (controller/p4runtime_client.SwitchConnection);
4. each `packet` sent by a raw socket on the peer of its port, frames captured
   on every peer, compared with the `expect` lines (`*` = any nibble, `none` =
   nothing more on that port).

Only `pty*` interfaces and the `pty-h` namespace are created, and they are
deleted by name (`teardown_veths`).
"""

from __future__ import annotations

import ctypes
import os
import select
import shutil
import socket
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from p4switch.tables import EntryHandles

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = REPO / "tests" / "compiler" / "programs"
NETNS = "pty-h"
ETH_P_ALL = 0x0003
PACKET_IGNORE_OUTGOING = 23
SOL_PACKET = 263
CLONE_NEWNET = 0x40000000


@dataclass(frozen=True)
class Target:
    name: str
    compiler: list[str]       # + ["--target", "bmv2", "--arch", "v1model", "-o", DIR, ...]
    switch: list[str]         # + simple_switch_grpc's arguments
    wait_s: float             # how long to wait for an expected frame
    quiet_s: float            # how long "nothing more" has to last

    def available(self) -> bool:
        return all(shutil.which(c) or os.path.exists(c) for c in (self.compiler[0],
                                                                  self.switch[0]))


TARGETS = {
    "embedded": Target("embedded", [sys.executable, "-m", "p4compiler.cli"],
                       [sys.executable, "-m", "p4switch.cli"], 2.0, 0.1),
    "bmv2": Target("bmv2", ["p4c"], ["simple_switch_grpc"], 3.0, 0.3),
}


# -- network ----------------------------------------------------------------------------
ETH_MIN_FRAME = 14  # the Ethernet header: what a packet socket must send at least


def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def teardown_veths(ports: list[int], prefix: str = "pty", netns: str = NETNS) -> None:
    for p in ports:
        _run("ip", "link", "del", f"{prefix}{p}", check=False)
    _run("ip", "netns", "del", netns, check=False)


def setup_veths(ports: list[int], prefix: str = "pty", netns: str = NETNS) -> None:
    """<prefix><N> (root namespace, for the switch) <-> <prefix><N>p (namespace netns)."""
    teardown_veths(ports, prefix, netns)
    _run("ip", "netns", "add", netns)
    _run("ip", "netns", "exec", netns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
         check=False)
    _run("ip", "netns", "exec", netns, "sysctl", "-qw",
         "net.ipv6.conf.default.disable_ipv6=1", check=False)
    for p in ports:
        sw, peer = f"{prefix}{p}", f"{prefix}{p}p"
        _run("ip", "link", "add", sw, "type", "veth", "peer", "name", peer)
        _run("sysctl", "-qw", f"net.ipv6.conf.{sw}.disable_ipv6=1", check=False)
        _run("ip", "link", "set", peer, "netns", netns)
        _run("ip", "netns", "exec", netns, "sysctl", "-qw",
             f"net.ipv6.conf.{peer}.disable_ipv6=1", check=False)
        _run("ip", "link", "set", sw, "up")
        _run("ip", "netns", "exec", netns, "ip", "link", "set", peer, "up")


def open_peer_sockets(ports: list[int], prefix: str = "pty", netns: str = NETNS
                      ) -> dict[int, socket.socket]:
    """Raw sockets on the peers, opened inside the namespace by switching this thread's
    network namespace (setns) for the duration of the socket calls."""
    libc = ctypes.CDLL(None, use_errno=True)
    here = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    there = os.open(f"/var/run/netns/{netns}", os.O_RDONLY)
    socks: dict[int, socket.socket] = {}
    try:
        if libc.setns(there, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns into " + netns)
        try:
            for p in ports:
                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                s.bind((f"{prefix}{p}p", 0))
                s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
                s.setblocking(False)
                socks[p] = s
        finally:
            if libc.setns(here, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back to the test's namespace")
    finally:
        os.close(here)
        os.close(there)
    return socks


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# -- compile and start --------------------------------------------------------------------
def compile_program(target: Target, p4: Path, out: Path) -> tuple[Path, Path]:
    """(bmv2 JSON, text P4Info) from the target's compiler, p4c's command line."""
    out.mkdir(parents=True, exist_ok=True)
    info = out / f"{p4.stem}.p4info.txtpb"
    r = subprocess.run([*target.compiler, "--target", "bmv2", "--arch", "v1model",
                        "-o", str(out), "--p4runtime-files", str(info), str(p4)],
                       capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        raise RuntimeError(f"{target.name}: cannot compile {p4.name}: {r.stderr.strip()}")
    return out / f"{p4.stem}.json", info


def start_switch(target: Target, ports: list[int], grpc_port: int, log: Path,
                 prefix: str = "pty") -> subprocess.Popen:
    """simple_switch_grpc's command line: target (gRPC) options after `--`; the
    embedded switch takes the same (and ignores --thrift-port with a note)."""
    cmd = [*target.switch, "--device-id", "1", "--thrift-port", str(free_port()),
           *[a for p in ports for a in ("-i", f"{p}@{prefix}{p}")], "--no-p4", "--",
           "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
    with open(log, "w") as f:
        return subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=REPO)


def stop_switch(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- P4Runtime writes from STF commands ------------------------------------------------------
def _matches_anything(k, f) -> bool:
    """An STF key that is a don't-care: a ternary mask of 0, an lpm prefix of 0 (P4Runtime
    refuses them written out: the field must be omitted)."""
    if f.match_type == "TERNARY":
        return k.mask == 0
    return f.match_type == "LPM" and k.prefix_len == 0


def _entry(conn, c):
    """A P4Runtime TableEntry for an STF `add` line."""
    from p4.v1 import p4runtime_pb2

    from controller.p4info import encode

    info = conn.p4info
    t = info.table(c.table)
    entry = p4runtime_pb2.TableEntry(table_id=t.id)
    by_name = {k.name: k for k in c.keys}
    needs_priority = False
    for i, f in enumerate(t.match_fields):
        k = by_name.get(f.name)
        if k is None:
            k = next((x for x in c.keys if f.name.endswith("." + x.name)), None)
        if k is None and i < len(c.keys) and c.keys[i].name not in \
                {g.name for g in t.match_fields}:
            k = c.keys[i]
        if f.match_type in ("TERNARY", "RANGE", "OPTIONAL"):
            needs_priority = True
        if k is None or _matches_anything(k, f):
            continue  # a don't-care: left out, as P4Runtime wants
        fm = entry.match.add(field_id=f.id)
        if f.match_type == "EXACT":
            fm.exact.value = encode(k.value, f.bitwidth)
        elif f.match_type == "LPM":
            plen = k.prefix_len if k.prefix_len is not None else f.bitwidth
            v = k.value & (((1 << plen) - 1) << (f.bitwidth - plen)) if plen else 0
            fm.lpm.value, fm.lpm.prefix_len = encode(v, f.bitwidth), plen
        elif f.match_type == "TERNARY":
            mask = k.mask if k.mask is not None else (1 << f.bitwidth) - 1
            fm.ternary.value = encode(k.value & mask, f.bitwidth)
            fm.ternary.mask = encode(mask, f.bitwidth)
        elif f.match_type == "RANGE":
            fm.range.low = encode(k.value, f.bitwidth)
            fm.range.high = encode(k.high if k.high is not None else k.value, f.bitwidth)
        elif f.match_type == "OPTIONAL":
            fm.optional.value = encode(k.value, f.bitwidth)
    if needs_priority:
        entry.priority = c.priority or 1
    entry.action.action.CopyFrom(info.action_call(c.action.name, dict(c.action.params)))
    return entry


def _mirror(c) -> tuple[int, int] | None:
    """(session, port) of a clone session command: STF's `mirror` or the runtime
    command `mirroring_add`; None for any other command."""
    kind = type(c).__name__
    if kind == "MirrorSession":
        return c.session, c.port
    if kind == "Control" and c.op == "mirroring_add":
        return c.args[0], c.args[1]
    return None


class EntryBook:
    """The entries a script added, by name (`= NAME`, for `remove NAME`) and by the
    handle bmv2 gives each (p4switch.tables.EntryHandles: the lowest free slot of the
    table, with the slot's version above bit 24); STF's index of a direct counter or
    meter is read by slot, as bmv2 reads it."""

    def __init__(self):
        self.named: dict[str, object] = {}
        self.handles: dict[int, dict[int, object]] = defaultdict(dict)
        self._slots: dict[int, EntryHandles] = defaultdict(EntryHandles)

    def add(self, entry, name: str | None) -> None:
        self.handles[entry.table_id][self._slots[entry.table_id].take()] = entry
        if name is not None:
            self.named[name] = entry

    def remove(self, name: str, where: str):
        if name not in self.named:
            raise ValueError(f"{where}: remove {name}: no entry of that name")
        entry = self.named.pop(name)
        book = self.handles[entry.table_id]
        handle = next(h for h, e in book.items() if e is entry)
        del book[handle]
        self._slots[entry.table_id].release(handle)
        return entry

    def by_handle(self, table_id: int, handle: int, where: str):
        current = self._slots[table_id].in_slot(handle)
        if current is None:
            raise ValueError(f"{where}: no entry with handle {handle} in that table")
        return self.handles[table_id][current]


def _meter_rates(conn, c, book: EntryBook):
    """`meter_set_rates METER INDEX CIR:CBURST PIR:PBURST` (rates per microsecond, as
    simple_switch_CLI takes them) as a P4Runtime MODIFY of the meter's config; on a
    direct meter the index is an entry handle."""
    from p4.v1 import p4runtime_pb2

    name, index, rates = c.args
    where = f"line {c.line}"
    if len(rates) != 2:
        raise ValueError(f"{where}: meter_set_rates needs two RATE:BURST pairs here")
    (cir, cburst), (pir, pburst) = rates
    config = p4runtime_pb2.MeterConfig(cir=round(cir * 1e6), cburst=cburst,
                                       pir=round(pir * 1e6), pburst=pburst)
    update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    proto = conn.p4info.proto
    direct = _direct(proto.direct_meters, name)
    if direct is not None:
        d = update.entity.direct_meter_entry
        d.table_entry.CopyFrom(book.by_handle(direct.direct_table_id, index, where))
        d.table_entry.ClearField("action")
        d.config.CopyFrom(config)
    else:
        m = update.entity.meter_entry
        m.meter_id = conn.p4info.id("meters", name)
        m.index.index = index
        m.config.CopyFrom(config)
    return update


def _direct(entries, name: str):
    """The P4Info entry of the direct counter or meter `name` (full name or alias)."""
    return next((d for d in entries if name in (d.preamble.name, d.preamble.alias)), None)


def _counter_writes(conn, c, book: EntryBook) -> list:
    """`counter_write COUNTER INDEX PACKETS BYTES` and `counter_reset COUNTER` as
    P4Runtime MODIFYs of the counter's data. On a direct counter the index is an entry
    handle and a reset writes zero into every entry the script has in the table; on an
    indexed counter a reset is one write with no index (every cell, P4Runtime's
    wildcard)."""
    from p4.v1 import p4runtime_pb2

    name, where = c.args[0], f"line {c.line}"
    packets, nbytes = (c.args[2], c.args[3]) if c.op == "counter_write" else (0, 0)
    data = p4runtime_pb2.CounterData(packet_count=packets, byte_count=nbytes)
    direct = _direct(conn.p4info.proto.direct_counters, name)
    if direct is not None:
        table = direct.direct_table_id
        entries = ([book.by_handle(table, c.args[1], where)] if c.op == "counter_write"
                   else list(book.handles[table].values()))
        updates = []
        for entry in entries:
            u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
            u.entity.direct_counter_entry.table_entry.CopyFrom(entry)
            u.entity.direct_counter_entry.table_entry.ClearField("action")
            u.entity.direct_counter_entry.data.CopyFrom(data)
            updates.append(u)
        return updates
    u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    u.entity.counter_entry.counter_id = conn.p4info.id("counters", name)
    if c.op == "counter_write":
        u.entity.counter_entry.index.index = c.args[1]
    u.entity.counter_entry.data.CopyFrom(data)
    return [u]


def apply_setup(conn, c, book: EntryBook | None = None) -> None:
    """One setup command as a P4Runtime write; `book` keeps the entries added."""
    from p4.v1 import p4runtime_pb2

    kind = type(c).__name__
    book = EntryBook() if book is None else book
    update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
    if kind == "AddEntry":
        update.entity.table_entry.CopyFrom(_entry(conn, c))
        book.add(update.entity.table_entry, c.handle)
    elif kind == "Control" and c.op == "remove_entry":
        update.type = p4runtime_pb2.Update.DELETE
        update.entity.table_entry.CopyFrom(book.remove(c.args[0], f"line {c.line}"))
    elif kind == "Control" and c.op == "meter_set_rates":
        update = _meter_rates(conn, c, book)
    elif kind == "Control" and c.op == "meter_get_rates":
        return  # a read: changes nothing
    elif kind == "Control" and c.op in ("counter_write", "counter_reset"):
        conn.write(_counter_writes(conn, c, book))
        return
    elif kind == "SetDefault":
        t = conn.p4info.table(c.table)
        update.type = p4runtime_pb2.Update.MODIFY
        te = update.entity.table_entry
        te.table_id = t.id
        te.is_default_action = True
        te.action.action.CopyFrom(conn.p4info.action_call(c.action.name,
                                                          dict(c.action.params)))
    elif kind == "McastGroup":
        mg = update.entity.packet_replication_engine_entry.multicast_group_entry
        mg.multicast_group_id = c.group
        for i, p in enumerate(c.ports):
            mg.replicas.add(egress_port=p, instance=i)
    elif (mirror := _mirror(c)) is not None:
        session, port = mirror
        cs = update.entity.packet_replication_engine_entry.clone_session_entry
        cs.session_id = session
        cs.replicas.add(egress_port=port, instance=0)
    elif kind == "Control" and c.op in ("wait", "no_packet"):
        return  # the packets are waited for anyway
    elif kind == "Control":  # a runtime CLI command with no P4Runtime stand-in here
        raise ValueError(f"line {c.line}: {c.op} is not supported over P4Runtime by this "
                         "harness (only mirroring_add, remove, meter_set_rates, counter_write and counter_reset)")
    else:
        raise ValueError(f"not a setup command: {c!r}")
    conn.write([update])


def remove_replication(conn, script) -> None:
    """DELETE the clone sessions and multicast groups the script made. Seen here: real
    simple_switch_grpc kept a clone session across the next pipeline push (the embedded
    switch clears them), so a switch shared by several scripts cloned the next script's
    packets to this one's port."""
    from p4.v1 import p4runtime_pb2

    updates = []
    for c in script.commands:
        kind = type(c).__name__
        u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE)
        pre = u.entity.packet_replication_engine_entry
        if (mirror := _mirror(c)) is not None:
            pre.clone_session_entry.session_id = mirror[0]
        elif kind == "McastGroup":
            pre.multicast_group_entry.multicast_group_id = c.group
        else:
            continue
        updates.append(u)
    for u in updates:
        try:
            conn.write([u])
        except Exception:  # noqa: BLE001 - already gone (the script's own failure)
            pass


# -- packets ---------------------------------------------------------------------------------
def stf_ports(script) -> list[int]:
    ports = set()
    for c in script.commands:
        kind = type(c).__name__
        if kind in ("Packet", "Expect"):
            ports.add(c.port)
        elif kind == "McastGroup":
            ports.update(c.ports)
        elif (mirror := _mirror(c)) is not None:
            ports.add(mirror[1])
    return sorted(ports)


def _collect(socks: dict[int, socket.socket], got: dict[int, list[bytes]],
             until: float, want: dict[int, int] | None,
             trace: list[dict[int, list[bytes]]] | None = None) -> None:
    """Read frames into `got` (and the last dict of `trace`) until `until`, or until
    every port has its `want`."""
    ep = select.epoll()
    fds = {s.fileno(): p for p, s in socks.items()}
    for fd in fds:
        ep.register(fd, select.EPOLLIN)
    try:
        while True:
            if want is not None and all(len(got[p]) >= n for p, n in want.items()):
                return
            left = until - time.monotonic()
            if left <= 0:
                return
            for fd, _ev in ep.poll(left):
                s = socks[fds[fd]]
                while True:
                    try:
                        frame = s.recv(65535)
                    except BlockingIOError:
                        break
                    got[fds[fd]].append(frame)
                    if trace:
                        trace[-1].setdefault(fds[fd], []).append(frame)
    finally:
        ep.close()


def _counter_cell(conn, c, book: EntryBook, where: str) -> tuple[int, int]:
    """(bytes, packets) of the cell `check_counter` names, read over P4Runtime: an
    index of an indexed counter, or an entry (by handle or `= NAME`) of a direct one."""
    from p4.v1 import p4runtime_pb2

    direct = _direct(conn.p4info.proto.direct_counters, c.counter)
    if direct is None:
        if c.entry is not None:
            raise ValueError(f"{where}: {c.counter} is not a direct counter")
        packets, nbytes = conn.read_counter(c.counter, c.index)
        return nbytes, packets
    if c.entry is not None:
        entry = book.named.get(c.entry.lstrip("$"))
        if entry is None or entry.table_id != direct.direct_table_id:
            raise ValueError(f"{where}: no entry named {c.entry} in the table "
                             f"{c.counter} counts")
    else:
        entry = book.by_handle(direct.direct_table_id, c.index, where)
    q = p4runtime_pb2.DirectCounterEntry()
    q.table_entry.CopyFrom(entry)
    q.table_entry.ClearField("action")
    # an entry with no match fields (every key a don't-care) reads as a wildcard: every
    # entry of its priority comes back, this one among them
    same = [f.direct_counter_entry.data for f in conn.read([p4runtime_pb2.Entity(
        direct_counter_entry=q)]) if _same_key(f.direct_counter_entry.table_entry, entry)]
    data = same[0] if same else p4runtime_pb2.CounterData()
    return data.byte_count, data.packet_count


def _same_key(a, b) -> bool:
    """Two TableEntries with the same match (in any field order) and priority."""
    def key(e):
        return sorted(m.SerializeToString(deterministic=True) for m in e.match), e.priority
    return key(a) == key(b)


def _check_counter(target: Target, conn, c, book: EntryBook, name: str,
                   padded: bool) -> tuple[str | None, int]:
    """`check_counter`'s verdict over P4Runtime, and the value read. A packet the
    switch drops leaves no frame to wait for, so a failing check is read again until
    the switch has had its wait time to count it. Once a packet went out padded to the
    Ethernet minimum, byte counts hold the padding the script's packet did not have:
    such a check has no verdict here (the value is still compared between switches)."""
    from p4switch.stf_check import check_counter

    where = f"{name}:{c.line}"
    until = time.monotonic() + target.wait_s
    while True:
        nbytes, packets = _counter_cell(conn, c, book, where)
        value = packets if c.what == "packets" else nbytes
        if padded and c.what == "bytes":
            return None, value
        msg = check_counter(c, nbytes, packets, name)
        if msg is None or time.monotonic() >= until:
            return msg, value
        time.sleep(0.05)


def run_stf(target: Target, conn, socks: dict[int, socket.socket], script,
            name: str, trace: list[dict[int, list[bytes]]] | None = None,
            program: dict | None = None, counters: list | None = None) -> list[str]:
    """Run the script's commands in order; return the mismatches (empty: pass), with
    check_counter read over P4Runtime.
    `trace`, if given, gets one dict per packet sent: port -> the frames that came out
    after it (before the next packet). `program` (the bmv2 JSON) lets the script use
    action profiles and selectors (stf_profiles_p4rt.py). `counters`, if given, gets
    (line, value) for every check_counter."""
    cmds = script.commands
    profiles = None
    if program is not None:
        from stf_profiles_p4rt import P4RuntimeProfiles

        profiles = P4RuntimeProfiles(conn, program)
    got: dict[int, list[bytes]] = defaultdict(list)
    errors: list[str] = []
    book = EntryBook()
    padded = False
    for i, c in enumerate(cmds):
        kind = type(c).__name__
        where = f"{name}:{c.line}"
        if profiles is not None and profiles.takes(c):
            profiles.apply(c, where, book)
        elif kind in ("AddEntry", "SetDefault", "McastGroup", "MirrorSession", "Control"):
            apply_setup(conn, c, book)
        elif kind == "Packet":
            want: dict[int, int] = defaultdict(int)
            for e in cmds[i + 1:]:
                if type(e).__name__ == "Packet":
                    break
                if type(e).__name__ == "Expect" and e.pattern is not None:
                    want[e.port] += 1
            for p in want:
                want[p] += len(got[p])
            if trace is not None:
                trace.append({})
            # a wire carries at least an Ethernet header (the kernel refuses a shorter
            # frame: EINVAL), so a script's short packet goes out zero-padded to the
            # Ethernet minimum, leaving room for headers the program removes
            padded |= len(c.data) < ETH_MIN_FRAME
            socks[c.port].send(c.data.ljust(ETH_MIN_FRAME, b"\0"))
            _collect(socks, got, time.monotonic() + target.wait_s, dict(want), trace)
        elif kind == "Expect":
            q = got[c.port]
            if c.pattern is None:
                _collect(socks, got, time.monotonic() + target.quiet_s, None, trace)
                if q:
                    errors.append(f"{where}: expected nothing more on port {c.port}, "
                                  f"got {q[0].hex()}")
                    q.clear()
            elif not q:
                errors.append(f"{where}: nothing came out of port {c.port}")
            else:
                data = q.pop(0)
                if not c.matches(data):
                    errors.append(f"{where}: port {c.port} got {data.hex()}, "
                                  f"expected {c.pattern}")
        elif kind == "CounterCheck":
            msg, value = _check_counter(target, conn, c, book, name, padded)
            if msg is not None:
                errors.append(msg)
            if counters is not None:
                counters.append((c.line, value))
    _collect(socks, got, time.monotonic() + target.quiet_s, None, trace)
    for p, q in got.items():
        if q:
            errors.append(f"{name}: unexpected frames on port {p}: {[d.hex() for d in q]}")
    return errors
