"""A stand-in for the Vertex AI evaluation service on 127.0.0.1, speaking its wire.

ADK's ``safety_v1``, ``response_evaluation_score`` and ``multi_turn_*`` evaluators post
``{version}/[projects/P/locations/L/]:evaluateInstances`` through the ``agentplatform``
client: a JSON body with ``metrics`` (``[{"predefined_metric_spec": {"metric_spec_name":
...}}]``) and ``instance`` (``prompt``/``response``/``reference`` contents, or
``agent_eval_data`` turns), authenticated by ``x-goog-api-key`` or a bearer token. The
service answers ``{"metricResults": [{"score", "explanation", "rubricVerdicts"}]}``, or a
Google error envelope. :func:`pointing_evaluation_clients_at` makes the ``agentplatform``
client (which reads no base-URL variable) send its calls here, as a DNS entry would.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["StandinEvaluationService", "pointing_evaluation_clients_at"]


class StandinEvaluationService:
    """The evaluation service on 127.0.0.1:0; ``requests`` holds each body it was sent.

    ``scores`` maps a metric spec name to the score it answers (default 1.0).
    """

    def __init__(self, scores: dict[str, float] | None = None) -> None:
        self.scores = dict(scores or {})
        self.requests: list[dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                authorized = self.headers.get("x-goog-api-key") or self.headers.get("authorization")
                if not self.path.endswith(":evaluateInstances"):
                    self._send(404, _error(404, f"no method {self.path}", "NOT_FOUND"))
                elif not authorized:
                    self._send(401, _error(401, "no credentials", "UNAUTHENTICATED"))
                else:
                    service.requests.append(body)
                    self._send(200, service.answer(body))

            def _send(self, status: int, document: dict[str, Any]) -> None:
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json; charset=UTF-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The ``EvaluateInstancesResponse`` for one request: one result per metric."""
        results = []
        for metric in body.get("metrics") or []:
            name = metric["predefined_metric_spec"]["metric_spec_name"]
            result: dict[str, Any] = {
                "score": self.scores.get(name, 1.0),
                "explanation": f"{name}: judged by the stand-in",
            }
            if name.startswith("multi_turn"):
                turns = body["instance"]["agent_eval_data"]["turns"]
                result["rubricVerdicts"] = [
                    {
                        "evaluatedRubric": {"content": {"property": {"description": "answered"}}},
                        "verdict": True,
                        "reasoning": f"{len(turns)} turn(s) read",
                    }
                ]
            results.append(result)
        return {"metricResults": results}

    @property
    def asked(self) -> list[str]:
        """The metric spec name of each call received, in order."""
        return [
            metric["predefined_metric_spec"]["metric_spec_name"]
            for body in self.requests
            for metric in body.get("metrics") or []
        ]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> StandinEvaluationService:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and free the port (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


def _error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


@contextlib.contextmanager
def pointing_evaluation_clients_at(monkeypatch: pytest.MonkeyPatch, url: str) -> Iterator[None]:
    """New ``agentplatform`` clients send to ``url`` (for the block): the address the
    service has in this test, as a DNS entry would give it."""
    from agentplatform._genai import client as platform

    original = platform.Client.__init__

    def __init__(self: Any, **kwargs: Any) -> None:
        kwargs["http_options"] = {"base_url": url + "/"}
        original(self, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(platform.Client, "__init__", __init__)
        yield
