"""p4runtime-shell, a real P4Runtime client, against `fabriclab-switch` running
fabric.p4 from the embedded compiler: pipeline push, table write, read back."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

REPO = __file__.rsplit("/tests/", 1)[0]


def test_p4runtime_shell_pushes_fabric_and_writes_a_route(tmp_path):
    sh = pytest.importorskip("p4runtime_sh.shell")
    r = subprocess.run([sys.executable, "-m", "p4compiler.cli", "--target", "bmv2", "--arch",
                        "v1model", "-o", str(tmp_path), f"{REPO}/p4src/fabric.p4"],
                       capture_output=True, text=True, cwd=REPO)
    if r.returncode != 0:
        pytest.skip(f"embedded compiler cannot compile fabric.p4: {r.stderr.strip()[:200]}")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    switch = subprocess.Popen([sys.executable, "-m", "p4switch.cli", "--no-p4", "--cpu-port",
                               "510", "--device-id", "1", "--grpc-server-addr",
                               f"127.0.0.1:{port}"], stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert "running" in switch.stderr.readline()
        sh.setup(device_id=1, grpc_addr=f"127.0.0.1:{port}", election_id=(0, 1),
                 config=sh.FwdPipeConfig(str(tmp_path / "fabric.p4info.txtpb"),
                                         str(tmp_path / "fabric.json")))
        try:
            te = sh.TableEntry("FabricIngress.dlid_route")(action="FabricIngress.forward")
            te.match["hdr.lrh.dlid"] = "0x42"
            te.action["port"] = "3"
            te.insert()
            entries = list(sh.TableEntry("FabricIngress.dlid_route").read())
            assert len(entries) == 1
            assert entries[0].match["hdr.lrh.dlid"].exact.value == b"\x42"
        finally:
            sh.teardown()
    finally:
        switch.terminate()
        assert switch.wait(timeout=5) == 0
