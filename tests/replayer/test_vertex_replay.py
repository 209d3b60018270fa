"""Vertex AI recordings replay with no Google credentials at all (placeholder ADC)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai

from cassettes._cassette import Cassette
from rec.standin.replies import Reply, StandinRequest
from recorder._api import record
from replayer._placeholder_credentials import PLACEHOLDER_API_KEY, placeholder_environment
from replayer._replay_api import replay
from tests.factories import adc_file, make_exchange

MODEL = "gemini-2.0-flash"
TOKEN = "ya29.recording-time-fake-token"


def vertex_model(request: StandinRequest) -> Reply | None:
    if request.rpc == "generateContent":
        return Reply.text(f"Vertex says hi to {request.project} in {request.location}")
    return None


def test_vertex_recording_replays_without_any_credentials(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    api = standin_factory(vertex_model)
    adc = adc_file(tmp_path / "adc.json", TOKEN)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))

    def vertex_client() -> genai.Client:  # credentials from ADC, as in production code
        return genai.Client(vertexai=True, project="demo-project", location="europe-west4")

    with record(tmp_path / "rec", name="vertex", upstream=api.url, vertex_upstream=api.url):
        client = vertex_client()
        live = client.models.generate_content(model=MODEL, contents="hello").text
    assert live == "Vertex says hi to demo-project in europe-west4"
    assert api.requests[-1].headers["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in (tmp_path / "rec" / "vertex.cassette.json").read_text()

    api.stop()
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS")
    with replay(tmp_path / "rec" / "vertex.cassette.json") as replaying:
        client = vertex_client()  # no key, no ADC: placeholders, token from the proxy
        assert client.models.generate_content(model=MODEL, contents="hello").text == live
    assert replaying.misses == []
    assert loopback_only.attempts == []  # no token refresh, no call beyond loopback
    assert replaying.served == 1


def _vertex_cassette() -> Cassette:
    exchange = make_exchange(0, base_url="https://europe-west4-aiplatform.googleapis.com")
    url = exchange.request.url.replace(
        "/v1beta/models/", "/v1beta1/projects/p1/locations/europe-west4/publishers/google/models/"
    )
    exchange = exchange.model_copy(
        update={"request": exchange.request.model_copy(update={"url": url})}
    )
    return Cassette(name="c", exchanges=[exchange])


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        pytest.param(
            {},
            {
                "GOOGLE_API_KEY": PLACEHOLDER_API_KEY,
                "GOOGLE_APPLICATION_CREDENTIALS": "ADC",
                "GOOGLE_CLOUD_PROJECT": "p1",
                "GOOGLE_CLOUD_LOCATION": "europe-west4",
            },
            id="nothing-set",
        ),
        pytest.param(
            {"GOOGLE_API_KEY": "mine", "GOOGLE_CLOUD_PROJECT": "p2"},
            {"GOOGLE_APPLICATION_CREDENTIALS": "ADC", "GOOGLE_CLOUD_LOCATION": "europe-west4"},
            id="user-values-win",
        ),
        pytest.param(
            {
                "GEMINI_API_KEY": "k",
                "GOOGLE_APPLICATION_CREDENTIALS": "/real.json",
                "GOOGLE_CLOUD_PROJECT": "p",
                "GOOGLE_CLOUD_LOCATION": "l",
            },
            {},
            id="all-set",
        ),
    ],
)
def test_placeholders_fill_only_what_is_missing(
    environ: dict[str, str], expected: dict[str, str], tmp_path: Path
) -> None:
    adc_path = tmp_path / "adc.json"
    extra, adc = placeholder_environment(environ, [_vertex_cassette()], adc_path=adc_path)
    if "GOOGLE_APPLICATION_CREDENTIALS" in expected:
        expected = {**expected, "GOOGLE_APPLICATION_CREDENTIALS": str(adc_path)}
        assert adc is not None and adc["expiry"].startswith("2999")
    else:
        assert adc is None
    google = {name: value for name, value in extra.items() if name.startswith("GOOGLE_")}
    assert google == expected
    # The other providers' keys, missing from every environment here, get placeholders too.
    assert extra.get("OPENAI_API_KEY") and extra.get("ANTHROPIC_API_KEY")


def _vertex_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "TRUE")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "demo-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")


def test_vertex_configured_only_by_environment_records_and_replays(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch, loopback_only: Any
) -> None:
    # google-genai 2.x: env-only project/location plus a base URL = "API gateway" mode (every
    # call to the bare base URL). Within record() and replay() such clients get project and
    # location as arguments, so the base-URL seam works as for explicit ones.
    from google.genai import Client

    before = Client.__init__
    api = standin_factory(vertex_model)
    _vertex_from_environment(monkeypatch)
    adc = adc_file(tmp_path / "adc.json", TOKEN)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    out = tmp_path / "rec"
    with record(out, name="vertex", upstream=api.url, vertex_upstream=api.url):
        client = genai.Client()  # as ADK builds it: everything from the environment
        live = client.models.generate_content(model=MODEL, contents="hello").text
    assert live == "Vertex says hi to demo-project in europe-west4"
    assert api.requests[-1].headers["authorization"] == f"Bearer {TOKEN}"
    assert "/projects/demo-project/locations/europe-west4/" in api.requests[-1].path
    assert Client.__init__ is before  # the wrapper is gone with the block
    assert all(TOKEN not in f.read_text() for f in out.rglob("*") if f.is_file())

    api.stop()
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name)
    with replay(out / "vertex.cassette.json") as replaying:
        client = genai.Client()
        assert client.models.generate_content(model=MODEL, contents="hello").text == live
    assert replaying.misses == [] and replaying.served == 1
    assert loopback_only.attempts == []
    assert Client.__init__ is before


def test_a_gateway_call_the_hook_cannot_reach_gets_a_clear_error(
    tmp_path: Path, standin_factory: Any
) -> None:
    # A client rec cannot give its project (another language, or google-genai without
    # GOOGLE_CLOUD_PROJECT) posts to the bare base URL: rec says what to change.
    import httpx

    api = standin_factory(vertex_model)
    with record(tmp_path, name="gw", upstream=api.url, vertex_upstream=api.url) as rec:
        answer = httpx.post(rec.url + "/", json={"contents": []}, trust_env=False)
    assert answer.status_code == 400
    assert "project=..., location=..." in answer.json()["error"]["message"]
    assert api.requests == [] and rec.result is not None and rec.result.new_exchanges == 0


@pytest.mark.parametrize(
    ("arguments", "environ", "expected"),
    [
        pytest.param(
            {},
            {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"},
            {"project": "p", "location": "global"},
            id="env-vertex-default-location",
        ),
        pytest.param(
            {"vertexai": True, "location": "us-east1"},
            {"GOOGLE_CLOUD_PROJECT": "p"},
            {"project": "p", "location": "us-east1"},
            id="explicit-location-kept",
        ),
        pytest.param(
            {"vertexai": True, "project": "a", "location": "b"},
            {},
            None,
            id="both-given",
        ),
        pytest.param(
            {"vertexai": True, "api_key": "k"},
            {"GOOGLE_CLOUD_PROJECT": "p"},
            None,
            id="express-mode-api-key",
        ),
        pytest.param({}, {"GOOGLE_CLOUD_PROJECT": "p"}, None, id="gemini-api"),
        pytest.param(
            {"enterprise": False},
            {"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_CLOUD_PROJECT": "p"},
            None,
            id="argument-beats-env",
        ),
        pytest.param(
            {"vertexai": True, "http_options": {"base_url": "https://gw.example.com"}},
            {"GOOGLE_CLOUD_PROJECT": "p"},
            None,
            id="own-gateway-left-alone",
        ),
        pytest.param({"vertexai": True}, {}, None, id="no-project-anywhere"),
        pytest.param(
            {"vertexai": True},
            {"GOOGLE_VERTEX_BASE_URL": "https://x.example.com", "GOOGLE_CLOUD_PROJECT": "p"},
            None,
            id="another-base-url",
        ),
    ],
)
def test_which_vertex_clients_get_explicit_project_and_location(
    arguments: dict[str, Any], environ: dict[str, str], expected: dict[str, str] | None
) -> None:
    from recorder._traffic._vertex_clients import vertex_arguments

    proxy = "http://127.0.0.1:4000"
    environ = {"GOOGLE_VERTEX_BASE_URL": proxy + "/", **environ}
    assert vertex_arguments(arguments, environ, (proxy,)) == expected


def test_nested_blocks_wrap_the_client_once_and_put_it_back_exactly() -> None:
    import os

    from google.genai import Client

    from recorder._traffic._vertex_clients import explicit_vertex_clients

    before = Client.__dict__["__init__"]
    with explicit_vertex_clients("http://127.0.0.1:1", os.environ):
        wrapped = Client.__dict__["__init__"]
        assert wrapped is not before
        with explicit_vertex_clients("http://127.0.0.1:2", os.environ):
            assert Client.__dict__["__init__"] is wrapped
        assert Client.__dict__["__init__"] is wrapped  # the outer block is still open
    assert Client.__dict__["__init__"] is before
