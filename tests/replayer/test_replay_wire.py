"""A replayed answer on the wire, read with a raw socket: a whole response is one write."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlsplit

from cassettes._cassette_writer import save_cassette
from replayer._replay_api import replay
from tests.factories import MODEL, gemini_request, make_cassette


def test_a_whole_replayed_answer_reaches_the_client_in_one_write(
    tmp_path: Path, loopback_only: object
) -> None:
    """The status line, headers and body leave in one write: a client blocked reading
    gets the whole answer when it wakes, and is not woken once for the headers alone."""
    path = tmp_path / "one.cassette.json"
    save_cassette(make_cassette(1), path)
    body = json.dumps(gemini_request("Question 0")).encode()
    with replay(path, point_clients=False) as replaying:
        address = urlsplit(replaying.url)
        assert address.hostname is not None and address.port is not None
        head = (
            f"POST /v1beta/models/{MODEL}:generateContent HTTP/1.1\r\n"
            f"Host: {address.netloc}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        )
        with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
            sock.sendall(head.encode("ascii") + body)
            first = sock.recv(1 << 20)  # returns with the first segment that arrives
    status, _, rest = first.partition(b"\r\n\r\n")
    assert status.startswith(b"HTTP/1.1 200"), first[:200]
    headers = dict(
        line.split(": ", 1) for line in status.decode("latin-1").lower().split("\r\n")[1:]
    )
    assert len(rest) == int(headers["content-length"])  # the body came with the headers
    assert json.loads(rest)["candidates"][0]["content"]["parts"][0]["text"] == "Answer 0"
    assert replaying.served == 1
