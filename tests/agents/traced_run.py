"""Run an ADK agent with the real OpenTelemetry SDK and write its trace to a file.

Run in a child process (the SDK's providers are process-wide)::

    python -m tests.agents.traced_run OUT STANDIN_URL SESSIONS_JSON [--hex|--dev-server]

SESSIONS_JSON is a list of sessions, each a list of user turns. The agent runs under ADK's
Runner and its spans and log records go through the real OTLP encoder (``encode_spans``,
``encode_logs``, protobuf's ``MessageToDict``) to OUT, one request per line. ``--hex``
writes ids in hex, as the Collector's file exporter does (``MessageToDict`` writes bytes
in base64). ``--dev-server`` runs the agent in ADK's dev server instead (``adk web``'s
FastAPI app, driven through ``/run``) and writes what
``GET /dev/apps/travel/debug/trace/session/{id}`` answers for the first session.

The telemetry schema and content capture come from the environment, as in production
(``ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN``, ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``,
``ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS``); ``TRACED_AGENT`` names another agent module than
the travel agent's, and ``TRACED_STREAMING=sse`` runs it streaming. The ADK sessions the
run left go to ``OUT.sessions.json`` (what production did, to compare with).
"""

from __future__ import annotations

import asyncio
import base64
import importlib
import json
import os
import sys
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import _logs, trace
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

STATE = {"user_name": "Ada", "home_city": "Paris"}
"""The session state the travel agent's instructions read."""


def _hex_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId")
            else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


async def run_sessions(sessions: list[list[str]], plugins: list[Any]) -> list[dict[str, Any]]:
    """Run the agent (``TRACED_AGENT``, streaming as ``TRACED_STREAMING`` says) under ADK's
    Runner with ``plugins``, one session per list of user turns; return the sessions."""
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    module = importlib.import_module(os.environ.get("TRACED_AGENT", "tests.agents.travel.agent"))
    streaming = os.environ.get("TRACED_STREAMING") == "sse"
    config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
    service = InMemorySessionService()
    runner = Runner(
        app_name="travel", agent=module.root_agent, session_service=service, plugins=plugins
    )
    done = []
    for turns in sessions:
        session = await service.create_session(app_name="travel", user_id="ada", state=STATE)
        for text in turns:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(
                user_id="ada", session_id=session.id, new_message=message, run_config=config
            ):
                pass
        found = await service.get_session(app_name="travel", user_id="ada", session_id=session.id)
        assert found is not None
        done.append(found.model_dump(mode="json", by_alias=True, exclude_none=True))
    return done


def _dev_server(out: str, sessions: list[list[str]]) -> list[dict[str, Any]]:
    from fastapi.testclient import TestClient
    from google.adk.cli.fast_api import get_fast_api_app

    agents = os.path.dirname(os.path.abspath(__file__))
    done = []
    with TestClient(get_fast_api_app(agents_dir=agents, web=True)) as client:
        for turns in sessions:
            created = client.post("/apps/travel/users/ada/sessions", json={"state": STATE})
            session_id = created.json()["id"]
            for text in turns:
                message = {"role": "user", "parts": [{"text": text}]}
                body = {"app_name": "travel", "user_id": "ada", "session_id": session_id}
                client.post("/run", json={**body, "new_message": message}).raise_for_status()
            done.append(client.get(f"/apps/travel/users/ada/sessions/{session_id}").json())
        first = done[0]["id"]
        view = client.get(f"/dev/apps/travel/debug/trace/session/{first}")
        view.raise_for_status()
    with open(out, "w", encoding="utf-8") as handle:
        handle.write(view.text)
    return done


def main(out: str, url: str, sessions: str, *flags: str) -> None:
    os.environ["GOOGLE_GEMINI_BASE_URL"] = url
    os.environ["TRAVEL_RATES_URL"] = f"{url}/rates"
    if "--dev-server" in flags:
        done = _dev_server(out, json.loads(sessions))
        with open(f"{out}.sessions.json", "w", encoding="utf-8") as handle:
            json.dump(done, handle)
        return
    spans = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(tracer)
    logs = InMemoryLogRecordExporter()
    logger = LoggerProvider()
    logger.add_log_record_processor(SimpleLogRecordProcessor(logs))
    _logs.set_logger_provider(logger)
    done = asyncio.run(run_sessions(json.loads(sessions), plugins=[]))
    documents = [MessageToDict(encode_spans(spans.get_finished_spans()))]
    records = logs.get_finished_logs()
    if records:
        documents.append(MessageToDict(encode_logs(records)))
    if "--hex" in flags:
        documents = [_hex_ids(d) for d in documents]
    with open(out, "w", encoding="utf-8") as handle:
        for document in documents:
            handle.write(json.dumps(document) + "\n")
    with open(f"{out}.sessions.json", "w", encoding="utf-8") as handle:
        json.dump(done, handle)


if __name__ == "__main__":
    main(*sys.argv[1:])
