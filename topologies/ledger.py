"""A run's ledger: every process and interface an emulation run creates.

Teardown removes exactly what the ledger lists, by PID and by interface name,
never by process name. The ledger is a file on disk, so a run that was killed
(SIGKILL, a crashed test) is cleaned up by the next run or by `make cleanup`.
A recorded PID is only signalled while its start time (field 22 of
/proc/PID/stat, which exec does not change) still matches what was recorded,
so a PID reused by someone else's process is left alone.

Every ledger also owns the run's name prefix (`fk3-`): every machine-wide name
the run makes (switch interfaces, namespaces) starts with it, so two runs on
one machine never reach for the same name, and a prefix is never handed out
while a ledger in the directory or an interface or namespace of the machine
still uses it.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

# Emulations use machine-wide names (Mininet's s1-eth1, test veths, namespaces): the
# Mininet/netns tests (tests/conftest.py) and the benchmarks that emulate
# (bench/switchover.py) take this lock, so two checkouts on one machine take turns.
EMULATION_LOCK = Path(os.environ.get("FABRICLAB_EMULATION_LOCK",
                                     "/tmp/fabriclab-emulation.lock"))


@contextmanager
def emulation_lock() -> Iterator[None]:
    """Hold the machine-wide emulation lock (blocking until it is free)."""
    with open(EMULATION_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

DEFAULT_DIR = Path(os.environ.get("FABRICLAB_LEDGER_DIR", Path.cwd() / "build" / "ledger"))
_TAG_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
# `f` + two base-36 characters + `-`: 4 of an interface name's 15 characters. The
# trailing `-` keeps `fk3-s1-eth2` reading as node s1, port 2 to anything that
# parses `node-ethP` out of a name.
PREFIX_LENGTH = 4
PREFIX_PATTERN = re.compile(r"f[0-9a-z]{2}-")


def prefixed_names() -> set[str]:
    """Interfaces here and named namespaces of the machine that carry a run prefix."""
    return {n for n in _names_in_use() if PREFIX_PATTERN.match(n)}


def _cmdline(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _interface_exists(name: str) -> bool:
    return Path("/sys/class/net", name).exists()


def delete_interface(name: str) -> None:
    """Delete an interface (and its veth peer) by name, if it exists."""
    if _interface_exists(name):
        subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)


def _names_in_use() -> list[str]:
    """Interface names of this namespace and named network namespaces of the machine."""
    names = [p.name for p in Path("/sys/class/net").iterdir()]
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                             check=False)
    names += [line.split()[0] for line in listing.stdout.splitlines() if line.strip()]
    return names


def _claim(directory: Path, run_id: str) -> Path:
    """A ledger file of its own for this run, created empty: `<run_id>.json`, or
    `<run_id>-2.json` ... when another run took that name (two runs of one scenario
    started in the same second, with different results directories)."""
    for n in range(1, 1000):
        path = directory / (f"{run_id}.json" if n == 1 else f"{run_id}-{n}.json")
        try:
            with open(path, "x"):
                return path
        except FileExistsError:
            continue
    raise RuntimeError(f"no free ledger name for {run_id} in {directory}")


def allocate_prefix(directory: Path, rng: random.Random | None = None) -> str:
    """A run prefix (`fk3-`) no ledger in `directory` holds and no interface or
    namespace on this machine starts with."""
    rng = rng or random.Random()
    taken = set()
    for path in Path(directory).glob("*.json"):
        try:
            taken.add(json.loads(path.read_text()).get("prefix", ""))
        except (OSError, ValueError):
            continue
    in_use = _names_in_use()
    for _ in range(200):
        prefix = "f" + "".join(rng.choice(_TAG_ALPHABET) for _ in range(2)) + "-"
        if prefix not in taken and not any(n.startswith(prefix) for n in in_use):
            return prefix
    raise RuntimeError(f"no free run prefix: {len(taken)} ledgers in {directory}; "
                       "`fabriclab cleanup` removes those of interrupted runs")


def namespace_exists(name: str) -> bool:
    return Path("/run/netns", name).exists()


def delete_namespace(name: str) -> bool:
    """`ip netns del` by name, if it exists; True once it is gone."""
    if namespace_exists(name):
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
    return not namespace_exists(name)


def stop_pid(pid: int, expected_start: int | None = None, timeout: float = 3.0) -> bool:
    """SIGTERM, then SIGKILL after `timeout`. Returns True if the process is gone."""
    current = start_time(pid)
    if current is None:
        return True
    if expected_start is not None and current != expected_start:
        return True  # the PID now belongs to someone else: not ours
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _reap_or_gone(pid):
            return True
        time.sleep(0.02)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    for _ in range(100):
        if _reap_or_gone(pid):
            return True
        time.sleep(0.02)
    return False


def _reap_or_gone(pid: int) -> bool:
    try:
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done:
            return True
    except ChildProcessError:
        pass  # not our child: look at /proc instead
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state == "Z"


@dataclass
class Ledger:
    """What one run created. Saved after every change."""

    path: Path
    processes: list[dict] = field(default_factory=list)  # {"pid", "start", "cmdline", "what"}
    interfaces: list[str] = field(default_factory=list)
    owner: dict = field(default_factory=dict)  # {"pid", "start"} of the run that writes it
    prefix: str = ""  # the run's name prefix (`fk3-`), see allocate_prefix
    namespaces: list[str] = field(default_factory=list)  # named netns (`fk3-srv1`)
    directories: list[str] = field(default_factory=list)  # private files (servers' keys)
    # Supervised servers: {"server", "cleanup": argv} run first at teardown (over SSH:
    # the server's supervisor ledger stops what was started there, by PID).
    remote: list[dict] = field(default_factory=list)

    @classmethod
    def create(cls, run_id: str, directory: Path | None = None) -> Ledger:
        directory = Path(directory or DEFAULT_DIR)
        directory.mkdir(parents=True, exist_ok=True)
        ledger = cls(_claim(directory, run_id),
                     owner={"pid": os.getpid(), "start": start_time(os.getpid())},
                     prefix=allocate_prefix(directory))
        ledger.save()
        return ledger

    @classmethod
    def load(cls, path: Path) -> Ledger:
        data = json.loads(Path(path).read_text())
        return cls(Path(path), data.get("processes", []), data.get("interfaces", []),
                   data.get("owner", {}), data.get("prefix", ""), data.get("namespaces", []),
                   data.get("directories", []), data.get("remote", []))

    def save(self) -> None:
        tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"owner": self.owner, "prefix": self.prefix,
                                   "processes": self.processes,
                                   "interfaces": self.interfaces,
                                   "namespaces": self.namespaces,
                                   "directories": self.directories,
                                   "remote": self.remote}))
        os.replace(tmp, self.path)

    def add_process(self, pid: int, what: str) -> None:
        self.processes.append({"pid": pid, "start": start_time(pid), "cmdline": _cmdline(pid),
                               "what": what})
        self.save()

    def add_interfaces(self, names: list[str]) -> None:
        self.interfaces.extend(n for n in names if n not in self.interfaces)
        self.save()

    def add_namespace(self, name: str) -> None:
        """A named network namespace the run made (a namespace "server")."""
        if name not in self.namespaces:
            self.namespaces.append(name)
            self.save()

    def add_directory(self, path: Path) -> None:
        """A private directory the run made (keys, sshd files): removed at teardown."""
        self.directories.append(str(path))
        self.save()

    def add_remote(self, server: str, cleanup: list[str]) -> None:
        """A supervised server: `cleanup` (an ssh command line) finishes its side."""
        self.remote.append({"server": server, "cleanup": cleanup})
        self.save()

    def owner_alive(self) -> bool:
        """True while the run that writes this ledger is still running."""
        pid = self.owner.get("pid")
        return bool(pid) and pid != os.getpid() and start_time(pid) == self.owner.get("start")

    def teardown(self) -> list[str]:
        """Stop every recorded process, delete every recorded interface, remove the file.

        Returns what could not be removed (empty when all is gone)."""
        leftovers: list[str] = []
        for entry in self.remote:  # first: namespace servers' sshd must still answer
            leftovers += _remote_cleanup(entry)
        for proc in reversed(self.processes):
            if not stop_pid(proc["pid"], proc.get("start")):
                leftovers.append(f"process {proc['pid']} ({proc['what']})")
        for name in self.interfaces:
            delete_interface(name)
            if _interface_exists(name):
                leftovers.append(f"interface {name}")
        for name in reversed(self.namespaces):
            # Its processes were stopped above; its interfaces (veths, VXLAN) go with it.
            if not delete_namespace(name):
                leftovers.append(f"namespace {name}")
        for directory in self.directories:
            shutil.rmtree(directory, ignore_errors=True)
            if Path(directory).exists():
                leftovers.append(f"directory {directory}")
        if not leftovers:
            self.path.unlink(missing_ok=True)
        return leftovers


def _remote_cleanup(entry: dict) -> list[str]:
    """Run a supervised server's cleanup over SSH; what it reports left there."""
    try:
        done = subprocess.run(entry["cleanup"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [f"server {entry['server']}: cleanup failed ({exc})"]
    try:
        left = json.loads(done.stdout.strip().splitlines()[-1])["left"]
    except (ValueError, IndexError, KeyError, TypeError):
        # An unreachable server: its supervisor stopped everything at the session's EOF
        # unless the server went away with it; say so rather than guess.
        return [f"server {entry['server']}: cleanup over SSH failed "
                f"({(done.stderr or done.stdout).strip()[:200] or done.returncode})"]
    return [f"server {entry['server']}: {x}" for x in left]


def cleanup_stale(directory: Path | None = None) -> list[str]:
    """Tear down every ledger left in `directory` by runs that did not finish
    (their owner process is gone); a run still going is left alone.

    Returns a line per ledger cleaned, for the user."""
    directory = Path(directory or DEFAULT_DIR)
    report: list[str] = []
    if not directory.is_dir():
        return report
    for path in sorted(directory.glob("*.json")):
        try:
            ledger = Ledger.load(path)
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        if ledger.owner_alive():
            continue
        leftovers = ledger.teardown()
        what = f"{len(ledger.processes)} processes, {len(ledger.interfaces)} interfaces"
        if ledger.namespaces:
            what += f", {len(ledger.namespaces)} namespaces"
        if leftovers:
            report.append(f"{path.stem}: could not remove {', '.join(leftovers)}")
        else:
            report.append(f"{path.stem}: removed {what}")
    return report
