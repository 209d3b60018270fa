"""Which recorded exchanges a response waits for (pure: times, conversations, requests)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from cassettes._cassette import Exchange, LazyExchanges, load_cassette, save_cassette
from replayer._completion_order import CompletionOrder
from tests.factories import gemini_request, make_cassette, make_exchange

T0 = dt.datetime(2026, 1, 15, 9, 30, tzinfo=dt.timezone.utc)


def _call(
    id: int, start_ms: float, duration_ms: float, *, agent: str, first: str = "Report please"
) -> Exchange:
    return make_exchange(
        id,
        request_body=gemini_request(first, system_instruction=f"You are {agent}."),
        recorded_at=(T0 + dt.timedelta(milliseconds=start_ms)).isoformat(),
        duration_ms=duration_ms,
    )


SLOW = _call(0, 0, 1000, agent="weather_branch")
FAST = _call(1, 10, 50, agent="news_branch")
MERGER = _call(2, 1100, 20, agent="merger")


WAITS = (
    ("exchanges", "waits"),
    [
        pytest.param([SLOW, FAST, MERGER], {0: [1], 1: [], 2: []}, id="the-slow-branch-waits"),
        pytest.param(
            [SLOW, _call(1, 10, 50, agent="news_branch", first="Another session")],
            {0: [], 1: []},
            id="another-conversation-never-waits",
        ),
        pytest.param(
            [SLOW, _call(1, 10, 50, agent="weather_branch")],
            {0: [], 1: []},
            id="identical-requests-are-interchangeable",
        ),
        pytest.param(
            [_call(0, 0, 100, agent="a"), _call(1, 100, 100, agent="b")],
            {0: [], 1: []},
            id="one-after-the-other-is-no-overlap",
        ),
        pytest.param(
            [
                _call(0, 0, 900, agent="a"),
                _call(1, 5, 300, agent="b"),
                _call(2, 8, 600, agent="c"),
            ],
            {0: [1, 2], 1: [], 2: [1]},
            id="three-branches",
        ),
    ],
)


@pytest.mark.parametrize(*WAITS)
def test_waits_for(exchanges: list[Exchange], waits: dict[int, list[int]]) -> None:
    order = CompletionOrder([exchanges])
    got = {e.id: sorted(w.id for w in order.waits_for(e)) for e in exchanges}
    assert got == waits


@pytest.mark.parametrize(*WAITS)
def test_waits_for_in_a_lazily_loaded_cassette(
    exchanges: list[Exchange], waits: dict[int, list[int]], tmp_path: Path
) -> None:
    # Decided when an exchange is first asked about, from the calls recorded alongside it.
    path = tmp_path / "branches.cassette.json"
    save_cassette(make_cassette([*exchanges, _call(9, 60_000, 10, agent="later")]), path)
    lazy = load_cassette(path, lazy=True).exchanges
    assert isinstance(lazy, LazyExchanges)
    order = CompletionOrder([lazy])
    got = {}
    for position in range(len(exchanges)):
        asked = lazy[position]
        got[asked.id] = sorted(w.id for w in order.waits_for(asked))
    assert got == waits
    assert not lazy.parsed(len(exchanges))  # recorded a minute later: never read


def test_an_answered_exchange_is_waited_for_no_more() -> None:
    order = CompletionOrder([[SLOW, FAST]])
    assert order.waits_for(SLOW) == [FAST]
    order.answered(FAST)
    assert order.waits_for(SLOW) == []


def test_a_second_round_waits_again() -> None:
    # --num-runs 2 replays the same recording twice: the order holds in each run.
    order = CompletionOrder([[SLOW, FAST]])
    order.answered(FAST)
    order.answered(SLOW)
    assert order.waits_for(SLOW) == [FAST]
    order.answered(FAST)
    assert order.waits_for(SLOW) == []


def test_exchanges_of_different_cassettes_never_wait_for_each_other() -> None:
    order = CompletionOrder([[SLOW], [FAST]])
    assert order.waits_for(SLOW) == []


def test_a_tool_s_own_call_is_not_a_model_call() -> None:
    tool = FAST.model_copy(update={"origin": "tool"})
    assert CompletionOrder([[SLOW, tool]]).waits_for(SLOW) == []


def test_a_response_whose_predecessor_never_comes_is_still_played(tmp_path: object) -> None:
    # The replay server holds SLOW for FAST, which this client never asks for: after the
    # bounded wait SLOW is played anyway (nothing deadlocks).
    import json
    from pathlib import Path

    import httpx

    from cassettes._cassette import save_cassette
    from replayer._replay_api import replay
    from tests.factories import make_cassette

    path = Path(str(tmp_path)) / "branches.cassette.json"
    save_cassette(make_cassette([SLOW, FAST]), path)
    with replay(path, ordered=True) as running:
        url = running.url + SLOW.request.url.split("googleapis.com", 1)[1]
        body = json.dumps(SLOW.request.body.value)  # type: ignore[union-attr]
        reply = httpx.post(url, content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["candidates"][0]["content"]["parts"][0]["text"] == "Answer 0"


def test_only_replays_that_run_the_agent_hold_responses(tmp_path: object) -> None:
    """`rec serve` and `replay()` serve clients that may ask in any order: nothing is held
    there (a client sending one request at a time would wait the bound for each held call);
    `rec replay`, AgentEvaluator and the `rec` fixture run the agent and ask for the order."""
    from pathlib import Path

    from cassettes._cassette import load_cassette, save_cassette
    from replayer._replay_handler import LoadedCassette, ReplayHandler
    from tests.factories import make_cassette

    path = Path(str(tmp_path)) / "branches.cassette.json"
    save_cassette(make_cassette([SLOW, FAST]), path)
    loaded = [LoadedCassette(path, load_cassette(path))]
    slow = loaded[0].cassette.exchanges[0]
    assert ReplayHandler(loaded).completion.waits_for(slow) == []
    assert ReplayHandler(loaded, ordered=True).completion.waits_for(slow) != []
