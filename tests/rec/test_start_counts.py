"""``rec start``'s closing count agrees with what it echoed while recording."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from cassettes._cassette import load_cassette
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from tests.agents.travel_recording import STATE
from tests.rec_process import DRIVER, REPO, rec_start

ECHO = re.compile(r"#(\d+) POST \S+ -> \d+")


def test_start_echo_and_count_agree_when_a_tool_calls_its_api(
    tmp_path: Path, standin: StandinGemini
) -> None:
    """The tool's own HTTP call is captured in the agent's process, not by the proxy: it is
    not echoed as ``#N``, so the count names it apart from the echoed exchanges."""
    out = tmp_path / "rec"
    done = rec_start(
        out,
        "counted",
        standin.url,
        sys.executable,
        str(DRIVER),
        "tests.agents.travel",
        "Find flights from Paris to Rome on 2025-05-01 and convert 98 EUR to USD",
        PYTHONPATH=str(REPO),
        GOOGLE_API_KEY=FAKE_API_KEY,
        TRAVEL_RATES_URL=f"{standin.url}/rates",
        DRIVE_STATE=json.dumps(STATE),
    )
    assert done.returncode == 0, done.stderr
    echoed = [int(n) for n in ECHO.findall(done.stderr)]
    cassette = load_cassette(out / "counted.cassette.json")
    tools = [e for e in cassette.exchanges if e.origin == "tool"]
    assert tools, "the travel agent's rates tool was not captured"
    assert echoed == list(range(len(echoed))) and echoed, done.stderr
    said = re.search(
        r"\((\d+) new exchanges \+ (\d+) tool call\(s\)[^,]*, (\d+) in all", done.stderr
    )
    assert said is not None, done.stderr
    assert int(said[1]) == len(echoed), done.stderr
    assert int(said[2]) == len(tools)
    assert int(said[3]) == len(cassette.exchanges) == len(echoed) + len(tools)


def test_start_banner_names_each_upstream_with_its_path_on_the_proxy(tmp_path: Path) -> None:
    """An OpenAI-only program sees where its calls go, not only the Gemini upstream; the
    upstreams are shown without the credentials a base URL carries."""
    done = rec_start(
        tmp_path / "rec",
        "banner",
        "http://127.0.0.1:9/gemini",
        sys.executable,
        "-c",
        "pass",
        OPENAI_BASE_URL="http://user:fake-secret@127.0.0.1:9/v1",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9/claude",
    )
    assert done.returncode == 0, done.stderr
    banner = dict(
        re.findall(r"^rec: proxy (http://127\.0\.0\.1:\d+\S*) -> (.+)$", done.stderr, re.M)
    )
    root = min(banner, key=len)
    assert banner == {
        root: "Gemini API http://127.0.0.1:9/gemini, "
        "Vertex AI https://LOCATION-aiplatform.googleapis.com",
        f"{root}/openai": "OpenAI http://127.0.0.1:9/v1",
        f"{root}/anthropic": "Anthropic http://127.0.0.1:9/claude",
    }
    assert "fake-secret" not in done.stderr
