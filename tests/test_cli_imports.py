"""Each ``rec`` command imports only what it uses: the heavy libraries are pinned out per command.

``rec --help``, ``rec status`` or ``rec check`` in a loop or a pre-commit hook must start in
a blink: they must not pay for google-adk, google-genai, NLTK (which loads SciPy), deepdiff
(pandas, numpy) or the HTTP server. Every case runs the real command in a fresh
interpreter, as a user does, and reads ``sys.modules`` when it is done.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassettes._cassette_writer import save_cassette
from cassettes._evalset import save_evalset
from cassettes._record_mode import RecordMode
from rec.cli import _COMMAND_MODULES as COMMAND_MODULES
from rec.standin.replies import FAKE_API_KEY, Reply
from recorder._recording_state import RecorderState, RecordingPaths, write_state
from tests.factories import make_cassette, make_evalset, make_invocation
from tests.faults.harness import start_recorder
from tests.rec_process import run_probe

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EVALSET = EXAMPLES / "production_bug" / "evals" / "thermostat_bug.evalset.json"
CONFIG = EXAMPLES / "production_bug" / "evals" / "test_config.json"

HEAVY = ("google.adk", "google.genai", "nltk", "rouge_score", "scipy", "deepdiff", "aiohttp")
"""Never imported by the light commands."""


def _run(args: list[str], cwd: Path) -> tuple[int, set[str]]:
    result = run_probe(args, cwd)
    return result["status"], set(result["modules"])


def _imported(modules: set[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(r for r in roots if any(m == r or m.startswith(r + ".") for m in modules))


def _write(folder: Path) -> dict[str, Path]:
    """Files for the commands to read: an EvalSet, a cassette, configs, a legacy file."""
    invocation = make_invocation(
        "What's the weather in Paris?",
        final_text="Sunny and 21 degrees in Paris.",
        tool_calls=[("get_weather", {"city": "Paris"})],
        tool_responses=[("get_weather", {"forecast": "sunny"})],
    )
    files = {
        "evalset": save_evalset(make_evalset([[invocation]]), folder / "a.evalset.json"),
        "cassette": save_cassette(make_cassette(2), folder / "a.cassette.json"),
        "legacy": folder / "old.test.json",
    }
    files["legacy"].write_text(
        json.dumps([{"query": "hi", "expected_tool_use": [], "reference": "hello"}])
    )
    trajectory = folder / "trajectory"
    trajectory.mkdir()
    (trajectory / "test_config.json").write_text(
        json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}})
    )
    files["trajectory_evalset"] = save_evalset(
        make_evalset([[invocation]]), trajectory / "a.evalset.json"
    )
    (folder / "recordings").mkdir()
    return files


LIGHT = [
    pytest.param(["--help"], id="help"),
    pytest.param(["--version"], id="version"),
    pytest.param(["status", "--out", "recordings"], id="status"),
    pytest.param(["stop", "--out", "recordings"], id="stop"),
    pytest.param(["check", "{evalset}"], id="check-evalset"),
    pytest.param(["check", "{cassette}"], id="check-cassette"),
    pytest.param(["check", "{legacy}"], id="check-legacy"),
    pytest.param(["check", str(CONFIG)], id="check-config"),
    pytest.param(["check", str(EVALSET)], id="check-example"),
    pytest.param(["show", "{cassette}"], id="show"),
    pytest.param(
        ["show", "--json", str(EVALSET.with_name("thermostat_bug.cassette.json"))],
        id="show-example",
    ),
    *[
        pytest.param([command, "--help"], id=f"{command}-help")
        for command in (
            "start",
            "stop",
            "status",
            "serve",
            "check",
            "import",
            "score",
            "replay",
            "merge",
            "show",
            "standin",
        )
    ],
]


@pytest.mark.slow
@pytest.mark.parametrize("args", LIGHT)
def test_light_commands_import_nothing_heavy(args: list[str], tmp_path: Path) -> None:
    files = _write(tmp_path)
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    status, modules = _run(args, tmp_path)
    assert status in (0, 2), f"rec {' '.join(args)} exited {status}"
    assert _imported(modules, HEAVY) == []


@pytest.mark.slow
def test_score_of_deterministic_metrics_imports_no_adk_and_no_nltk(tmp_path: Path) -> None:
    files = _write(tmp_path)
    evalset = str(files["trajectory_evalset"])
    status, modules = _run(["score", evalset, evalset], tmp_path)
    assert status == 0
    assert _imported(modules, HEAVY) == []


@pytest.mark.slow
def test_score_of_response_match_loads_only_the_stemmer(tmp_path: Path) -> None:
    """response_match_score on real texts needs rouge_score's tokenizer and NLTK's Porter
    stemmer, and nothing else of NLTK (no SciPy)."""
    files = _write(tmp_path)
    evalset = str(files["evalset"])
    status, modules = _run(["score", evalset, evalset], tmp_path)
    assert status == 0
    assert _imported(modules, HEAVY) == ["rouge_score"]


def test_every_command_is_registered_by_name() -> None:
    """Every command is listed by name in rec.cli, and each one kept in a module of its own
    loads (a missing module fails, never skipped) as the click command of that name."""
    import click

    from rec.cli import cli

    context = click.Context(cli)
    names = cli.list_commands(context)
    assert names == [
        "check",
        "import",
        "merge",
        "replay",
        "score",
        "serve",
        "show",
        "standin",
        "start",
        "status",
        "stop",
    ]
    for name in names:
        command = cli.get_command(context, name)
        assert isinstance(command, click.Command) and command.name == name


OTHER_COMMANDS = {
    name: tuple(module for other, module in COMMAND_MODULES.items() if other != name)
    for name in COMMAND_MODULES
}
"""Per command, the modules of the other commands: it loads none of them."""

PINNED = [
    pytest.param(
        ["status", "--out", "recordings"],
        (
            "httpx",
            "respx",
            "pydantic",
            "cassettes._cassette",
            "recorder._recording",
            *COMMAND_MODULES.values(),
        ),
        id="status",
    ),
    pytest.param(
        ["check", "{evalset}"],
        (
            "google.adk",
            "google.genai",
            "httpx",
            "respx",
            "pydantic",
            "pydantic_core",
            *OTHER_COMMANDS["check"],
        ),
        id="check",
    ),
    pytest.param(
        ["check", str(EVALSET)],
        ("pydantic", "pydantic_core", "cassettes._evalset", "cassettes._checking"),
        id="check-example",
    ),
    pytest.param(
        ["show", "{cassette}"],
        (
            "google.adk",
            "google.genai",
            "httpx",
            "respx",
            "asyncio",
            "filelock",  # a read: no lock
            "importlib.metadata",  # no pydantic plugin is installed: none is searched for
            "cassettes._atomic_write",  # a read: no writer
            *OTHER_COMMANDS["show"],
            "cassettes._redaction",
            "cassettes._checking",
        ),
        id="show",
    ),
    pytest.param(
        ["score", "{trajectory_evalset}", "{trajectory_evalset}"],
        (
            "google.adk",
            "google.genai",
            "httpx",
            "respx",
            "cassettes._cassette",  # only the HTML report (--html) reads cassettes
            "filelock",  # nothing is written without --junit or --results
            "asyncio",  # rec's own metrics finish without an event loop
            "replayer._reports.html",
            "replayer._reports.junit",
            "pydantic",  # a clean EvalSet and a plain config are scored without models
            "pydantic_core",
            "cassettes._evalset",
            "cassettes._eval_config",
            "cassettes._eval_result",
            "replayer._scoring.judge",
            "replayer._scoring.custom",
            *OTHER_COMMANDS["score"],
        ),
        id="score",
    ),
    pytest.param(
        ["score", str(EVALSET), str(EVALSET)],
        (
            "pydantic",
            "pydantic_core",
            "cassettes._genai_types",
            "cassettes._evalset",
            "cassettes._eval_config",
            "cassettes._eval_result",
            "regex",  # NLTK's Porter stemmer imports it for its demo only
            "statistics",  # one run: nothing to average
            "typing_extensions",
        ),
        id="score-example",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(("args", "unused"), PINNED)
def test_each_command_imports_only_what_it_uses(
    args: list[str], unused: tuple[str, ...], tmp_path: Path
) -> None:
    """``rec status`` reads a state file (here a dead recorder's, with a journal line) and
    needs no HTTP client library nor pydantic; ``check`` of a clean EvalSet needs no
    pydantic either (cassettes._evalset_quick), nor does ``score`` of clean EvalSets with a
    plain config (replayer._scoring.plain_*); ``check`` and ``score`` run no agent, and
    ``score`` without ``--html`` or ``--junit`` loads neither report."""
    files = _write(tmp_path)
    state = RecorderState(
        name="gone",
        pid=1,
        url="http://127.0.0.1:9",
        mode=RecordMode.RECORD,
        upstream="https://generativelanguage.googleapis.com",
        started_at="2026-01-01T00:00:00Z",
    )
    write_state(RecordingPaths(tmp_path / "recordings", "gone"), state)
    (tmp_path / "recordings" / ".rec" / "gone.journal.jsonl").write_text("{}\n")
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    status, modules = _run(args, tmp_path)
    assert status == 0, f"rec {' '.join(args)} exited {status}"
    assert _imported(modules, unused) == []


def test_rec_stop_of_a_recorder_that_finishes_its_recording_imports_no_recovery(
    tmp_path: Path, standin_factory: Any
) -> None:
    """``rec stop`` waits for the recorder to finalise its own recording; with nothing left
    to recover it does not load the finalising code (half a second of a slow machine's
    ``rec stop``, after the recorder is done)."""
    api = standin_factory(lambda request: Reply.text("hello"))
    out = tmp_path / "recordings"
    process, url = start_recorder(out, "stops", api.url)
    try:
        answered = httpx.post(
            url + "/v1beta/models/gemini-2.0-flash:generateContent",
            json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
            headers={"x-goog-api-key": FAKE_API_KEY},
            timeout=120,
        )
        assert answered.status_code == 200, answered.text
        status, modules = _run(["stop", "--out", str(out)], tmp_path)
        assert status == 0
        process.wait(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert (out / "stops.cassette.json").exists() and (out / "stops.evalset.json").exists()
    assert "recorder._recording" not in modules
    assert _run(["stop", "--out", str(out)], tmp_path)[0] == 2  # nothing running, nothing left
