"""Recorded reads: what an agent's code read of the clock, uuid4 and random is replayed.

Real ADK agents are recorded through the real proxy against the stand-in with rec's ADK
capture plugin, a day before "now" (time-machine) and in one time zone; they replay with
the stand-in stopped and no key, on today's clock and in another time zone, in worker
processes. Replay mode fails closed on any request that differs from the recording, so a
green run means every model request was the recorded one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cassettes._cassette import load_cassette
from rec.cli import main
from rec.standin.brain import RuleBrain, call
from tests.agents.adk_recording import record_adk

AGENTS = Path(__file__).resolve().parents[1] / "agents"
RECORDED_ZONE = "America/New_York"
REPLAYED_ZONE = "Asia/Tokyo"


@pytest.fixture
def zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone is put back after the test."""
    yield
    monkeypatch.undo()
    time.tzset()


def _in_zone(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("TZ", name)
    time.tzset()


def _record(folder: Path, agent_name: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Record two sessions of ``tests/agents/<agent_name>`` a day ago, in New York."""
    import importlib

    import time_machine

    agent = importlib.import_module(f"tests.agents.{agent_name}.agent")
    _in_zone(monkeypatch, RECORDED_ZONE)
    day_ago = time.time() - 86_400  # a timestamp: time-machine leaves the zone alone
    return record_adk(
        folder,
        agent.root_agent,
        [("Please open a ticket about the printer",), ("Open a ticket about the coffee",)],
        responder=RuleBrain([call("open_ticket", {"subject": "printer"}, when="ticket")]),
        app_name=agent_name,
        capture=True,
        clock=lambda: time_machine.travel(day_ago, tick=True),
    )


def _recorded_zones(folder: Path) -> set[str | None]:
    reads = load_cassette(folder / "recording.cassette.json").reads
    assert reads is not None
    return {invocation.zone for invocation in reads.invocations}


def _recorded_kinds(folder: Path) -> set[str]:
    reads = load_cassette(folder / "recording.cassette.json").reads
    assert reads is not None
    return {kind for invocation in reads.invocations for kind in invocation.kinds()}


@pytest.mark.usefixtures("zone", "loopback_only")
@pytest.mark.parametrize(
    "flags",
    [
        pytest.param(("--workers", "2"), id="mock-tools-two-workers"),
        # Both cases at once in this process: each reads its own recording.
        pytest.param(
            ("--live-tools", "--workers", "1", "--parallel", "2"), id="live-tools-parallel"
        ),
    ],
)
def test_clock_uuid_and_random_replay_a_day_later_in_another_zone(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: tuple[str, ...],
) -> None:
    _record(tmp_path, "reads", monkeypatch)
    assert _recorded_kinds(tmp_path) == {"clock", "uuid4", "random"}
    assert _recorded_zones(tmp_path) == {RECORDED_ZONE}
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    _in_zone(monkeypatch, REPLAYED_ZONE)
    capsys.readouterr()

    reports = tmp_path / "reports"
    written = (
        *("--results", str(reports), "--junit", str(reports / "junit.xml")),
        *("--html", str(reports / "report.html")),
    )
    code = main(["replay", str(AGENTS / "reads"), str(tmp_path), *flags, *written])
    output = capsys.readouterr().out
    assert code == 0, output
    assert "2 passed" in output, output
    assert output.count("replayed reads: clock x") == 2, output
    assert ("uuid4 x1" in output) is ("--live-tools" in flags), output  # mock tools never read
    _reports_say_what_was_replayed(reports, tools_ran="--live-tools" in flags)

    # The same run on the live clock, ids and randomness misses at its first request.
    code = main(["replay", str(AGENTS / "reads"), str(tmp_path), "--workers", "2", "--live-clock"])
    output = capsys.readouterr().out
    assert code == 1, output
    assert "systemInstruction" in output, output


def _reports_say_what_was_replayed(reports: Path, *, tools_ran: bool) -> None:
    """The results JSON, JUnit XML and HTML report each give every case its reads line."""
    import json
    import xml.etree.ElementTree as ET

    (results,) = reports.glob("*.evalset_result.json")
    lines = [c["replayed_reads"] for c in json.loads(results.read_text())["eval_case_results"]]
    assert len(lines) == 2 and all(line.startswith("replayed reads: clock x") for line in lines)
    assert all(("uuid4 x1" in line) is tools_ran for line in lines), lines
    junit = ET.parse(reports / "junit.xml").getroot()
    properties = [p.get("value") for p in junit.iter("property") if p.get("name") == "rec.reads"]
    assert sorted(properties) == sorted(lines)
    html = (reports / "report.html").read_text()
    assert all(html.count(f">{line}<") == lines.count(line) for line in lines), lines


@pytest.mark.usefixtures("zone", "loopback_only")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_adk_s_memory_sample_shape_replays_a_day_later_in_another_zone(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    workers: str,
) -> None:
    _record(tmp_path, "memory_shape", monkeypatch)
    assert _recorded_kinds(tmp_path) == {"clock"}
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    _in_zone(monkeypatch, REPLAYED_ZONE)
    capsys.readouterr()
    code = main(["replay", str(AGENTS / "memory_shape"), str(tmp_path), "--workers", workers])
    output = capsys.readouterr().out
    assert code == 0, output
    assert "2 passed" in output, output
    # In this process (one worker) the cases ran in New York; the zone is Tokyo's again.
    assert os.environ["TZ"] == REPLAYED_ZONE
    assert time.localtime().tm_zone == "JST"


@pytest.mark.usefixtures("zone", "loopback_only")
def test_reads_re_recorded_by_mode_record_replay_in_another_zone(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``rec replay --mode record`` records the reads again (under the EvalSet's invocation
    ids, in its own zone), and a replay in another zone is served them."""
    import json

    from rec.standin.replies import FAKE_API_KEY
    from rec.standin.server import StandinGemini

    _record(tmp_path, "reads", monkeypatch)
    first = load_cassette(tmp_path / "recording.cassette.json").reads
    assert first is not None
    # The EvalSet keeps its recorded replies, which repeat the first recording's ticket
    # id; record mode's tool draws a new one. The trajectory is what is scored here.
    criteria = {"criteria": {"tool_trajectory_avg_score": 1.0}}
    (tmp_path / "test_config.json").write_text(json.dumps(criteria))
    _in_zone(monkeypatch, "Europe/Paris")
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    brain = RuleBrain([call("open_ticket", {"subject": "printer"}, when="ticket")])
    capsys.readouterr()
    with StandinGemini(brain) as api:
        argv = ["replay", str(AGENTS / "reads"), str(tmp_path), "--mode", "record"]
        code = main([*argv, "--upstream", api.url, "--live-tools"])
    output = capsys.readouterr().out
    assert code == 0, output
    assert output.count("recorded reads: clock x") == 2, output
    again = load_cassette(tmp_path / "recording.cassette.json").reads
    assert again is not None
    assert [i.invocation_id for i in again.invocations] == [
        i.invocation_id for i in first.invocations
    ]
    assert {i.zone for i in again.invocations} == {"Europe/Paris"}
    assert again.invocations != first.invocations  # new reads, not the old ones kept

    monkeypatch.delenv("GOOGLE_API_KEY")
    _in_zone(monkeypatch, REPLAYED_ZONE)
    # The tool runs (its recorded uuid4 served): mock tools would answer with the EvalSet's
    # first recording, which record mode leaves as it was.
    argv = ["replay", str(AGENTS / "reads"), str(tmp_path), "--live-tools", "--workers", "2"]
    code = main(argv)
    output = capsys.readouterr().out
    assert code == 0, output
    assert output.count("replayed reads: clock x") == 2 and "uuid4 x1" in output, output


READS_SCRIPT = """
import asyncio, sys, time

import time_machine
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from tests.agents.reads.agent import root_agent


async def main(texts):
    service = InMemorySessionService()
    runner = Runner(app_name="reads", agent=root_agent, session_service=service)
    for text in texts:
        session = await service.create_session(app_name="reads", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass
    await runner.close()


with time_machine.travel(time.time() - 86400, tick=True):  # a timestamp: the zone stays
    asyncio.run(main(sys.argv[1:]))
"""


def test_reads_recorded_through_rec_start_replay_in_workers_in_another_zone(
    tmp_path: Path,
) -> None:
    """``rec start -- python script.py`` (the capture plugin attached by rec) a day ago in
    New York; ``rec replay --workers 2`` in Tokyo."""
    import subprocess
    import sys

    from rec.standin.replies import FAKE_API_KEY
    from rec.standin.server import StandinGemini
    from tests.rec_process import rec_argv, rec_environment

    script = tmp_path / "chat.py"
    script.write_text(READS_SCRIPT)
    out = tmp_path / "rec"
    brain = RuleBrain([call("open_ticket", {"subject": "printer"}, when="ticket")])
    with StandinGemini(brain) as api:
        recorded = subprocess.run(
            [
                *rec_argv("start", "--out", str(out), "--upstream", api.url, "--name", "chat"),
                *("--", sys.executable, str(script), "Open a ticket", "Another ticket please"),
            ],
            env=rec_environment(GOOGLE_API_KEY=FAKE_API_KEY, TZ=RECORDED_ZONE),
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    reads = load_cassette(out / "chat.cassette.json").reads
    assert reads is not None and {i.zone for i in reads.invocations} == {RECORDED_ZONE}

    replayed = subprocess.run(
        rec_argv("replay", str(AGENTS / "reads"), str(out), "--workers", "2"),
        env=rec_environment(TZ=REPLAYED_ZONE),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "2 passed" in replayed.stdout
    assert replayed.stdout.count("replayed reads: clock x") == 2, replayed.stdout


PROGRAM = '''
import datetime, random, uuid

from google import genai
from google.genai import types


def open_ticket(subject: str) -> dict:
    """Open a support ticket.

    Args:
        subject: What the ticket is about, e.g. "printer".
    """
    return {"ticket": str(uuid.uuid4()), "subject": subject}


async def chat(text, session):
    config = types.GenerateContentConfig(
        system_instruction=(
            f"It is {datetime.datetime.now().isoformat()} now. Lucky draw: {random.random()}."
        ),
        tools=[open_ticket],
    )
    client = genai.Client()
    conversation = client.aio.chats.create(model="gemini-2.0-flash", config=config)
    reply = await conversation.send_message(text)
    return reply.text
'''


@pytest.mark.usefixtures("zone", "loopback_only")
def test_a_plain_genai_program_s_reads_recorded_by_mode_record_replay_in_another_zone(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A google-genai program (``module:function``, one call per turn) whose system
    instruction holds the time to the microsecond and a random draw, and whose tool (run by
    google-genai's automatic function calling) returns a ``uuid4``: ``rec replay --mode
    record`` records its reads per turn, and a replay in another zone, in two workers, sends
    the recorded requests byte for byte."""
    import asyncio
    import json

    import rec
    from rec.standin.replies import FAKE_API_KEY
    from rec.standin.server import StandinGemini
    from replayer._agent_loading import ProgramSession, load_agent

    program = tmp_path / "ticket_program.py"
    program.write_text(PROGRAM)
    spec = f"{program}:chat"
    loaded = load_agent(spec)
    assert loaded.program is not None
    out = tmp_path / "rec"
    brain = RuleBrain([call("open_ticket", {"subject": "printer"}, when="ticket")])
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    _in_zone(monkeypatch, RECORDED_ZONE)

    async def drive() -> None:
        for turn, text in enumerate(("Open a ticket please", "Another ticket please")):
            await loaded.program(text, ProgramSession("ticket_program", "u", f"s{turn}"))  # type: ignore[misc]

    with StandinGemini(brain) as api:
        with rec.record(out, name="tickets", upstream=api.url):
            asyncio.run(drive())
        # The EvalSet's replies repeat the first run's ticket ids: the trajectory is scored.
        criteria = {"criteria": {"tool_trajectory_avg_score": 1.0}}
        (out / "test_config.json").write_text(json.dumps(criteria))
        capsys.readouterr()
        argv = ["replay", spec, str(out), "--mode", "record", "--upstream", api.url]
        code = main(argv)
    output = capsys.readouterr().out
    assert code == 0, output
    reads = load_cassette(out / "tickets.cassette.json").reads
    assert reads is not None and len(reads.invocations) == 2
    assert {i.zone for i in reads.invocations} == {RECORDED_ZONE}
    assert {k for i in reads.invocations for k in i.kinds()} == {"clock", "random", "uuid4"}
    assert all(list(i.readers) == ["run"] for i in reads.invocations)

    monkeypatch.delenv("GOOGLE_API_KEY")
    _in_zone(monkeypatch, REPLAYED_ZONE)
    code = main(["replay", spec, str(out), "--workers", "2"])
    output = capsys.readouterr().out
    assert code == 0, output
    assert output.count("replayed reads: clock x1, random x1, uuid4 x1") == 2, output
    # On the live clock the first request's system instruction differs.
    code = main(["replay", spec, str(out), "--live-clock"])
    output = capsys.readouterr().out
    assert code == 1 and "systemInstruction" in output, output
