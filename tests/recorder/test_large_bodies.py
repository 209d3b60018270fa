"""A large response body goes to the journal in screened pieces while it passes."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassettes._bodies import IncrementalDecoder
from cassettes._cassette import JsonBody, load_cassette
from cassettes._redaction import (
    exchange_clear_at_a_glance,
    scan_for_secrets,
    text_clear_at_a_glance,
)
from rec.standin.replies import FAKE_API_KEY, Reply, ScriptedResponder
from recorder import _body_screen
from recorder._body_screen import BodyScreen, gil_free
from recorder._capture_files import ChunkedExchange, read_journal
from recorder._exchange_journal import Pieces
from recorder._forwarding import _PIECE
from recorder._journal import BodyChunk, Journal, _buffers
from recorder._journal_lines import exchange_lines
from recorder._recorder import Recorder
from recorder._recording_state import RecordingPaths
from recorder._traffic import Upstreams
from tests.factories import make_exchange
from tests.journaled import until
from tests.rec_process import rec_argv, rec_environment, rec_run

UNARY = "/v1beta/models/gemini-2.0-flash:generateContent"
HEADERS = {"x-goog-api-key": FAKE_API_KEY, "content-type": "application/json"}
REQUEST = b'{"contents": [{"role": "user", "parts": [{"text": "draw"}]}]}'
TOOL_KEY = "weather-tool-key-4711"
PREFIX = '{"candidates": [{"content": {"role": "model", "parts": [{"text": "'


def _answer(size: int, secret: str = "", at: int = 0) -> bytes:
    """A Gemini answer of about ``size`` bytes: a text part (holding ``secret`` so that it
    starts ``at`` bytes into the body, when given), then inline image data."""
    text = "words " * 100
    if secret:
        text = "x" * (at - len(PREFIX) - 1) + " " + secret + " " + text
    data = base64.b64encode(os.urandom(size * 3 // 4)).decode("ascii")
    parts = [{"text": text}, {"inlineData": {"mimeType": "image/png", "data": data}}]
    doc = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    body = json.dumps(doc).encode()
    assert body.startswith(PREFIX.encode())
    assert not secret or body.index(secret.encode()) == at
    return body


def _fetch(url: str, headers: dict[str, str] = HEADERS) -> bytes:
    with httpx.Client(trust_env=False, timeout=120) as client:
        response = client.post(url + UNARY, headers=headers, content=REQUEST)
        assert response.status_code == 200, response.text[:300]
        return response.content


def _journal_bytes(rec: Recorder) -> bytes:
    """The journal once the one exchange fetched is settled, journaled or refused (its
    line follows its response)."""
    journal = rec._running().forwarder.journal
    until(lambda: journal.recorded + journal.refused + journal.lost >= 1)
    return rec.paths.journal.read_bytes()


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_a_large_body_is_journaled_in_pieces_and_recorded_whole(
    tmp_path: Path, standin_factory: Any, encoding: str
) -> None:
    body = _answer(3 * _PIECE)
    reply = Reply.raw(
        gzip.compress(body) if encoding == "gzip" else body,
        headers=(("Content-Encoding", encoding),),
    )
    api = standin_factory(ScriptedResponder([reply], repeat_last=True))
    with Recorder(
        tmp_path, name="big", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        assert _fetch(rec.url) == body
        journal = _journal_bytes(rec)
        contents = read_journal(RecordingPaths(tmp_path, "big").journal)
    # The pieces were written as the body passed; the exchange line after them is small.
    assert journal.count(b'{"body_chunk":0,') >= 2
    assert journal.splitlines()[-1].startswith(b'{"body_chunks":')
    assert len(journal.splitlines()[-1]) < 10_000
    (journaled,) = contents.exchanges
    assert isinstance(journaled.response.body, JsonBody)
    assert journaled.response.body.value == json.loads(body)
    (recorded,) = load_cassette(tmp_path / "big.cassette.json").exchanges
    assert recorded.response.body == journaled.response.body
    assert recorded.response.status == 200 and recorded.request.url.endswith(UNARY)


def test_a_known_credential_across_a_piece_boundary_is_redacted_and_never_written(
    tmp_path: Path, standin_factory: Any
) -> None:
    body = _answer(3 * _PIECE, secret=FAKE_API_KEY, at=_PIECE - 5)
    api = standin_factory(ScriptedResponder([Reply.raw(body)], repeat_last=True))
    with Recorder(
        tmp_path, name="echo", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        assert _fetch(rec.url) == body  # the client gets every byte, the key too
        journal = _journal_bytes(rec)
    assert FAKE_API_KEY.encode() not in journal
    (recorded,) = load_cassette(tmp_path / "echo.cassette.json").exchanges
    assert isinstance(recorded.response.body, JsonBody)
    expected = json.loads(body.replace(FAKE_API_KEY.encode(), b"<redacted>"))
    assert recorded.response.body.value == expected  # the rest exactly as it came


def test_a_credential_known_before_the_body_is_screened_in_its_first_piece(
    tmp_path: Path, standin_factory: Any
) -> None:
    # The client's own key, of no shape the screen knows: only being known finds it. The
    # screen learns it with the first piece (on the writer thread), not when the response
    # starts.
    body = _answer(3 * _PIECE, secret=TOOL_KEY, at=1000)
    api = standin_factory(ScriptedResponder([Reply.raw(body)], repeat_last=True))
    headers = {**HEADERS, "x-goog-api-key": TOOL_KEY}
    with Recorder(
        tmp_path, name="own", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        assert _fetch(rec.url, headers) == body
        journal = _journal_bytes(rec)
    assert TOOL_KEY.encode() not in journal
    (recorded,) = load_cassette(tmp_path / "own.cassette.json").exchanges
    assert isinstance(recorded.response.body, JsonBody)
    assert recorded.response.body.value == json.loads(
        body.replace(TOOL_KEY.encode(), b"<redacted>")
    )


def test_an_unknown_credential_across_a_piece_boundary_never_reaches_the_journal(
    tmp_path: Path, standin_factory: Any
) -> None:
    aws_key = "AKIA" + "Q" * 16  # an AWS access key's shape, not a real one
    body = _answer(3 * _PIECE, secret=aws_key, at=_PIECE - 9)
    api = standin_factory(ScriptedResponder([Reply.raw(body)], repeat_last=True))
    with Recorder(
        tmp_path, name="leak", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        assert _fetch(rec.url) == body
        journal = _journal_bytes(rec)
    assert rec.result is not None and rec.result.refused_exchanges == 1
    assert b"AKIA" not in journal
    assert not (tmp_path / "leak.cassette.json").exists()


def _pieces_of(screen: BodyScreen, body: bytes, cuts: list[int]) -> bytes | None:
    out = []
    for start, end in zip([0, *cuts], [*cuts, len(body)], strict=True):
        cleared = screen.feed(body[start:end])
        if cleared is None:
            return None
        out.append(cleared)
    rest = screen.finish()
    return None if rest is None else b"".join(out) + rest


@pytest.mark.parametrize(
    ("secret", "known"),
    [
        (FAKE_API_KEY, True),  # a known credential, as is
        (base64.b64encode(b"user:" + FAKE_API_KEY.encode()).decode(), True),  # base64
        ("".join(f"%{b:02x}" for b in FAKE_API_KEY.encode()), True),  # percent-encoded whole
        ("%41" + FAKE_API_KEY[1:], True),  # one character escaped (no "AIza" left)
        (FAKE_API_KEY.encode().hex(), True),  # hex
        ("AIza" + "k" * 35, False),  # a Google API key's shape
        ("ghp_" + "a1" * 18, False),  # a GitHub token's shape
    ],
)
def test_the_screen_catches_a_credential_split_exactly_in_two(secret: str, known: bool) -> None:
    body = _answer(2 * _PIECE, secret=secret, at=_PIECE - 7)
    middle = _PIECE - 7 + len(secret) // 2
    known_secrets = {FAKE_API_KEY} if known else set()
    assert _pieces_of(BodyScreen(known_secrets), body, [middle]) is None
    # Without it, the same body in the same pieces is cleared whole and byte for byte.
    clean = body.replace(secret.encode(), b"q" * len(secret))
    assert _pieces_of(BodyScreen({FAKE_API_KEY}), clean, [middle]) == clean


def test_the_screen_looks_inside_inline_data_as_the_scan_does() -> None:
    key = FAKE_API_KEY.encode()
    data = base64.b64encode(os.urandom(300_000) + key + os.urandom(300_001)).decode()
    doc = {"parts": [{"inlineData": {"mimeType": "image/png", "data": data}}]}
    body = json.dumps(doc).encode()
    assert _pieces_of(BodyScreen({FAKE_API_KEY}), body, [400_000, 400_010]) is None
    shaped = json.dumps({"inlineData": {"data": "AKIA" + "Q" * 16 + data}}).encode()
    assert _pieces_of(BodyScreen(set()), shaped, [100_000]) is None
    random = json.dumps({"inlineData": {"data": data}}).encode()
    assert _pieces_of(BodyScreen(set()), random, [8, 100_000, 100_001]) == random


def test_pieces_without_their_exchange_line_are_ignored_and_torn_ones_counted(
    tmp_path: Path,
) -> None:
    journal = Journal[Any](tmp_path / "j.jsonl")
    head = make_exchange(7)
    head = head.model_copy(update={"response": head.response.model_copy(update={"body": None})})

    async def main() -> None:
        for exchange_id, data in ((7, b'{"a":\n "one'), (7, b'two"}'), (9, b"orphan")):
            await journal.submit_line(lambda i=exchange_id, d=data: BodyChunk(body_chunk=i, data=d))
        await journal.submit_line(lambda: ChunkedExchange(body_chunks=2, exchange=head))
        await journal.append(make_exchange(8))

    asyncio.run(main())
    journal.close()
    contents = read_journal(journal.path)
    assert [e.id for e in contents.exchanges] == [7, 8] and contents.torn_lines == 0
    assert isinstance(contents.exchanges[0].response.body, JsonBody)
    assert contents.exchanges[0].response.body.value == {"a": "onetwo"}
    assert exchange_lines(journal.path) == 2  # what `rec status` counts: not the pieces
    # Cut inside the second piece (a crash mid-write): the exchange is incomplete.
    text = journal.path.read_bytes()
    journal.path.write_bytes(text[: text.index(b"two") + 1])
    contents = read_journal(journal.path)
    assert contents.exchanges == [] and contents.torn_lines == 1


CLIENT = textwrap.dedent(
    """
    import sys
    from google import genai
    client = genai.Client()
    answer = client.models.generate_content(model="gemini-2.0-flash", contents="draw")
    data = answer.candidates[0].content.parts[1].inline_data.data
    open(sys.argv[1], "w").write(str(len(data)))  # the client saw the exchange complete
    import time
    time.sleep(600)
    """
)


@pytest.mark.slow
def test_a_body_journaled_in_pieces_survives_a_sigkill(
    tmp_path: Path, standin_factory: Any
) -> None:
    body = _answer(3 * _PIECE)
    api = standin_factory(ScriptedResponder([Reply.raw(body)], repeat_last=True))
    out, seen, script = tmp_path / "rec", tmp_path / "seen.txt", tmp_path / "client.py"
    script.write_text(CLIENT)
    recorder = subprocess.Popen(
        rec_argv("start", "--out", str(out), "--name", "big", "--upstream", api.url, "--")
        + [sys.executable, str(script), str(seen)],
        env=rec_environment(GOOGLE_API_KEY=FAKE_API_KEY),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not (seen.exists() and seen.read_text()) and time.monotonic() < deadline:
            assert recorder.poll() is None, recorder.communicate()[1]
            time.sleep(0.05)
        assert seen.exists(), "the client never completed its call through the recorder"
    finally:
        os.killpg(recorder.pid, signal.SIGKILL)
        recorder.wait(timeout=60)
    assert b'{"body_chunk":' in RecordingPaths(out, "big").journal.read_bytes()
    stop = rec_run("stop", "--out", str(out), timeout=300)
    assert stop.returncode == 0, stop.stderr
    (recorded,) = load_cassette(out / "big.cassette.json").exchanges
    assert isinstance(recorded.response.body, JsonBody)
    assert recorded.response.body.value == json.loads(body)


def test_the_scan_sets_inline_data_aside_yet_finds_what_it_holds() -> None:
    """The scan's glance does not copy a large inline image into its JSON text, and still
    finds a whole API key in it, a shape beside it, and a known credential decoded."""
    data = base64.b64encode(os.urandom(3 * _PIECE)).decode()
    part = {"inlineData": {"mimeType": "image/png", "data": data}}
    clean = {"parts": [{"text": "a picture"}, part]}
    assert scan_for_secrets(clean) == []
    keyed = {"parts": [{"inlineData": {"data": FAKE_API_KEY + "/" + data}}]}
    assert [hit.kind for hit in scan_for_secrets(keyed)] == ["Google API key"]
    shaped = {"parts": [{"text": "ghp_" + "a1" * 18}, part]}
    assert [hit.kind for hit in scan_for_secrets(shaped)] == ["GitHub token"]
    hidden = base64.b64encode(os.urandom(1000) + b"sekrit-value-123" + os.urandom(1000))
    encoded = {"parts": [{"inlineData": {"data": hidden.decode()}}]}
    hits = scan_for_secrets(encoded, known_secrets={"sekrit-value-123"})
    assert "known credential (base64-encoded)" in [hit.kind for hit in hits]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's memmem and strspn")
def test_the_screen_searches_a_piece_without_the_gil_as_bytes_methods_would() -> None:
    """Over a long span the screen's searches run in the C library (which releases the
    GIL), and find exactly what ``bytes.find`` and ``translate`` find, at every edge."""
    assert gil_free()
    text = base64.b64encode(os.urandom(300_000))
    needle = b"NEEDLE-Q"
    for at in (0, 1, 65_536, len(text) - len(needle)):
        planted = text[:at] + needle + text[at + len(needle) :]
        for start, end in ((0, len(planted)), (at, at + 70_000), (at + 1, len(planted))):
            assert _body_screen._find(planted, needle, start, end) == planted.find(
                needle, start, end
            ), (at, start, end)
    for at in (0, 70_000, len(text) - 1):
        spaced = text[:at] + b" " + text[at + 1 :]
        assert _body_screen._all_base64(spaced, 0, len(spaced)) is False, at
        assert _body_screen._all_base64(spaced, at + 1, len(spaced)) is True, at
    quoted = text + b'"' + b" " * 10
    assert _body_screen._all_base64(quoted, 0, len(text)) is True  # stops at the quote


def test_a_credential_learnt_while_the_body_passes_is_screened_in_the_rest() -> None:
    body = _answer(2 * _PIECE, secret=TOOL_KEY, at=_PIECE + 100)  # a tool's key: no shape
    first, second = body[:_PIECE], body[_PIECE:]
    screen = BodyScreen(set())
    assert screen.feed(first)
    screen.learn({TOOL_KEY})
    assert screen.feed(second) is None
    # Not told, the same pieces pass (the key is no shape the screen would know).
    unaware = BodyScreen(set())
    assert unaware.feed(first) and unaware.feed(second) is not None

    async def through_pieces() -> list[BodyChunk | None]:
        """The loop's side: the live set grows between two pieces; the writer thread's
        screen hears of it with the next piece."""
        loop = asyncio.get_running_loop()
        lines: list[BodyChunk | None] = []

        def submit(build: Any) -> asyncio.Future[Any]:
            line = build()
            lines.append(line)
            done = loop.create_future()
            done.set_result(line)
            return done

        known: set[str] = set()
        pieces = Pieces(0, BodyScreen(known), IncrementalDecoder(None), submit, known)
        received = [first]
        pieces.send(received)
        known.add(TOOL_KEY)  # a tool's key, first seen mid-body
        received.append(second)
        pieces.send(received, last=True)
        assert pieces.screen.failed
        return lines

    lines = asyncio.run(through_pieces())
    assert lines[0] is not None and lines[1] is None
    assert TOOL_KEY.encode() not in b"".join(line.data for line in lines if line)


def test_a_piece_is_written_as_it_is_and_small_lines_together() -> None:
    piece = os.urandom(1 << 17)
    written = _buffers([b"head\n", piece, b"\n", b"{}\n"])
    assert written == [b"head\n", piece, b"\n{}\n"]
    assert written[1] is piece  # not copied into a joined group


def test_a_large_inline_image_is_clear_at_a_glance_unless_it_holds_a_whole_key() -> None:
    """rec stop's glance sets inline data aside as the scan does: random base64 spells
    ``AIza`` by chance (about once every 16 MB), which is no key; a whole key still counts,
    and so does ``AIza`` in plain text."""
    data = base64.b64encode(os.urandom(3 * _PIECE)).decode()
    data = data[:1000] + "AIza+/" + data[1006:]
    image = {"inlineData": {"mimeType": "image/png", "data": data}}

    def exchange(*parts: dict[str, Any]) -> Any:
        return make_exchange(response_body={"candidates": [{"content": {"parts": parts}}]})

    clean = exchange({"text": "a picture"}, image)
    assert scan_for_secrets(clean) == []
    assert exchange_clear_at_a_glance(clean)
    evalset_spelling = {"inline_data": {"data": data, "mime_type": "image/png"}}
    assert text_clear_at_a_glance(json.dumps({"parts": [evalset_spelling]}, indent=2))
    keyed = {"inlineData": {"mimeType": "image/png", "data": "AIza" + "k" * 35 + "/" + data}}
    assert scan_for_secrets(exchange(keyed))
    assert not exchange_clear_at_a_glance(exchange(keyed))
    assert not exchange_clear_at_a_glance(exchange({"text": "AIza"}, image))
    other = {"inlineData": {"displayName": "x", "data": data}}  # not where the glance looks
    assert not exchange_clear_at_a_glance(exchange(other))


def test_the_screen_finds_a_bytes_value_where_its_pattern_would() -> None:
    """The screen tries its opener pattern only before a key the pattern spells (found
    without the GIL); it finds the same leftmost opener the pattern's search does."""
    pieces = [b"{", b",", b" ", b"\n", b":", b'"', b"x", b'\\"', b'"data"', b'"image/png"']
    pieces += [b'"thoughtSignature"', b'"base64"', b'"inlineData"', b'"inline_data"']
    pieces += [b'"mimeType"', b'{"mimeType": "a", "data": "']
    chooser = random.Random(22)
    for _ in range(5000):
        text = b"".join(chooser.choice(pieces) for _ in range(chooser.randint(0, 30)))
        pos = chooser.randint(0, len(text))
        expected = _body_screen._OPENER.search(text, pos)
        found = _body_screen._next_opener(text, pos)
        assert (found and found.span()) == (expected and expected.span()), (text, pos)
    long = b"x" * 200_000 + b', "inlineData": {"data": "' + b"y" * 100_000
    found = _body_screen._next_opener(long, 0)
    assert found is not None and found.end() == 200_026
