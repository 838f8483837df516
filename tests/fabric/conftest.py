"""fabric.p4 compiled once by the embedded compiler; a switch running it per test."""

from __future__ import annotations

import pytest
from fabric_harness import FABRIC_P4, Fabric


@pytest.fixture(scope="session")
def compiled():
    """(bmv2 JSON, P4Info) of p4src/fabric.p4, or a skip saying why there are none."""
    try:
        from p4compiler.compiler import compile_file
    except ImportError as e:
        pytest.skip(f"embedded compiler not available: {e}")
    result = compile_file(str(FABRIC_P4))
    return result.json, result.p4info


@pytest.fixture
def fabric(compiled):
    return Fabric(compiled[0])
