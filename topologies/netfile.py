"""Import of InfiniBand fabric descriptions: ibnetdiscover output and ibsim net-files.

Both formats list nodes (`Switch N "name"`, `Ca`/`Hca N "name"`) followed by
one line per connected port: `[port] "peer"[peer port]` (ibnetdiscover adds
port GUIDs in parentheses and comments after `#`). Nodes become `sN`/`hN` in
file order with their original name kept as the label; a CA's port p becomes
host port p-1, so a single-port HCA has port 0 like every generated host.
"""

from __future__ import annotations

import re
from pathlib import Path

from topologies.builder import FabricBuilder as _Builder
from topologies.builder import TopologyError
from topologies.description import Fabric, LinkParams

_NODE = re.compile(r'^(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"')
_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([^"]+)"\[(\d+)\]')
_GUID = re.compile(r'^(?:switchguid|caguid|sysimgguid)\s*=\s*0x([0-9a-fA-F]+)')
_NAME_GUID = re.compile(r'^[SH]-([0-9a-fA-F]{1,16})$')


class NetfileError(TopologyError):
    """A net-file that does not describe a consistent fabric; names file and line."""


def load_netfile(path: str, params: LinkParams) -> Fabric:
    file = Path(path)
    if not path or not file.is_file():
        raise NetfileError(f"netfile:{path}: no such file")
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise NetfileError(f"{path}: cannot read: {exc}") from None
    return parse_netfile(text, str(file), params)


def parse_netfile(text: str, origin: str, params: LinkParams) -> Fabric:
    nodes: dict[str, tuple[str, int, int | None, int]] = {}  # label -> kind, ports, guid, line
    wiring: dict[tuple[str, int], tuple[str, int, int]] = {}  # (label, port) -> peer, port, line
    current: str | None = None
    pending_guid: int | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if m := _GUID.match(line):
            pending_guid = int(m.group(1), 16)
            continue
        if m := _NODE.match(line):
            kind, nports, label = m.group(1), int(m.group(2)), m.group(3)
            if label in nodes:
                raise NetfileError(f"{origin}:{lineno}: node {label!r} declared twice "
                                   f"(first on line {nodes[label][3]})")
            guid = pending_guid
            if guid is None and (g := _NAME_GUID.match(label)):
                guid = int(g.group(1), 16)
            nodes[label] = ("switch" if kind == "Switch" else "host", nports, guid, lineno)
            current, pending_guid = label, None
            continue
        if line.startswith("["):
            m = _PORT.match(line)
            if not m:
                raise NetfileError(f"{origin}:{lineno}: expected '[port] \"peer\"[peer port]', "
                                   f"found {line!r}")
            if current is None:
                raise NetfileError(f"{origin}:{lineno}: port line before any node")
            port, peer, peer_port = int(m.group(1)), m.group(2), int(m.group(3))
            if port < 1 or port > nodes[current][1]:
                raise NetfileError(f"{origin}:{lineno}: port {port} of {current!r} is outside "
                                   f"1..{nodes[current][1]}")
            wiring[(current, port)] = (peer, peer_port, lineno)
            continue
        if "=" in line:  # vendid=, devid=, other attributes
            continue
        raise NetfileError(f"{origin}:{lineno}: not a node, port or attribute line: {line!r}")
    if not nodes:
        raise NetfileError(f"{origin}: no Switch or Ca/Hca nodes found")

    links: set[tuple[tuple[str, int], tuple[str, int]]] = set()
    for (label, port), (peer, peer_port, lineno) in wiring.items():
        if peer not in nodes:
            raise NetfileError(f"{origin}:{lineno}: {label!r} port {port} is wired to "
                               f"{peer!r}, which is not declared")
        back = wiring.get((peer, peer_port))
        if back is not None and back[:2] != (label, port):
            raise NetfileError(f"{origin}:{lineno}: {label!r}[{port}] says it reaches "
                               f"{peer!r}[{peer_port}], but line {back[2]} says that port "
                               f"reaches {back[0]!r}[{back[1]}]")
        links.add(tuple(sorted(((label, port), (peer, peer_port)))))

    b = _Builder(f"netfile:{Path(origin).name}", params)
    names: dict[str, str] = {}
    for label, (kind, _nports, guid, _line) in nodes.items():
        names[label] = b.add_switch(guid=guid, label=label) if kind == "switch" else b.add_host(
            guid=guid, label=label)
    for (a, pa), (z, pz) in sorted(links):
        b.add_link(names[a], names[z], _port(nodes[a][0], pa), _port(nodes[z][0], pz))
    return b.fabric()


def _port(kind: str, port: int) -> int:
    return port - 1 if kind == "host" else port
