"""The live view's web server: the page, its assets, and the JSON it polls.

Bound to 127.0.0.1 only (the fabric's state is not for the network). Routes:

    GET /                      the page (static/index.html)
    GET /data.js               tells the page it is live: window.FABRICLAB_VIEW = {mode: "live"}
    GET /liveview.js, /liveview.css, /vendor/...   the page's assets (served from the package)
    GET /api/fabric            nodes and links as drawn (model.fabric_json)
    GET /api/snapshot          the latest snapshot ({"seq": 0} before the first)
    GET /api/events?since=N    {"events": [numbered above N], "last": M}

Nothing is fetched from elsewhere: the page works without internet.
"""

from __future__ import annotations

import json
import mimetypes
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from controller.liveview.state import LiveState

STATIC = Path(__file__).resolve().parent / "static"
BIND = "127.0.0.1"
LIVE_DATA = b"window.FABRICLAB_VIEW = {\"mode\": \"live\"};\n"


class WebError(OSError):
    """The view's port could not be bound."""


def static_file(path: str) -> Path | None:
    """The packaged asset a URL path names, or None (nothing outside static/)."""
    relative = path.lstrip("/") or "index.html"
    candidate = (STATIC / relative).resolve()
    if STATIC not in candidate.parents or not candidate.is_file():
        return None
    return candidate


def _handler(state: LiveState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "fabriclab-liveview"

        def log_message(self, format, *args) -> None:  # noqa: A002 -- the base's signature
            pass  # one request per second per page: not worth a log line

        def _send(self, body: bytes, content_type: str,
                  status: HTTPStatus = HTTPStatus.OK) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, data) -> None:
            self._send(json.dumps(data).encode(), "application/json")

        def do_GET(self) -> None:  # noqa: N802 -- http.server's name
            url = urlparse(self.path)
            if url.path == "/api/fabric":
                return self._json(state.fabric)
            if url.path == "/api/snapshot":
                return self._json(state.snapshot() or {"seq": 0})
            if url.path == "/api/events":
                try:
                    since = int(parse_qs(url.query).get("since", ["0"])[0])
                except ValueError:
                    return self._send(b"since: expected a number", "text/plain",
                                      HTTPStatus.BAD_REQUEST)
                events, last = state.events_since(since)
                return self._json({"events": events, "last": last})
            if url.path == "/data.js":
                return self._send(LIVE_DATA, "text/javascript")
            found = static_file(url.path)
            if found is None:
                return self._send(b"not found", "text/plain", HTTPStatus.NOT_FOUND)
            kind = mimetypes.guess_type(found.name)[0] or "application/octet-stream"
            return self._send(found.read_bytes(), kind)

    return Handler


class WebServer:
    """The HTTP server on BIND:port (0: a free port), in its own thread."""

    def __init__(self, state: LiveState, port: int) -> None:
        try:
            self.httpd = ThreadingHTTPServer((BIND, port), _handler(state))
        except OSError as exc:
            raise WebError(f"live view: cannot listen on {BIND}:{port}: {exc.strerror or exc}") \
                from None
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://{BIND}:{self.port}/"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True,
                                        name="liveview-web")

    def start(self) -> WebServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)
