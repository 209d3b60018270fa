"""An upstream that misbehaves on command (standin's Reply behaviours): it hangs, cuts the
connection at byte N, sends huge and deeply nested bodies or broken encodings. The client
gets what the upstream did, the recorder stays healthy, and what completed is recorded."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassettes._cassette import SseBody, load_cassette
from rec.standin.replies import FAKE_API_KEY, Reply, ScriptedResponder, StandinRequest
from recorder._recorder import Recorder
from recorder._traffic import Upstreams
from replayer._replay_api import replay

from .harness import STREAM, UNARY

pytestmark = pytest.mark.faults

HEADERS = {"x-goog-api-key": FAKE_API_KEY}
BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def _post(url: str, path: str, *, timeout: float = 60) -> tuple[int, bytes]:
    with httpx.Client(trust_env=False, timeout=timeout) as client:
        with client.stream("POST", url + path, json=BODY, headers=HEADERS) as response:
            return response.status_code, b"".join(response.iter_raw())


def test_a_hanging_upstream_holds_only_its_own_client(tmp_path: Path, standin_factory: Any) -> None:
    def responder(request: StandinRequest) -> Reply:
        text = request.contents[-1]["parts"][0]["text"]
        return Reply(hang=True) if text == "hang" else Reply.text("fine")

    api = standin_factory(responder)
    with Recorder(
        tmp_path, name="hang", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        with httpx.Client(trust_env=False, timeout=httpx.Timeout(3.0)) as client:
            hung = {"contents": [{"role": "user", "parts": [{"text": "hang"}]}]}
            with pytest.raises(httpx.ReadTimeout):
                client.post(rec.url + UNARY, json=hung, headers=HEADERS)
        for _ in range(3):
            assert _post(rec.url, UNARY)[0] == 200
    assert len(load_cassette(tmp_path / "hang.cassette.json").exchanges) == 3


def test_cuts_at_random_bytes(
    tmp_path: Path, standin_factory: Any, fault_rng: random.Random
) -> None:
    text = " ".join(f"word{i}" for i in range(400))
    full_unary = Reply.raw(
        json.dumps({"candidates": [{"content": {"parts": [{"text": text}]}}]}).encode()
    )
    stream = Reply.text(text, chunks=8)
    cuts = [fault_rng.randrange(1, len(full_unary.body or b"")) for _ in range(3)]
    replies = [full_unary.replace(cut_at=n) for n in cuts] + [
        stream.replace(cut_at=fault_rng.randrange(50, 2000))
    ]
    api = standin_factory(ScriptedResponder([*replies, Reply.text("after")], repeat_last=True))
    with Recorder(
        tmp_path, name="cut", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        for _ in cuts:
            with pytest.raises(httpx.HTTPError):  # as the upstream did
                _post(rec.url, UNARY)
        with pytest.raises(httpx.HTTPError):
            _post(rec.url, STREAM)
        assert _post(rec.url, UNARY)[0] == 200  # healthy afterwards
    cassette = load_cassette(tmp_path / "cut.cassette.json")
    [cut_stream, after] = cassette.exchanges  # a cut unary body is not a response to keep
    assert isinstance(cut_stream.response.body, SseBody) and not cut_stream.response.body.complete
    assert after.response.status == 200


def test_huge_and_deep_bodies_round_trip(tmp_path: Path, standin_factory: Any) -> None:
    huge = json.dumps(
        {"candidates": [{"content": {"parts": [{"text": "z" * 8_000_000}]}}]}
    ).encode()
    deep = b'{"a": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    api = standin_factory(ScriptedResponder([Reply.raw(huge), Reply.raw(deep)]))
    with Recorder(
        tmp_path, name="big", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        assert _post(rec.url, UNARY) == (200, huge)
        assert _post(rec.url, UNARY) == (200, deep)
    api.stop()
    with replay(tmp_path / "big.cassette.json", point_clients=False) as replaying:
        assert _post(replaying.url, UNARY)[1] in (huge, deep)
        assert _post(replaying.url, UNARY)[1] in (huge, deep)
    assert replaying.misses == []


def test_upstream_userinfo_and_a_client_authorization_header_are_not_a_502(
    tmp_path: Path, standin_factory: Any
) -> None:
    """Item 6: `--upstream https://user:pass@gateway` and a client that sends its own
    `Authorization` (Vertex's bearer token): the upstream's userinfo wins, one header is
    sent, and the client is answered."""
    password = "FAKEgateway-password-0123"
    api = standin_factory(lambda request: Reply.text("fine"))
    upstream = api.url.replace("http://", f"http://deploy:{password}@")
    with Recorder(
        tmp_path, name="auth", upstreams=Upstreams(gemini=upstream)
    ).running_in_thread() as rec:
        with httpx.Client(trust_env=False, timeout=60) as client:
            response = client.post(
                rec.url + UNARY,
                json=BODY,
                headers={**HEADERS, "authorization": "Bearer FAKEclient-bearer-0123456789"},
            )
    assert response.status_code == 200, response.text
    assert api.requests[-1].headers["authorization"].startswith("Basic ")
    stored = (tmp_path / "auth.cassette.json").read_text()
    assert password not in stored and "FAKEclient-bearer" not in stored
