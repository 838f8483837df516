"""The NIC's control channel: one command a line on a unix socket or stdin, one JSON reply a line."""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time


class ControlChannel:
    """Mixin of Nic: the control socket / stdin and the commands."""

    def command(self, line: str) -> dict:
        """Apply one control command; returns the reply (see the module doc)."""
        words = line.split()
        if not words:
            return {"ok": False, "error": "empty command"}
        cmd, args = words[0], words[1:]
        if cmd == "stall":
            self.stalled = True
            self._cancel(self._drain_entry)
            self._drain_entry = None
        elif cmd == "resume":
            self.stalled = False
            if self._buffered and self._drain_entry is None:
                self._next_drain = max(self._next_drain, time.monotonic_ns())
                self._drain_entry = self._at(self._next_drain, self._drain_slot)
        elif cmd == "pause_storm" and args in (["on"], ["off"]):
            self._cancel(self._storm_entry)
            self._storm_entry = None
            if args[0] == "on":
                self._storm()
            else:
                self._send_fc(self._pfc(self.cfg.storm_classes, 0))
        elif cmd == "drop_credits" and len(args) == 1 and args[0].isdigit():
            self.drop_credits += int(args[0])
        elif cmd == "drop_data" and len(args) == 1 and args[0].isdigit():
            self.drop_data += int(args[0])
        elif cmd == "stats":
            return {"ok": True, "stats": self.summary()}
        elif cmd == "stop":
            self.stop()
        else:
            return {"ok": False, "error": f"unknown command {line.strip()!r}; expected stall, "
                                          "resume, pause_storm on|off, drop_credits N, drop_data N, stats, "
                                          "stop"}
        return {"ok": True, "command": line.strip(), "t_ns": time.time_ns()}

    def _open_control(self, path: str) -> None:
        if os.path.exists(path):
            os.unlink(path)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(8)
        server.setblocking(False)
        self._control_server = server
        self._epoll.register(server.fileno(), select.EPOLLIN)

    def _accept_control(self) -> None:
        assert self._control_server is not None
        try:
            conn, _ = self._control_server.accept()
        except BlockingIOError:
            return
        conn.setblocking(False)
        self._control_conns[conn.fileno()] = (conn, bytearray())
        self._epoll.register(conn.fileno(), select.EPOLLIN)

    def _read_control(self, fd: int) -> None:
        conn, buf = self._control_conns[fd]
        try:
            data = conn.recv(4096)
        except BlockingIOError:
            return
        if not data:
            self._epoll.unregister(fd)
            del self._control_conns[fd]
            conn.close()
            return
        buf += data
        while b"\n" in buf:
            line, _, rest = bytes(buf).partition(b"\n")
            buf[:] = rest
            reply = self.command(line.decode(errors="replace"))
            try:
                conn.sendall(json.dumps(reply).encode() + b"\n")
            except OSError:
                pass

    def _read_stdin(self) -> None:
        try:
            data = os.read(sys.stdin.fileno(), 4096)
        except BlockingIOError:
            return
        if not data:
            self._epoll.unregister(sys.stdin.fileno())
            self._stdin = False
            return
        self._stdin_buf += data
        while b"\n" in self._stdin_buf:
            line, _, rest = bytes(self._stdin_buf).partition(b"\n")
            self._stdin_buf[:] = rest
            print(json.dumps(self.command(line.decode(errors="replace"))), flush=True)

