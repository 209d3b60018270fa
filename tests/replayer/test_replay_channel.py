"""The typed replay channel: a miss is found by the id its error envelope carries."""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from google.genai import errors as genai_errors

from cassettes._cassette_writer import save_cassette
from cassettes._divergence import miss_error_body, miss_id_in
from cassettes._errors import ReplayMiss
from replayer._replay_api import replay
from replayer._replay_channel import ReplayChannel
from tests.factories import MODEL, make_cassette


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    path = tmp_path / "one.cassette.json"
    save_cassette(make_cassette(1), path)  # holds "Question 0" only
    return path


def _ask(text: str) -> genai_errors.APIError:
    client = genai.Client()
    with pytest.raises(genai_errors.APIError) as caught:
        client.models.generate_content(model=MODEL, contents=text)
    return caught.value


def test_each_client_error_leads_to_its_own_miss(cassette: Path, loopback_only: object) -> None:
    """Two identical misses have identical messages: only an id tells them apart."""
    with replay(cassette) as replaying:
        first, second = _ask("Question 9"), _ask("Question 9")
        other = _ask("Another question entirely")
    misses = replaying.channel.misses
    assert len(misses) == 3 and str(misses[0]) == str(misses[1])
    assert replaying.channel.miss_behind(first) is misses[0]
    assert replaying.channel.miss_behind(second) is misses[1]
    assert replaying.channel.miss_behind(other) is misses[2]


def test_a_miss_is_found_through_the_exceptions_that_wrap_it(
    cassette: Path, loopback_only: object
) -> None:
    with replay(cassette) as replaying:
        error = _ask("Question 9")
    try:
        try:
            raise error
        except genai_errors.APIError as exc:
            raise RuntimeError("the agent gave up") from exc
    except RuntimeError as wrapped:
        assert replaying.channel.miss_behind(wrapped) is replaying.misses[0]


def test_another_channels_miss_is_not_claimed(cassette: Path, loopback_only: object) -> None:
    with replay(cassette):
        error = _ask("Question 9")
    assert ReplayChannel().miss_behind(error) is None
    assert ReplayChannel().miss_behind(ValueError("Question 9")) is None


def test_served_exchanges_and_misses_since_a_mark(cassette: Path, loopback_only: object) -> None:
    channel = ReplayChannel()
    with replay(cassette, channel=channel):
        client = genai.Client()
        client.models.generate_content(model=MODEL, contents="Question 0")
        mark = channel.mark()
        client.models.generate_content(model=MODEL, contents="Question 0")
        _ask("Question 9")
    served, missed = channel.since(mark)
    assert [e.id for e in served] == [0]
    assert len(missed) == 1 and "no recording matches" in str(missed[0])
    assert len(channel.exchanges) == 2


@pytest.mark.parametrize(
    ("envelope", "expected"),
    [
        pytest.param(miss_error_body(ReplayMiss("x"), miss_id="ab-1"), "ab-1", id="rec-miss"),
        pytest.param([miss_error_body(ReplayMiss("x"), miss_id="ab-2")], "ab-2", id="in-a-list"),
        pytest.param(miss_error_body(ReplayMiss("x")), None, id="no-id"),
        pytest.param({"error": {"code": 404, "details": [{"reason": "OTHER"}]}}, None, id="other"),
        pytest.param({"error": "text"}, None, id="odd-shape"),
        pytest.param(None, None, id="nothing"),
    ],
)
def test_miss_id_in(envelope: object, expected: str | None) -> None:
    assert miss_id_in(envelope) == expected
