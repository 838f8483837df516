"""Veth pairs for root tests that need real interfaces: made by name, deleted by name."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@contextmanager
def veth_pairs(*pairs: tuple[str, str], up: bool = True) -> Iterator[None]:
    """Each (a, b) a veth pair (up unless told), deleted again after; skips without root.
    A pair left by an interrupted run of the same test is deleted first."""
    if os.geteuid() != 0:
        pytest.skip(f"needs root to create veths {', '.join('/'.join(p) for p in pairs)}")
    try:
        for a, b in pairs:
            subprocess.run(["ip", "link", "del", a], capture_output=True)
            ip("link", "add", a, "type", "veth", "peer", "name", b)
            if up:
                ip("link", "set", a, "up")
                ip("link", "set", b, "up")
        yield
    finally:
        for a, _b in pairs:
            subprocess.run(["ip", "link", "del", a], capture_output=True)
