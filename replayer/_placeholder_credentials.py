"""Placeholder credentials, so replay runs where no model credentials exist (CI).

google-genai refuses to start without credentials even though replay never needs them:
the Gemini API client wants an API key, and a Vertex AI client wants Application Default
Credentials (ADC) plus a project and location. For the duration of a replay rec supplies,
only where the environment has none of its own:

- ``GOOGLE_API_KEY``: a placeholder key; the same for ``OPENAI_API_KEY``,
  ``ANTHROPIC_API_KEY`` and Azure's ``AZURE_API_KEY`` / ``AZURE_OPENAI_API_KEY``, which the
  openai and anthropic SDKs (and LiteLLM through them) refuse to start without;
- ``GOOGLE_APPLICATION_CREDENTIALS``: an ``authorized_user`` ADC file holding a
  placeholder access token that expires in the year 2999, so google-auth never refreshes
  it (a refresh would go to Google: google-auth ignores a file's ``token_uri``);
- ``GOOGLE_CLOUD_PROJECT`` / ``GOOGLE_CLOUD_LOCATION``: read from the recorded Vertex AI
  request paths (``/v1beta1/projects/P/locations/L/...``), so requests match the recording.

Which backend the agent uses (``GOOGLE_GENAI_USE_VERTEXAI``) stays the user's choice.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cassettes._cassette import Cassette, LazyExchanges
from cassettes._providers import PROVIDERS
from recorder._traffic import VertexPath, vertex_path

__all__ = [
    "PLACEHOLDER_API_KEY",
    "PLACEHOLDER_TOKEN",
    "placeholder_credentials",
    "placeholder_environment",
]

PLACEHOLDER_API_KEY = "rec-replay-placeholder-key"
"""Given to google-genai during replay when no key is set: the cassette needs none."""
PLACEHOLDER_TOKEN = "rec-replay-placeholder-token"
"""The access token of the placeholder ADC file (sent to the replay proxy, never further)."""
_AZURE_KEY_VARS = ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY")
"""Read by LiteLLM's ``azure/`` models and by the openai SDK's ``AzureOpenAI``."""


def placeholder_environment(
    environ: Mapping[str, str], cassettes: Sequence[Cassette], *, adc_path: Path
) -> tuple[dict[str, str], dict[str, str] | None]:
    """The variables to add, and the ADC document to write at ``adc_path`` (or None)."""
    extra = _placeholder_keys(environ)
    adc: dict[str, str] | None = None
    if not environ.get("GOOGLE_APPLICATION_CREDENTIALS"):
        adc = {
            "type": "authorized_user",
            "client_id": "rec-replay-placeholder.apps.googleusercontent.com",
            "client_secret": "rec-replay-placeholder",
            "refresh_token": "rec-replay-placeholder",
            "token": PLACEHOLDER_TOKEN,
            "expiry": "2999-01-01T00:00:00Z",
        }
        extra["GOOGLE_APPLICATION_CREDENTIALS"] = str(adc_path)
    vertex = _first_vertex_call(cassettes)
    if vertex is not None:
        if not environ.get("GOOGLE_CLOUD_PROJECT"):
            extra["GOOGLE_CLOUD_PROJECT"] = vertex.project
        if not environ.get("GOOGLE_CLOUD_LOCATION"):
            extra["GOOGLE_CLOUD_LOCATION"] = vertex.location
    return extra, adc


def _placeholder_keys(environ: Mapping[str, str]) -> dict[str, str]:
    """A placeholder API key for each provider (Google, OpenAI, Anthropic, Azure) with none."""
    extra: dict[str, str] = {}
    if not (environ.get("GOOGLE_API_KEY") or environ.get("GEMINI_API_KEY")):
        extra["GOOGLE_API_KEY"] = PLACEHOLDER_API_KEY
    for provider in PROVIDERS:
        if not any(environ.get(name) for name in provider.key_vars):
            extra[provider.key_vars[0]] = PLACEHOLDER_API_KEY
    for name in _AZURE_KEY_VARS:
        if not environ.get(name):
            extra[name] = PLACEHOLDER_API_KEY
    return extra


def _first_vertex_call(cassettes: Sequence[Cassette]) -> VertexPath | None:
    """The project and location of the first recorded Vertex AI call, if any."""
    for cassette in cassettes:
        exchanges = cassette.exchanges
        if isinstance(exchanges, LazyExchanges):  # read from the file: no body parsed
            urls: Iterable[Any] = (exchanges.url(i) for i in range(len(exchanges)))
        else:
            urls = (e.request.url for e in exchanges)
        for url in urls:
            vertex = vertex_path(url) if isinstance(url, str) else None
            if vertex is not None:
                return vertex
    return None


@contextlib.contextmanager
def placeholder_credentials(
    environ: Mapping[str, str], cassettes: Sequence[Cassette]
) -> Iterator[dict[str, str]]:
    """Yield the placeholder variables for a replay; the ADC file lives for the block."""
    with tempfile.TemporaryDirectory(prefix="rec-replay-") as folder:
        adc_path = Path(folder) / "placeholder_adc.json"
        extra, adc = placeholder_environment(environ, cassettes, adc_path=adc_path)
        if adc is not None:
            adc_path.write_text(json.dumps(adc), encoding="utf-8")
        yield extra
