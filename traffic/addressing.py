"""A NIC's addresses: the workload names its peers, the subnet's address book says how to
reach them.

A FLOWS.json written for the SA (`"addresses": "sa"`) names hosts, never addresses:

    {"name": "h1", "addresses": "sa", "sl": 0,
     "flows": [{"flow": 1001, "dst": "h2", ...,  "after": [[1, 0, "h4"]]}],
     "recvs": [{"coll_id": 1, "step": 0, "src": "h4", "frames": 2}]}

At start the NIC asks the SM's Subnet Administrator (controller/sa.py) over its own
port for the path to itself (its LID) and to every host the workload names
(`sa_lookup`, traffic/sa_client.py); `resolve` then puts the answers in: a flow's
`dlid`, `dst_mac` and, unless the flow chose one, the SL of the path; a receive's and
an `after`'s source LID; `sl_of_lid` (the SL of the ACKs to each peer); the NIC's
own `lid`. A flow that already carries a `dlid` is left as written (a frame that
bypasses the address book on purpose: an unknown DLID, a cross-partition intruder).

Where no SM serves an SA (the bring-up's stress rounds, NICs on a bare bridge in
tests), the FLOWS.json carries the addresses itself (`lid`, each flow's `dlid` and
`dst_mac`, each receive's `slid`): traffic.collectives.rank_flows makes it with the
same `resolve`, from an address book given to it.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

SA_ADDRESSES = "sa"


class AddressError(Exception):
    """The NIC could not learn an address it needs: says which and why."""


@dataclass(frozen=True)
class Peer:
    """What the address book says of one host: how to reach it."""

    name: str
    lid: int
    mac: str | None
    sl: int | None = None  # SL of paths to it (None: the workload's own)


# names -> (own LID, {name: Peer}); raises AddressError
Lookup = Callable[[str, Iterable[str]], tuple[int, dict[str, Peer]]]


def wants_sa(data: Mapping) -> bool:
    return data.get("addresses") == SA_ADDRESSES


def names_in(data: Mapping) -> list[str]:
    """Every host the workload names (its flows' destinations, its receives' and waits'
    sources), sorted."""
    names = {f["dst"] for f in data.get("flows", ()) if "dst" in f and "dlid" not in f}
    names |= {r["src"] for r in data.get("recvs", ()) if "src" in r}
    for f in data.get("flows", ()):
        names |= {a[2] for a in f.get("after", ()) if isinstance(a[2], str)}
    return sorted(names)


def resolve(data: Mapping, own_lid: int, peers: Mapping[str, Peer]) -> dict:
    """`data` (a FLOWS.json naming hosts) with the addresses filled in, as the NIC reads it."""
    default_sl = int(data.get("sl", 0))

    def peer(name: str, what: str) -> Peer:
        try:
            return peers[name]
        except KeyError:
            raise AddressError(f"{data.get('name', 'NIC')}: {what} names host {name!r}, "
                               "which the address book does not have") from None

    def sl_of(p: Peer) -> int:
        return default_sl if p.sl is None else p.sl

    out = {k: v for k, v in data.items() if k not in ("addresses", "sl", "peer_sl")}
    out["lid"] = own_lid
    flows = []
    for f in data.get("flows", ()):
        f = dict(f)
        if "dlid" not in f and "dst" in f:
            dst = peer(f["dst"], f"flow {f.get('flow')}")
            if dst.mac is None:
                raise AddressError(f"{data.get('name', 'NIC')}: no MAC for host {dst.name}")
            f.update(dlid=dst.lid, dst_mac=dst.mac)
            f.setdefault("sl", sl_of(dst))
        f.pop("dst", None)
        f["after"] = [[c, s, peer(src, f"flow {f.get('flow')}'s wait").lid
                       if isinstance(src, str) else src] for c, s, src in f.get("after", ())]
        flows.append(f)
    out["flows"] = flows
    recvs = []
    for r in data.get("recvs", ()):
        r = dict(r)
        if "src" in r:
            r["slid"] = peer(r.pop("src"), f"receive {r.get('coll_id')}/{r.get('step')}").lid
        recvs.append(r)
    out["recvs"] = recvs
    peer_sl = data.get("peer_sl", {})  # the ACKs' SL to a peer, where the workload sets it
    sl_of_lid = {str(p.lid): int(peer_sl.get(p.name, sl_of(p))) for p in peers.values()}
    sl_of_lid.update(data.get("sl_of_lid", {}))
    out["sl_of_lid"] = sl_of_lid
    return out


def sa_lookup(iface: str, src_mac: str, timeout: float = 1.0, retries: int = 5,
              open_socket: Callable[[str], socket.socket] | None = None) -> Lookup:
    """A lookup that asks the SA over `iface` (traffic/sa_client.py): first the path to
    this host itself (its LID), then to every name. `open_socket(iface)`: the packet
    socket to ask on (default: traffic.sa_client.open_sa_socket)."""
    from traffic.sa_client import SaError, SaTimeout, open_sa_socket, query_path

    def lookup(own: str, names: Iterable[str]) -> tuple[int, dict[str, Peer]]:
        try:
            sock = (open_socket or open_sa_socket)(iface)
        except OSError as exc:
            raise AddressError(f"{own}: cannot open {iface} to ask the SA: {exc}") from None
        try:
            me = query_path(sock, src_mac, 0, own, timeout, retries)
            if me.slid and me.slid != me.dlid:
                raise AddressError(f"{own}: the SA knows {iface}'s port as LID {me.slid} "
                                   f"but {own} as LID {me.dlid} (a NIC on another host's port?)")
            peers = {}
            for name in names:
                r = query_path(sock, src_mac, me.dlid, name, timeout, retries)
                peers[name] = Peer(name, r.dlid, r.dmac, r.sl)
            return me.dlid, peers
        except SaTimeout as exc:
            raise AddressError(
                f"{own}: the subnet administrator did not answer on {iface} ({exc}); "
                "is the SM serving the SA (SubnetManager.serve_sa)?") from None
        except SaError as exc:
            raise AddressError(f"{own}: {exc}") from None
        finally:
            sock.close()
    return lookup
