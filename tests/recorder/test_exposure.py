"""The recorder is never an open door: a request path never picks
the upstream host, and only the recording's owner can use its control endpoints."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassettes._cassette import Cassette, Exchange
from cassettes._cassette_writer import save_cassette
from cassettes._errors import InputError
from rec.standin.replies import FAKE_API_KEY, Reply, ScriptedResponder
from recorder._exchange_journal import ExchangeJournal
from recorder._forwarding import _TARGETS_KEPT, Forwarder
from recorder._journal import Journal
from recorder._recorder import Recorder
from recorder._recording import RecorderState
from recorder._traffic import CONTROL_TOKEN_HEADER, Upstreams, vertex_path
from replayer._auto_mode import recorder_for
from tests.factories import ConnectionCounter


@pytest.fixture
def victim() -> Iterator[ConnectionCounter]:
    listener = ConnectionCounter()
    yield listener
    listener.close()


def _recorder(tmp_path: Path, upstream: str, mode: str) -> Recorder:
    if mode == "auto":
        save_cassette(Cassette(name="door"), tmp_path / "door.cassette.json")
    return recorder_for(mode, tmp_path, name="door", upstreams=Upstreams(gemini=upstream))


SMUGGLED = [
    "/v1/projects/p/locations/127.0.0.1:{port}?/publishers/google/models/m:generateContent",
    "/v1/projects/p/locations/x@127.0.0.1:{port}?/publishers/google/models/m:generateContent",
    "/v1/projects/p/locations/127.0.0.1:{port}#/publishers/google/models/m:generateContent",
    "/v1beta1/projects/p/locations/127.0.0.1:{port}%3F/publishers/google/models/m:generateContent",
    "/v1/projects/p/locations/US-CENTRAL1/publishers/google/models/m:generateContent",
    "//127.0.0.1:{port}/v1beta/models/m:generateContent",
]


@pytest.mark.parametrize("mode", ["record", "auto"])  # auto: also `rec replay --record-missing`
@pytest.mark.parametrize("template", SMUGGLED)
def test_a_request_path_never_chooses_the_upstream_host(
    tmp_path: Path,
    standin_factory: Any,
    victim: ConnectionCounter,
    loopback_only: Any,
    mode: str,
    template: str,
) -> None:
    api = standin_factory(ScriptedResponder([Reply.text("ok")], repeat_last=True))
    path = template.format(port=victim.port)
    with _recorder(tmp_path, api.url, mode).running_in_thread() as rec:
        with httpx.Client(trust_env=False, timeout=60) as client:
            response = client.post(
                rec.url + path,
                headers={"x-goog-api-key": FAKE_API_KEY, "authorization": "Bearer secret-token"},
                content=b"{}",
            )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert "Traceback" not in error["message"] and FAKE_API_KEY not in error["message"]
    assert victim.connections == 0
    assert loopback_only.attempts == []
    assert api.requests == []


@pytest.mark.parametrize(
    ("path", "host"),
    [
        (
            "/v1beta1/projects/p/locations/us-central1/publishers/google/models/m:x",
            "us-central1-aiplatform.googleapis.com",
        ),
        (
            "/v1/projects/p/locations/global/publishers/google/models/m:x",
            "aiplatform.googleapis.com",
        ),
        (
            "/v1/projects/my-proj/locations/europe-west4/publishers/google/models/m:x",
            "europe-west4-aiplatform.googleapis.com",
        ),
    ],
)
def test_real_vertex_locations_map_to_their_host(path: str, host: str) -> None:
    assert httpx.URL(Upstreams().url_for(path)).host == host


def test_upstream_urls_are_remembered_per_path_and_refusals_are_not(tmp_path: Path) -> None:
    journal = Journal[Exchange](tmp_path / "unused.journal.jsonl")
    forwarder = Forwarder(ExchangeJournal(journal), upstreams=Upstreams(gemini="http://up:1"))
    path = "/v1beta/models/m:generateContent?alt=sse"
    url, target = forwarder._target(path)
    assert url == "http://up:1" + path and str(target) == url
    assert forwarder._target(path)[1] is target  # built once
    for _ in range(2):  # a refused path is refused every time, never remembered
        with pytest.raises(InputError):
            forwarder._target("//elsewhere.example/v1beta/models/m:generateContent")
    for number in range(_TARGETS_KEPT + 10):  # paths that differ every time cost no memory
        forwarder._target(f"/v1beta/models/m:generateContent?n={number}")
    assert len(forwarder._targets) <= _TARGETS_KEPT
    journal.close()


def test_the_vertex_path_is_parsed_in_one_place() -> None:
    found = vertex_path("https://x-aiplatform.googleapis.com/prefix/v1/projects/p/locations/l/m")
    assert found is not None and (found.project, found.location) == ("p", "l")
    assert vertex_path("/v1beta/models/m:generateContent") is None
    root = Path(__file__).resolve().parents[2]
    copies = [
        f.relative_to(root)
        for package in ("cassettes", "recorder", "replayer", "rec")
        for f in (root / package).rglob("*.py")
        if "standin" not in f.parts  # the stand-in plays the service: it parses its own paths
        and "locations/(" in f.read_text(encoding="utf-8")  # a pattern that captures it
    ]
    assert [str(c) for c in copies] == ["recorder/_traffic/_upstreams.py"]


# -- control endpoints -------------------------------------------------------------------------


@pytest.fixture
def live_recorder(tmp_path: Path, standin_factory: Any) -> Iterator[tuple[Recorder, RecorderState]]:
    api = standin_factory(ScriptedResponder([Reply.text("ok")], repeat_last=True))
    recorder = Recorder(tmp_path, name="ctl", upstreams=Upstreams(gemini=api.url))
    with recorder.running_in_thread():
        state = RecorderState.from_json(recorder.paths.state.read_bytes())
        yield recorder, state


def _control(url: str, method: str, command: str, **headers: str) -> httpx.Response:
    with httpx.Client(trust_env=False, timeout=30) as client:
        return client.request(method, f"{url}/__rec__/{command}", headers=headers)


def test_the_control_token_is_private_and_required(
    live_recorder: tuple[Recorder, RecorderState],
) -> None:
    recorder, state = live_recorder
    assert state.control_token and len(state.control_token) >= 32
    assert recorder.paths.state.stat().st_mode & 0o777 == 0o600
    assert _control(recorder.url, "GET", "status").status_code == 403
    assert (
        _control(recorder.url, "GET", "status", **{CONTROL_TOKEN_HEADER: "guess"}).status_code
        == 403
    )
    ok = _control(recorder.url, "GET", "status", **{CONTROL_TOKEN_HEADER: state.control_token})
    assert ok.status_code == 200 and ok.json()["mode"] == "record"


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"host": "attacker.example:80"}, id="dns-rebinding-host"),
        pytest.param(
            {"origin": "https://attacker.example", "content-type": "text/plain"}, id="cross-origin"
        ),
        pytest.param({"sec-fetch-site": "cross-site"}, id="browser-fetch"),
    ],
)
def test_browsers_and_other_hosts_cannot_stop_or_read_a_recording(
    live_recorder: tuple[Recorder, RecorderState], headers: dict[str, str]
) -> None:
    recorder, state = live_recorder
    token = {CONTROL_TOKEN_HEADER: state.control_token or ""}
    assert _control(recorder.url, "POST", "stop", **headers, **token).status_code == 403
    assert _control(recorder.url, "GET", "status", **headers, **token).status_code == 403
    status = _control(recorder.url, "GET", "status", **token)
    assert status.status_code == 200  # still recording


def test_a_rebound_host_cannot_use_the_proxy_either(
    live_recorder: tuple[Recorder, RecorderState],
) -> None:
    recorder, _ = live_recorder
    with httpx.Client(trust_env=False, timeout=30) as client:
        response = client.post(
            recorder.url + "/v1beta/models/m:generateContent",
            headers={"host": "attacker.example", "x-goog-api-key": FAKE_API_KEY},
            content=json.dumps({"contents": []}).encode(),
        )
    assert response.status_code == 403
