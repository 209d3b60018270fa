"""`rec replay --otlp FILE` and `ReplayOptions(otlp=...)`: the replay's ADK spans as OTLP JSON.

Each replay runs in a child process (the real CLI, or a script calling the Python API): an
OpenTelemetry tracer provider, once installed, stays for the life of a process, and the
test process must not keep one. The replayed case is the production_bug example, with no
key and no network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "production_bug" / "after_fix" / "climate_agent"
EVALS = ROOT / "examples" / "production_bug" / "evals"
CASE = "7f3c2a9e_prod"

_API_SCRIPT = """
import sys
from pathlib import Path
import rec
[done] = rec.replay_evalsets(sys.argv[1], [sys.argv[2]], rec.ReplayOptions(otlp=Path(sys.argv[3])))
sys.exit(0 if done.result.passed else 1)
"""


def _child(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "ADK_"))
    }
    environment.update(PYTHONPATH=str(ROOT), NO_PROXY="127.0.0.1,localhost", **env)
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=environment, cwd=ROOT
    )


def _attributes(item: dict[str, Any]) -> dict[str, Any]:
    found = {}
    for attribute in item.get("attributes", []):
        value = attribute["value"]
        found[attribute["key"]] = next(iter(value.values())) if value else None
    return found


def _spans(file: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every resource and every span of an OTLP JSON lines file (each line parsed)."""
    resources, spans = [], []
    lines = file.read_text(encoding="utf-8").splitlines()
    assert lines
    for line in lines:
        document = json.loads(line)
        assert set(document) == {"resourceSpans"}
        for resource_spans in document["resourceSpans"]:
            resources.append(resource_spans["resource"])
            for scope in resource_spans["scopeSpans"]:
                spans.extend(scope["spans"])
    return resources, spans


def _check_replayed(file: Path, *, model_span: str) -> None:
    resources, spans = _spans(file)
    assert all(_attributes(r).get("rec.replayed") is True for r in resources)
    names = [s["name"] for s in spans]
    assert any(n.startswith(model_span) for n in names), names
    assert "execute_tool get_room_temperature" in names
    assert "execute_tool set_thermostat" in names
    ids = {s["spanId"] for s in spans}
    for span in spans:
        attributes = _attributes(span)
        assert attributes["rec.replayed"] is True
        assert attributes["rec.eval_id"] == CASE
        assert attributes["rec.cassette"] == {
            "values": [{"stringValue": "thermostat_bug.cassette.json"}]
        }
        assert len(span["traceId"]) == 32 and int(span["traceId"], 16)
        assert len(span["spanId"]) == 16 and int(span["spanId"], 16)
        assert span.get("parentSpanId") in ids | {None}  # each parent is in the file
        assert int(span["endTimeUnixNano"]) >= int(span["startTimeUnixNano"])


def test_rec_replay_otlp_writes_adk_spans_marked_replayed(tmp_path: Path) -> None:
    out = tmp_path / "spans.jsonl"
    done = _child(["-m", "rec", "replay", str(AGENT), str(EVALS), "--otlp", str(out)])
    assert done.returncode == 0, done.stdout + done.stderr
    _check_replayed(out, model_span="generate_content")


def test_the_python_api_writes_them_too_under_adks_legacy_schema(tmp_path: Path) -> None:
    out = tmp_path / "spans.jsonl"
    done = _child(
        ["-c", _API_SCRIPT, str(AGENT), str(EVALS), str(out)],
        ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN="1",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    _check_replayed(out, model_span="call_llm")


def test_an_otlp_path_that_cannot_be_written_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rec.cli import main

    (tmp_path / "missing").write_text("a file, not a folder")
    out = tmp_path / "missing" / "spans.jsonl"
    code = main(["replay", str(AGENT), str(EVALS), "--otlp", str(out)])
    captured = capsys.readouterr()
    assert code == 2, captured.out + captured.err
    assert "--otlp" in captured.err
