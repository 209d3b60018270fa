"""``rec replay module:function``: a plain google-genai program with automatic function calling."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import rec
from rec.cli import cli, main
from rec.standin.server import StandinGemini
from replayer._agent_loading import ProgramSession, load_agent
from tests.agents.tool_api import CountingToolApi

PROGRAM = textwrap.dedent(
    '''
    from google import genai
    from google.genai import types


    def get_weather(city: str) -> dict:
        """Get today's weather for a city.

        Args:
            city: The city name.
        """
        return {"city": city, "sky": "sunny", "temperature_c": 24}


    async def chat(text, session):
        if "chat" not in session.data:
            session.data["client"] = client = genai.Client()
            session.data["chat"] = client.aio.chats.create(
                model="gemini-2.0-flash",
                config=types.GenerateContentConfig(tools=[get_weather]),
            )
        reply = await session.data["chat"].send_message(text)
        return reply.text
    '''
)

TURNS = ("What's the weather in Paris?", "And the weather in Rome?")


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "weather_program.py"
    path.write_text(PROGRAM)
    return path


def _record(program: Path, folder: Path, standin: StandinGemini) -> Path:
    loaded = load_agent(f"{program}:chat")
    assert loaded.program is not None

    async def drive() -> None:
        session = ProgramSession("weather_program", "user", "s1")
        for turn, text in enumerate(TURNS):
            session.turn = turn
            await loaded.program(text, session)  # type: ignore[misc]

    with rec.record(folder, name="weather", upstream=standin.url):
        asyncio.run(drive())
    return folder / "weather.evalset.json"


@pytest.fixture
def recorded_program(
    program: Path, tmp_path: Path, standin: StandinGemini, fake_api_key: str
) -> Path:
    """The program recorded against the stand-in into ``tmp_path/rec``: its EvalSet."""
    return _record(program, tmp_path / "rec", standin)


def test_program_with_afc_records_replays_and_scores(
    program: Path,
    recorded_program: Path,
    monkeypatch: pytest.MonkeyPatch,
    loopback_only: object,
) -> None:
    evalset = recorded_program
    assert evalset.is_file()
    monkeypatch.delenv("GOOGLE_API_KEY")
    result = CliRunner().invoke(
        cli, ["replay", f"{program}:chat", str(evalset)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed, 1 case" in result.output
    assert "tool_trajectory_avg_score=1.000" in result.output


def test_program_that_changed_fails_with_the_divergence(
    program: Path,
    recorded_program: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    evalset = recorded_program
    monkeypatch.delenv("GOOGLE_API_KEY")
    program.write_text(PROGRAM.replace("Get today's weather", "Get the forecast"))
    edited = program.with_name("weather_program_v2.py")
    program.rename(edited)
    result = CliRunner().invoke(
        cli, ["replay", f"{edited}:chat", str(evalset)], catch_exceptions=False
    )
    assert result.exit_code == 1, result.output
    assert "turn 1" in result.output
    assert "tools" in result.output


def test_not_an_async_function_is_an_input_error(program: Path) -> None:
    from rec.cli import main

    assert main(["replay", f"{program}:get_weather", str(program)]) == 2


def test_program_runs_several_times_live_and_with_record_missing(
    program: Path,
    recorded_program: Path,
    standin: StandinGemini,
    fake_api_key: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    evalset = recorded_program
    cassette = recorded_program.parent / "weather.cassette.json"

    def replay_program(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(cli, ["replay", f"{program}:chat", str(evalset), *args])
        return result.exit_code, result.output

    monkeypatch.delenv("GOOGLE_API_KEY")
    code, output = replay_program("--num-runs", "2")  # the same recording played twice
    assert code == 0 and "1 passed, 0 failed" in output, output

    monkeypatch.setenv("GOOGLE_API_KEY", fake_api_key)
    standin.reset()
    before = cassette.read_bytes()
    code, output = replay_program("--live", "--upstream", standin.url)
    assert code == 0, output
    assert len(standin.requests) >= 2  # the live model answered
    assert cassette.read_bytes() == before  # --live records nothing

    cassette.unlink()  # --record-missing starts the recording again
    code, output = replay_program("--record-missing", "--upstream", standin.url)
    assert code == 0, output
    assert cassette.is_file()
    monkeypatch.delenv("GOOGLE_API_KEY")
    code, output = replay_program()
    assert code == 0, output


@pytest.mark.parametrize(
    ("handling", "expected"),
    [
        pytest.param(
            "    except Exception:\n        return 'sorry, the model is unavailable'\n",
            "a model call missed",
            id="program-swallows-the-error",
        ),
        pytest.param(
            "    except Exception as exc:\n        raise RuntimeError('chat failed') from exc\n",
            "turn 1: /",
            id="program-wraps-the-error",
        ),
    ],
)
def test_program_whose_model_call_misses_fails_with_the_miss(
    program: Path,
    recorded_program: Path,
    monkeypatch: pytest.MonkeyPatch,
    handling: str,
    expected: str,
) -> None:
    """Another model name is a miss, said with its diff, not "no call"."""
    evalset = recorded_program
    monkeypatch.delenv("GOOGLE_API_KEY")
    guarded = PROGRAM.replace("gemini-2.0-flash", "gemini-2.5-pro").replace(
        '    reply = await session.data["chat"].send_message(text)\n',
        '    try:\n        reply = await session.data["chat"].send_message(text)\n' + handling,
    )
    assert "gemini-2.5-pro" in guarded and "try:" in guarded
    # A module name per case: the program is imported, and imports are cached per process.
    edited = program.with_name(f"weather_program_pro_{abs(hash(handling))}.py")
    edited.write_text(guarded)
    result = CliRunner().invoke(
        cli, ["replay", f"{edited}:chat", str(evalset)], catch_exceptions=False
    )
    assert result.exit_code == 1, result.output
    assert "made no model call" not in result.output
    # The report wraps at the terminal's width (COLUMNS may be set): compare words.
    assert expected in " ".join(result.output.split())
    assert "no recording matches POST /v1beta/models/gemini-2.5-pro:generateContent" in (
        result.output
    )


TOOL_PROGRAM = PROGRAM.replace(
    "async def chat(text, session):\n",
    "async def chat(text, session):\n"
    "    import os\n"
    "    import httpx\n"
    "    async with httpx.AsyncClient() as http:\n"
    "        await http.get(os.environ['RATES_URL'], params={'to': 'USD', 'apikey': 's3cr3t'})\n",
)


@pytest.fixture
def tool_api() -> Iterator[CountingToolApi]:
    listener = CountingToolApi()
    yield listener
    listener.close()


def test_program_tool_calls_are_served_from_the_recording_never_sent(
    tmp_path: Path,
    standin: StandinGemini,
    fake_api_key: str,
    monkeypatch: pytest.MonkeyPatch,
    tool_api: CountingToolApi,
) -> None:
    """In the default mode a program's httpx call is served from the recording, not the net."""
    program = tmp_path / "rates_program.py"
    program.write_text(TOOL_PROGRAM)
    monkeypatch.setenv("RATES_URL", f"{tool_api.url}/rates")
    evalset = _record(program, tmp_path / "rec", standin)
    assert tool_api.connections >= 1  # recording sent the tool's calls for real
    assert '"origin": "tool"' in (tmp_path / "rec" / "weather.cassette.json").read_text()

    monkeypatch.delenv("GOOGLE_API_KEY")
    tool_api.connections = 0
    result = CliRunner().invoke(
        cli, ["replay", f"{program}:chat", str(evalset)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert tool_api.connections == 0

    monkeypatch.setenv("RATES_URL", f"{tool_api.url}/v2/rates")  # a call never recorded
    result = CliRunner().invoke(
        cli, ["replay", f"{program}:chat", str(evalset)], catch_exceptions=False
    )
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert f"the tool call GET {tool_api.url}/v2/rates?to=USD&apikey=… was not recorded" in text
    assert "s3cr3t" not in result.output
    assert tool_api.connections == 0


def test_a_program_that_builds_its_client_at_import_is_one_line_naming_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The place is the program's line, not google-genai's."""
    program = tmp_path / "import_time_client.py"
    program.write_text(
        "from google import genai\n"
        "client = genai.Client()\n"
        "async def chat(text, session):\n"
        "    return 'never'\n"
    )
    evalset = tmp_path / "e.evalset.json"
    evalset.write_text('{"eval_set_id": "e", "eval_cases": []}')
    code = main(["replay", f"{program}:chat", str(evalset)])
    text = capsys.readouterr().err.strip()
    assert code == 2, text
    assert text.count("\n") == 0 and "Traceback" not in text, text
    assert f"{program}:2" in text and "No API key" in text, text
