"""A tool's HTTP API on 127.0.0.1 that counts the connections it accepts.

Replay must never reach it: a test records through it, then asserts that a replay opened
no connection at all. Routes:

- ``GET /rates?to=USD`` -> ``{"to": "USD", "rate": 1.1}``
- ``POST /orders`` (JSON ``{"item": ..., "count": N}``) -> ``{"order": "item x N"}``
- ``GET /redirect`` -> 302 to ``/rates?to=GBP``
- ``GET /gzip`` -> a gzip-encoded JSON body
- ``GET /openapi.json`` -> an OpenAPI 3 spec whose one operation is ``GET /rates``
- ``GET /events`` -> an event stream that sends one event and never ends
"""

from __future__ import annotations

import gzip
import http.server
import json
import threading
import time
from urllib.parse import parse_qs, urlsplit

__all__ = ["CountingToolApi", "openapi_spec"]

RATES = {"USD": 1.1, "GBP": 0.85, "JPY": 160.0}


def openapi_spec(base_url: str) -> dict[str, object]:
    """The rates API as an OpenAPI 3 document served from ``base_url``."""
    return {
        "openapi": "3.0.0",
        "info": {"title": "Rates", "version": "1.0"},
        "servers": [{"url": base_url}],
        "paths": {
            "/rates": {
                "get": {
                    "operationId": "get_rate",
                    "summary": "The EUR exchange rate to a currency.",
                    "parameters": [
                        {
                            "name": "to",
                            "in": "query",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": {"200": {"description": "the rate"}},
                }
            }
        },
    }


class CountingToolApi:
    """The server; ``connections`` counts accepted connections, ``url`` is its base URL."""

    def __init__(self) -> None:  # noqa: C901
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status: int, body: bytes, **headers: str) -> None:
                self.send_response(status)
                for name, value in {"content-type": "application/json", **headers}.items():
                    self.send_header(name.replace("_", "-"), value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server's hook name
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if parts.path == "/rates":
                    to = query.get("to", "USD")
                    payload = {"to": to, "rate": RATES.get(to, 1.0)}
                    self._send(200, json.dumps(payload).encode())
                elif parts.path == "/redirect":
                    self._send(302, b"", location="/rates?to=GBP")
                elif parts.path == "/gzip":
                    body = gzip.compress(json.dumps({"zipped": True}).encode())
                    self._send(200, body, content_encoding="gzip")
                elif parts.path == "/openapi.json":
                    self._send(200, json.dumps(openapi_spec(api.url)).encode())
                elif parts.path == "/events":
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    self.wfile.write(b"data: hello\n\n")
                    self.wfile.flush()
                    while not api.stopping.is_set():  # a stream that never ends
                        time.sleep(0.05)
                else:
                    self._send(404, b'{"error": "no such route"}')

            def do_POST(self) -> None:  # noqa: N802 - http.server's hook name
                length = int(self.headers.get("content-length") or 0)
                order = json.loads(self.rfile.read(length) or b"{}")
                payload = {"order": f"{order.get('item')} x {order.get('count')}"}
                self._send(201, json.dumps(payload).encode())

            def log_message(self, *args: object) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def verify_request(self, request: object, client_address: object) -> bool:
                api.connections += 1
                return True

        self.connections = 0
        self.stopping = threading.Event()
        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
