"""A link's one identity (`topologies.description.Link`) and its spellings at the edges.

Inside the project a link is the description's `Link`. Text meets it in three
spellings, each converted here and nowhere else:

* `s1-s2`: the two nodes (a scenario's fault target, a report's label);
* `s1:2-s2:1`: both ends with their ports (the SM's timeline);
* `s1-eth2`: one end's interface (scenarios, reports).

On the machine an interface carries its run's prefix (`fk3-s1-eth2`,
`kernel_interface`), so two runs never share a name; every spelling above
stays prefix-free.
"""

from __future__ import annotations

from topologies.description import Fabric, Link, NodeKind


class LinkNameError(ValueError):
    """A link spelling that names no link of the fabric."""


def node_pair(link: Link) -> str:
    """`a-b`: the two nodes a link joins."""
    return f"{link.a}-{link.b}"


def port_pair(link: Link) -> str:
    """`a:pa-b:pb`: both ends with their ports."""
    return f"{link.a}:{link.a_port}-{link.b}:{link.b_port}"


def interface(node: str, port: int) -> str:
    """The Mininet interface of a node's port (`s1-eth2`; a host's only port is eth0)."""
    return f"{node}-eth{port}"


def interfaces(link: Link) -> tuple[str, str]:
    return interface(link.a, link.a_port), interface(link.b, link.b_port)


IFNAMSIZ = 15  # Linux interface names: at most 15 characters


def kernel_interface(prefix: str, node: str, port: int) -> str:
    """The interface as the machine names it: the run's prefix + `s1-eth2`."""
    name = prefix + interface(node, port)
    if len(name) > IFNAMSIZ:
        raise LinkNameError(f"interface {name!r} is {len(name)} characters; Linux allows "
                            f"{IFNAMSIZ} (run prefix {prefix!r}, node {node!r}, port {port})")
    return name


def kernel_interfaces(prefix: str, link: Link) -> tuple[str, str]:
    return (kernel_interface(prefix, link.a, link.a_port),
            kernel_interface(prefix, link.b, link.b_port))


def same_link(a: str, b: str) -> bool:
    """Whether two `x-y` spellings join the same two nodes (in either direction)."""
    return set(a.split("-")) == set(b.split("-"))


def find(fabric: Fabric, name: str) -> Link:
    """The link a spelling names: `a-b`, `a:pa-b:pb` or one end's interface `a-ethN`."""
    left, sep, right = name.partition("-")
    if not sep:
        raise LinkNameError(f"link {name!r}: expected `a-b`, `a:port-b:port` or `node-ethN`")
    if right.startswith("eth") and right[3:].isdigit():
        return _by_end(fabric, left, int(right[3:]), name)
    if ":" in left or ":" in right:
        (a, _, pa), (b, _, pb) = left.partition(":"), right.partition(":")
        if not (pa.isdigit() and pb.isdigit()):
            raise LinkNameError(f"link {name!r}: ports must be numbers (`s1:2-s2:1`)")
        for link in fabric.links:
            if {(link.a, link.a_port), (link.b, link.b_port)} == {(a, int(pa)), (b, int(pb))}:
                return link
        raise LinkNameError(f"link {name!r}: no such link in {fabric.name}")
    for node in (left, right):
        _node(fabric, node, name)
    for link in fabric.links:
        if {link.a, link.b} == {left, right}:
            return link
    raise LinkNameError(f"link {name!r}: no link between {left} and {right} in {fabric.name}")


def _by_end(fabric: Fabric, node: str, port: int, name: str) -> Link:
    _node(fabric, node, name)
    for link in fabric.links_of(node):
        if link.endpoint(node)[0] == port:
            return link
    raise LinkNameError(f"link {name!r}: port {port} of {node} is not wired in {fabric.name}")


def _node(fabric: Fabric, node: str, name: str) -> None:
    try:
        fabric.node(node)
    except KeyError:
        raise LinkNameError(f"link {name!r}: {fabric.name} has no node {node!r}") from None


def is_switch(fabric: Fabric, node: str) -> bool:
    """A node's kind, from the description (never guessed from its name)."""
    try:
        return fabric.node(node).kind is NodeKind.SWITCH
    except KeyError:
        return False
