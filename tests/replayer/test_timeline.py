"""`rec show CASSETTE_OR_DIR [--json]`: a recording made through the real proxy from the
stand-in, read back as a timeline (text and JSON) and checked against the cassette itself."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from cassettes._cassette import JsonBody, SseBody, load_cassette
from rec.cli import main
from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from recorder._api import record
from replayer._reports.layout import wrap_words

MODEL = "gemini-2.0-flash"
WIDTH = 100  # the width of text that goes to a pipe (what capsys is)
HOURS = [{"hour": h, "sky": "rain", "mm": 0.4 + h / 10} for h in range(24)]


def get_forecast(city: str, days: int) -> dict[str, Any]:
    """The hourly forecast for a city."""
    return {"city": city, "days": days, "hourly": HOURS}


def _brain(request: StandinRequest) -> Reply | None:
    """Asks for the forecast once, answers after the tool's response, streams small talk."""
    if request.rpc not in ("generateContent", "streamGenerateContent"):
        return None
    last = request.contents[-1]
    if any("functionResponse" in part for part in last.get("parts", [])):
        return Reply.text("Oslo stays rainy for three days, about 1 mm an hour.")
    if request.stream:
        return Reply.text("You are welcome, take an umbrella along.", chunks=3)
    return Reply.calls(("get_forecast", {"city": "Oslo", "days": 3}))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two turns of a chat, recorded through the real proxy: a unary turn with a tool call
    (google-genai runs the tool), then a streamed turn."""
    from rec.standin.server import StandinGemini

    folder = tmp_path_factory.mktemp("show")
    with pytest.MonkeyPatch.context() as patch, StandinGemini(_brain) as api:
        patch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        with record(folder, name="forecast", upstream=api.url):
            client = genai.Client()  # kept: a collected client closes its connection
            chat = client.chats.create(
                model=MODEL, config=types.GenerateContentConfig(tools=[get_forecast])
            )
            chat.send_message("What's the weather in Oslo?")
            list(chat.send_message_stream("Thanks!"))
    return folder


def _show(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["show", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_timeline_reads_like_the_conversation(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = recorded / "forecast.cassette.json"
    code, out, err = _show([str(cassette)], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == str(cassette)
    assert lines[1].startswith("  3 exchange(s): 3 model call(s) in 1 conversation(s), 0 other;")
    assert 'Turn 1  user: "What\'s the weather in Oslo?"' in out
    assert 'Turn 2  user: "Thanks!"' in out
    heads = _call_heads(lines)
    unary = [head for head in heads if f"{MODEL} generateContent:" in head]
    streamed = [head for head in heads if f"{MODEL} streamGenerateContent:" in head]
    assert len(unary) == 2 and len(streamed) == 1
    assert "streamed" not in " ".join(unary)
    assert "streamed, " in streamed[0] and "first chunk" in streamed[0]
    assert all("tokens (" in line and " in, " in line for line in unary + streamed)
    # the tool call with its args, then its response cut to one line
    assert '      -> get_forecast(city="Oslo", days=3)' in lines
    response = next(line for line in lines if line.startswith("      <- "))
    assert response.endswith("...") and len(response) <= WIDTH
    assert '"city": "Oslo"' in response
    assert 'reply: "Oslo stays rainy for three days, about 1 mm an hour."' in out
    assert 'reply: "You are welcome, take an umbrella along."' in out
    assert all(len(line) <= WIDTH for line in lines)
    # the order of a reading: user, call, tool, answer, next turn
    order = [
        out.index("Turn 1"),
        out.index("-> get_forecast"),
        out.index("<- "),
        out.index('reply: "Oslo'),
        out.index("Turn 2"),
        out.index("streamGenerateContent"),
        out.index('reply: "You are'),
    ]
    assert order == sorted(order)


def test_json_timeline_carries_the_recorded_facts(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = load_cassette(recorded / "forecast.cassette.json")
    code, out, _ = _show(["--json", str(recorded / "forecast.cassette.json")], capsys)
    assert code == 0
    [timeline] = json.loads(out)
    assert timeline["name"] == "forecast" and timeline["exchanges"] == 3
    [conversation] = timeline["conversations"]
    first, second = conversation["turns"]
    assert first["user"] == "What's the weather in Oslo?"
    assert first["reply"] == "Oslo stays rainy for three days, about 1 mm an hour."
    asked, answered = first["model_calls"]
    assert [asked["streamed"], answered["streamed"]] == [False, False]
    assert asked["tool_calls"] == [
        {
            "name": "get_forecast",
            "args": {"city": "Oslo", "days": 3},
            # whole, for machines, as google-genai sent it back (wrapped in "result")
            "response": {"result": {"city": "Oslo", "days": 3, "hourly": HOURS}},
        }
    ]
    assert answered["tool_calls"] == []
    [stream] = second["model_calls"]
    assert stream["streamed"] is True and stream["method"] == "streamGenerateContent"
    assert second["reply"] == "You are welcome, take an umbrella along."
    # latency, first chunk and tokens are the cassette's own
    calls = [asked, answered, stream]
    for call, exchange in zip(calls, cassette.exchanges, strict=True):
        assert call["exchange_id"] == exchange.id
        assert call["latency_ms"] == pytest.approx(exchange.duration_ms)
        body = exchange.response.body
        if isinstance(body, SseBody):
            usage = body.events[-1].data["usageMetadata"]
            assert call["first_chunk_ms"] == pytest.approx(body.events[0].offset_ms)
        else:
            assert isinstance(body, JsonBody)
            usage = body.value["usageMetadata"]
        assert call["prompt_tokens"] == usage["promptTokenCount"] > 0
        assert call["candidates_tokens"] == usage["candidatesTokenCount"] > 0
        assert call["total_tokens"] == usage["totalTokenCount"]
    assert timeline["usage"]["model_calls"] == 3
    assert timeline["usage"]["total_tokens"] == sum(c["total_tokens"] for c in calls)
    assert timeline["usage"]["latency_ms"] == pytest.approx(sum(c["latency_ms"] for c in calls))


def test_a_folder_shows_each_cassette_in_it(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "recordings"
    folder.mkdir()
    for name in ("a", "b"):
        text = (recorded / "forecast.cassette.json").read_text()
        (folder / f"{name}.cassette.json").write_text(text)
    (folder / "a.evalset.json").write_text((recorded / "forecast.evalset.json").read_text())
    code, out, _ = _show(["--json", str(folder)], capsys)
    assert code == 0
    assert [t["path"] for t in json.loads(out)] == [
        str(folder / "a.cassette.json"),
        str(folder / "b.cassette.json"),
    ]
    code, out, _ = _show([str(folder)], capsys)
    assert code == 0 and out.count("Conversation 1") == 2


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda d: d / "nowhere", "no such file or folder", id="missing"),
        pytest.param(lambda d: d, "no *.cassette.json in this folder", id="empty-folder"),
        pytest.param(
            lambda d: _write(d / "x.cassette.json", '{"name": "x", "exchanges": ['),
            "not valid JSON",
            id="not-json",
        ),
        pytest.param(
            lambda d: _write(d / "x.cassette.json", '{"exchanges": "many"}'),
            "not a rec cassette",
            id="not-a-cassette",
        ),
        pytest.param(
            lambda d: _write(d / "oslo.evalset.json", "{}"),
            "this is an eval set (what a replay is scored against), not a cassette. "
            "Pass the recording beside it, oslo.cassette.json",
            id="an-eval-set",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    make: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = make(tmp_path)
    code, out, err = _show([str(path)], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"InputError: {path}") and message in err
    assert err.count("\n") == 1


def _call_heads(lines: list[str]) -> list[str]:
    """Each model call's line joined with its wrapped continuation (latencies are longer on
    a loaded machine, so where the line wraps varies)."""
    heads: list[str] = []
    joining = False
    for line in lines:
        if line.startswith("    #"):
            heads.append(line.strip())
            joining = True
        elif (
            joining
            and line.startswith("      ")
            and not line.lstrip().startswith(("-> ", "<- ", "says: "))
        ):
            heads[-1] += " " + line.strip()
        else:
            joining = False
    return heads


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


_PLAIN = ["a", "bb", "Oslo", "x" * 30, "(city=1)", "-"]
_WORDS = st.one_of(st.sampled_from(_PLAIN), st.sampled_from(["é", "\u3000", "\x1c"]))
_SPACES = st.one_of(st.just(" "), st.sampled_from(["  ", "\t", "\n", "\r\n"]))


@settings(max_examples=400, deadline=None)
@given(
    words=st.one_of(
        st.lists(st.tuples(st.sampled_from(_PLAIN), st.just(" ")), max_size=30),
        st.lists(st.tuples(_WORDS, _SPACES), max_size=30),
    ),
    width=st.integers(1, 70),
    first=st.sampled_from(["", "    -> ", "  Turn 1  user: ", "    reply: "]),
    indent=st.sampled_from(["", "  ", "      ", " " * 16]),
)
def test_text_wraps_as_textwrap_wraps_it(words, width, first, indent):
    """``rec show``'s text wraps line for line as it did through ``textwrap`` (its own
    wrapping is only faster), whatever the whitespace."""
    text = "".join(space + word if at else word for at, (word, space) in enumerate(words))
    expected: list[str] = []
    for paragraph in text.splitlines() or [""]:
        head = first if not expected else indent
        wrapped = textwrap.wrap(
            paragraph,
            max(width, len(head) + 1),
            initial_indent=head,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
        expected.extend(wrapped or [head.rstrip()])
    assert wrap_words(text, width, first=first, indent=indent) == expected
