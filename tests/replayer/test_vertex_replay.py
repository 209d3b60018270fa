"""Vertex AI recordings replay with no Google credentials at all (placeholder ADC)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google import genai

from cassettes import Cassette
from recorder import record
from replayer import replay
from replayer.placeholder_credentials import PLACEHOLDER_API_KEY, placeholder_environment
from standin import Reply, StandinRequest
from tests.factories import make_exchange

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
    adc = tmp_path / "adc.json"  # what `gcloud auth application-default login` leaves behind
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "id",
                "client_secret": "secret",
                "refresh_token": "refresh",
                "token": TOKEN,
                "expiry": "2999-01-01T00:00:00Z",
            }
        )
    )
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
    assert extra == expected


def test_vertex_configured_only_by_environment_gets_a_clear_error(
    tmp_path: Path, standin_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # google-genai 2.x: env-only project/location plus a base URL = "API gateway" mode, where
    # every call goes to the bare base URL; rec must say so rather than forward or mis-record.
    from google.genai import errors

    api = standin_factory(vertex_model)
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "demo-project")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaFAKE-not-used-0000000000000000000000")
    with record(tmp_path, name="gw", upstream=api.url, vertex_upstream=api.url) as rec:
        client = genai.Client()
        with pytest.raises(errors.ClientError) as caught:
            client.models.generate_content(model=MODEL, contents="hello")
    assert "project=..., location=..." in str(caught.value)
    assert api.requests == [] and rec.result is not None and rec.result.new_exchanges == 0
