"""Which recorded exchanges a response waits for (pure: times, conversations, requests)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

import pytest

from cassettes._cassette import Exchange, LazyExchanges, load_cassette
from cassettes._cassette_writer import save_cassette
from replayer._completion_order import CompletionOrder
from tests.factories import (
    function_call_content,
    function_response_content,
    gemini_request,
    gemini_response,
    make_cassette,
    make_exchange,
    user_content,
)

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

    from cassettes._cassette_writer import save_cassette
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

    from cassettes._cassette import load_cassette
    from cassettes._cassette_writer import save_cassette
    from replayer._replay_handler import LoadedCassette, ReplayHandler
    from tests.factories import make_cassette

    path = Path(str(tmp_path)) / "branches.cassette.json"
    save_cassette(make_cassette([SLOW, FAST]), path)
    loaded = [LoadedCassette(path, load_cassette(path))]
    slow = loaded[0].cassette.exchanges[0]
    assert ReplayHandler(loaded).completion.waits_for(slow) == []
    assert ReplayHandler(loaded, ordered=True).completion.waits_for(slow) != []


# -- calls that did not overlap: the session's call that ended last before one started --


def _agent_call(
    id: int,
    start_ms: float,
    agent: str,
    contents: list[str | dict[str, object]],
    *,
    reply: dict[str, object],
    session: str = "",
) -> Exchange:
    """A call of ADK agent ``agent`` (named as ADK names it in the system instruction);
    ``session`` changes the instruction (a dynamic one), not the contents."""
    instruction = f'You are an agent. Your internal name is "{agent}".{session}'
    return make_exchange(
        id,
        request_body=gemini_request(contents, system_instruction=instruction),
        response_body=reply,
        recorded_at=(T0 + dt.timedelta(milliseconds=start_ms)).isoformat(),
        duration_ms=5,
    )


def _fan_out(at_ms: float, first: int, *, session: str = "") -> list[Exchange]:
    """One session of a ParallelAgent (weather, flights) and a merger where the weather
    branch ran whole before the flights branch's first call (a loaded machine), 10 ms
    apart."""
    opening = user_content("Plan a trip")
    weather = ("get_weather", {"city": "Rome"})
    flights = ("find_flights", {"destination": "Rome"})
    merged = [opening] + [
        user_content(f"For context: [{agent}] said: {said}")
        for agent, said in (("weather_agent", "Sunny"), ("flights_agent", "RO101"))
    ]
    calls: list[tuple[str, list[str | dict[str, object]], dict[str, object]]] = [
        ("weather_agent", [opening], gemini_response(function_calls=[weather])),
        (
            "weather_agent",
            [opening, function_call_content(weather), function_response_content(weather)],
            gemini_response("Sunny"),
        ),
        ("flights_agent", [opening], gemini_response(function_calls=[flights])),
        (
            "flights_agent",
            [opening, function_call_content(flights), function_response_content(flights)],
            gemini_response("RO101"),
        ),
        ("merger", list(merged), gemini_response("Go")),
    ]
    return [
        _agent_call(first + n, at_ms + 10 * n, agent, contents, reply=reply, session=session)
        for n, (agent, contents, reply) in enumerate(calls)
    ]


def test_a_branch_that_ran_whole_before_the_other_began_is_answered_first() -> None:
    weather_first, weather_last, flights_first, flights_last, merger = _fan_out(0, 0)
    order = CompletionOrder([[weather_first, weather_last, flights_first, flights_last, merger]])
    assert order.waits_for(flights_first) == [weather_last]
    # The others wait for the call they continue (or the last branch call): at no cost.
    assert order.waits_for(weather_last) == [weather_first]
    assert order.waits_for(flights_last) == [flights_first]
    assert order.waits_for(merger) == [flights_last]


@pytest.mark.parametrize("lazy", [False, True], ids=["loaded", "lazily-loaded"])
def test_the_next_session_opening_with_the_same_turn_waits_for_nothing(
    lazy: bool, tmp_path: Path
) -> None:
    """Cases of one cassette that open with the same user turn are separate sessions:
    replaying one alone must not hold its first call for the case before it."""
    first = _fan_out(0, 0, session=" Session 1.")
    second = _fan_out(1000, 5, session=" Session 2.")
    exchanges: Sequence[Exchange] = [*first, *second]
    if lazy:
        path = tmp_path / "sessions.cassette.json"
        save_cassette(make_cassette(exchanges), path)
        exchanges = load_cassette(path, lazy=True).exchanges
    order = CompletionOrder([exchanges])
    opening = exchanges[5]
    assert order.waits_for(opening) == []
    assert [e.id for e in order.waits_for(exchanges[7])] == [6]  # its own fan-out holds


def test_one_case_replayed_alone_is_not_held_for_the_case_before_it(tmp_path: Path) -> None:
    """The second of two cases opening with the same user turn, replayed alone (``-k``, a
    worker of ``--parallel``), is answered call by call without a hold."""
    import json

    import httpx

    from replayer._replay_api import replay

    path = tmp_path / "sessions.cassette.json"
    second = _fan_out(1000, 5, session=" Session 2.")
    save_cassette(make_cassette([*_fan_out(0, 0, session=" Session 1."), *second]), path)
    with replay(path, ordered=True) as running:
        for call in second:
            url = running.url + call.request.url.split("googleapis.com", 1)[1]
            body = json.dumps(call.request.body.value)  # type: ignore[union-attr]
            reply = httpx.post(url, content=body, headers={"content-type": "application/json"})
            assert reply.status_code == 200, reply.text
        assert running.handler.served == len(second)
        assert running.handler.completion.held == 0


def test_a_lazily_loaded_cassette_reads_only_the_calls_of_the_conversation_asked(
    tmp_path: Path,
) -> None:
    """Which session a call is in is read from the calls of its conversation recorded up to
    it: the other conversations' calls (another first user turn, in the side index) and
    the later ones stay unparsed."""
    others = [_call(i, i * 1000, 10, agent="a", first=f"Question {i}") for i in range(40)]
    asked = _fan_out(100_000, len(others))
    later = _call(len(others) + len(asked), 200_000, 10, agent="a", first="Plan a trip")
    path = tmp_path / "many.cassette.json"
    save_cassette(make_cassette([*others, *asked, later]), path)
    lazy = load_cassette(path, lazy=True).exchanges
    assert isinstance(lazy, LazyExchanges)
    order = CompletionOrder([lazy])
    flights_first = lazy[len(others) + 2]
    assert [e.id for e in order.waits_for(flights_first)] == [len(others) + 1]
    parsed = {p for p in range(len(lazy)) if lazy.parsed(p)}
    assert parsed == {len(others) + n for n in range(3)}
