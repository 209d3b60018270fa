"""Run an ADK agent with ADK's BigQuery Agent Analytics plugin and export its rows.

Run in a child process (the plugin keeps process-wide state)::

    python -m tests.agents.bigquery_run OUT STANDIN_URL SESSIONS_JSON [--full] [--array]

The real ``BigQueryAgentAnalyticsPlugin`` runs under ADK's Runner: its callbacks, its
content parser and its row assembly (``_log_event``) are ADK's own. Only the table write
is redirected: the plugin hands each finished row to its loop state's batch processor
(the seam before the BigQuery Storage Write API), and a local sink takes it there. The
rows go through the plugin's own Arrow batch building, as they would to the table, and are
written as ``bq query --format=json`` exports them: JSON columns (``content``,
``attributes``, ``latency_ms``) as JSON text, one row per line (``--array``: one JSON
array). ``--full`` sets the plugin's ``content_formatter`` to write each model request
as its whole JSON (``LlmRequest.model_dump``) and ``max_content_length=-1``; without it the
plugin's defaults apply. ``TRACED_AGENT`` names another agent module than the travel
agent's, and ``TRACED_STREAMING=sse`` runs it streaming. The ADK sessions go to
``OUT.sessions.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel

from tests.agents.traced_run import run_sessions


def full_content(content: Any, event_type: str) -> Any:
    """A ``content_formatter`` that keeps every pydantic value whole, as JSON."""
    if isinstance(content, BaseModel):
        return content.model_dump(mode="json", exclude_none=True)
    return content


class _Sink:
    """Takes the rows the plugin would write to BigQuery."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    async def append(self, row: dict[str, Any]) -> None:
        self.rows.append(row)

    async def flush(self) -> None:
        return None


def _exported(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as the table holds them, read back as ``bq query --format=json`` writes
    them: through the plugin's own Arrow batch (``_prepare_arrow_batch``, the record batch
    it sends the Storage Write API, JSON columns as JSON text), timestamps in ISO form."""
    from google.adk.plugins.bigquery_agent_analytics_plugin import (
        BatchProcessor,
        _get_events_schema,
        to_arrow_schema,
    )

    writer = SimpleNamespace(arrow_schema=to_arrow_schema(_get_events_schema()))
    batch = BatchProcessor._prepare_arrow_batch(writer, rows)  # type: ignore[arg-type]
    return [
        {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}
        for row in batch.to_pylist()
    ]


def _plugin(full: bool) -> tuple[Any, _Sink]:
    from google.adk.plugins.bigquery_agent_analytics_plugin import (
        BigQueryAgentAnalyticsPlugin,
        BigQueryLoggerConfig,
        HybridContentParser,
    )

    config = BigQueryLoggerConfig()
    if full:
        config = BigQueryLoggerConfig(content_formatter=full_content, max_content_length=-1)
    plugin = BigQueryAgentAnalyticsPlugin("rec-test", "agent_analytics", config=config)
    sink = _Sink()
    # What the plugin's setup does once it reached BigQuery: a parser and a writer.
    plugin.parser = HybridContentParser(None, "", "", max_length=config.max_content_length)
    plugin._started = True
    state = SimpleNamespace(batch_processor=sink)

    async def loop_state(*_: Any, **__: Any) -> Any:
        return state

    plugin._get_loop_state = loop_state
    return plugin, sink


async def _run(sessions: list[list[str]], full: bool) -> tuple[list[Any], list[Any]]:
    plugin, sink = _plugin(full)
    done = await run_sessions(sessions, plugins=[plugin])
    return _exported(sink.rows), done


def main(out: str, url: str, sessions: str, *flags: str) -> None:
    os.environ["GOOGLE_GEMINI_BASE_URL"] = url
    os.environ["TRAVEL_RATES_URL"] = f"{url}/rates"
    rows, done = asyncio.run(_run(json.loads(sessions), "--full" in flags))
    with open(out, "w", encoding="utf-8") as handle:
        if "--array" in flags:
            json.dump(rows, handle)
        else:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
    with open(f"{out}.sessions.json", "w", encoding="utf-8") as handle:
        json.dump(done, handle)


if __name__ == "__main__":
    main(*sys.argv[1:])
