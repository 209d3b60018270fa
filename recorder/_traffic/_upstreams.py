"""Where model traffic may go: the Gemini API, Vertex AI and the other providers' bases.

:class:`Upstreams` turns a request path into its upstream URL and never lets the path choose
a host: a Vertex AI path (``/v1beta1/projects/P/locations/L/...``) goes to ``vertex``, by
default ``https://L-aiplatform.googleapis.com`` (``aiplatform.googleapis.com`` for
``global``), and only for a location of lowercase letters, digits and dashes; a provider's
mount (``/openai/...``, ``/anthropic/...``) goes to that provider's base. Recording forwards
through it; replay reads a recorded URL's Vertex project and location with
:func:`vertex_path`, and both refuse google-genai's gateway-mode call the same way
(:func:`gateway_mode_refusal`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cassettes._errors import InputError
from cassettes._google_error import google_error
from cassettes._providers import PROVIDERS, Provider, configured_upstream, mounted
from cassettes._secret_shapes import without_credentials

DEFAULT_UPSTREAM = "https://generativelanguage.googleapis.com"
"""The Gemini API."""

_VERTEX_PATH = re.compile(
    r"/v1[a-z0-9]*/projects/(?P<project>[^/?#]+)/locations/(?P<location>[^/?#]+)/"
)
_VERTEX_PREFIX = re.compile(r"/v1[a-z0-9]*/projects/")
_LOCATION = re.compile(r"[a-z0-9][a-z0-9-]*")
"""A Vertex AI location (``us-central1``, ``europe-west4``, ``global``): it names a host."""

GATEWAY_MODE_MESSAGE = (
    "rec received a model call at the bare base URL {path!r}: google-genai does this for a "
    "Vertex AI client whose project and location come only from the environment while a base "
    "URL is set (it then assumes an API gateway and drops the model and method from the URL). "
    "rec passes them for Python clients it reaches (under `rec start -- COMMAND`, "
    "rec.record(), rec replay) when GOOGLE_CLOUD_PROJECT is set; this one it did not reach "
    "(another language, a process rec did not start, --no-instrument, no GOOGLE_CLOUD_PROJECT). "
    "Set GOOGLE_CLOUD_PROJECT, or pass them to the client, e.g. genai.Client(vertexai=True, "
    "project=..., location=...), or use the Gemini API"
)
"""Explains google-genai's API-gateway mode, which no base-URL proxy can record."""


def gateway_mode_refusal(method: str, path_qs: str) -> dict[str, Any] | None:
    """The 400 error envelope for google-genai's gateway-mode call (a POST with no model
    path, see :data:`GATEWAY_MODE_MESSAGE`); None for any other request."""
    if method.upper() != "POST" or path_qs.split("?", 1)[0].rstrip("/") != "":
        return None
    return google_error(400, GATEWAY_MODE_MESSAGE.format(path=path_qs), "FAILED_PRECONDITION")


@dataclass(frozen=True)
class VertexPath:
    """The project and location a Vertex AI request names in its path."""

    project: str
    location: str


def vertex_path(url: str) -> VertexPath | None:
    """The project and location of a Vertex AI request path, or of a recorded URL (whose
    upstream may add a path prefix); None for other requests."""
    if "://" in url:
        match = _VERTEX_PATH.search(urlsplit(url).path)
    else:
        match = _VERTEX_PATH.match(re.split(r"[?#]", url, maxsplit=1)[0])
    if match is None:
        return None
    return VertexPath(match.group("project"), match.group("location"))


_VERTEX_LIVE = re.compile(r"/ws/google\.cloud\.aiplatform\.[a-z0-9]+\.LlmBidiService/")
_MODEL_LOCATION = re.compile(r"^projects/[^/]+/locations/(?P<location>[^/]+)/")


def is_vertex_live(path_qs: str) -> bool:
    """Whether a request path is Vertex AI's Live WebSocket (``LlmBidiService``): its path
    names no location, its ``setup`` message's model does."""
    return _VERTEX_LIVE.match(path_qs) is not None


def setup_location(setup: object) -> str | None:
    """The location a Live ``setup`` message's model names
    (``projects/P/locations/L/publishers/google/models/M``), or None."""
    body = setup.get("setup") if isinstance(setup, dict) else None
    model = body.get("model") if isinstance(body, dict) else None
    match = _MODEL_LOCATION.match(model) if isinstance(model, str) else None
    return match.group("location") if match is not None else None


_VERTEX_DERIVED = "https://LOCATION-aiplatform.googleapis.com"
"""How the Vertex AI upstream is shown when it is derived from each request's location."""
_PROVIDER_LABELS = {"openai": "OpenAI", "anthropic": "Anthropic"}


@dataclass(frozen=True)
class Upstreams:
    """Where requests may go: the Gemini API base, Vertex AI (derived or fixed), and the
    base URLs of the other providers (``cassettes._providers``), whose calls arrive under
    their mount on the proxy (``/openai/…``, ``/anthropic/…``)."""

    gemini: str = DEFAULT_UPSTREAM
    vertex: str | None = None
    """Fixed Vertex base URL; None derives ``https://{location}-aiplatform.googleapis.com``."""
    openai: str | None = None
    """OpenAI-wire base URL; None: the one the environment configures (``OPENAI_BASE_URL``,
    ``OPENAI_API_BASE``) when the upstreams are made, else ``https://api.openai.com/v1``."""
    anthropic: str | None = None
    """Anthropic base URL; None: ``ANTHROPIC_API_BASE`` / ``ANTHROPIC_BASE_URL``, else
    ``https://api.anthropic.com``."""

    def __post_init__(self) -> None:
        for provider in PROVIDERS:
            if getattr(self, provider.name) is None:
                object.__setattr__(self, provider.name, configured_upstream(provider, os.environ))
        for name, value in (
            ("--upstream", self.gemini),
            ("--vertex-upstream", self.vertex),
            *((provider.base_url_vars[0], self.provider(provider)) for provider in PROVIDERS),
        ):
            if value is None:
                continue
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise InputError(
                    f"upstream {value!r} is not an http(s) URL",
                    path=name,
                    fix="Give a base URL such as https://generativelanguage.googleapis.com",
                )

    def provider(self, provider: Provider) -> str:
        """The base URL ``provider``'s calls are forwarded to."""
        value = getattr(self, provider.name)
        assert isinstance(value, str)
        return value

    @property
    def bases(self) -> tuple[str, ...]:
        """Every configured base URL (for the credentials their userinfo holds)."""
        found = (self.gemini, self.vertex, *(self.provider(p) for p in PROVIDERS))
        return tuple(base for base in found if base is not None)

    @property
    def shown(self) -> str:
        """The Gemini upstream as stored and printed: without userinfo or credentials."""
        return without_credentials(self.gemini)

    def routes(self) -> list[tuple[str, str]]:
        """``(mount, where)`` for each path prefix of the proxy: the Google APIs on the root,
        each other provider on its mount, ``where`` naming the upstream without credentials."""
        vertex = without_credentials(self.vertex) if self.vertex else _VERTEX_DERIVED
        google = f"Gemini API {self.shown}, Vertex AI {vertex}"
        others = [
            (
                p.mount,
                f"{_PROVIDER_LABELS.get(p.name, p.name)} {without_credentials(self.provider(p))}",
            )
            for p in PROVIDERS
        ]
        return [("", google), *others]

    def url_for(self, path_qs: str, *, location: str | None = None) -> str:
        """The upstream URL for a request path (a base URL's own path prefix is kept).

        A Vertex AI Live path goes to ``vertex`` when set, else to the host of ``location``
        (read from the session's ``setup``, see :func:`setup_location`).

        Raises:
            InputError: the request would leave the configured upstreams (an absolute URL
                or authority form, or a Vertex location that is not a location).
        """
        if not path_qs.startswith("/") or path_qs.startswith("//"):
            raise InputError(
                "rec forwards only to its configured upstream; not an open proxy",
                where=_shown(path_qs),
                fix="Send the request path only, with the proxy as the client's base URL",
            )
        on_mount = mounted(path_qs)
        if on_mount is not None:
            provider, rest = on_mount
            base, path_qs = self.provider(provider), rest
        else:
            base = self._google_base(path_qs, location)
        url = base.rstrip("/") + path_qs
        if urlsplit(url).netloc != urlsplit(base).netloc:
            raise InputError(
                "the request path would change the upstream host",
                where=_shown(path_qs),
                fix="Send a plain request path",
            )
        return url

    def _google_base(self, path_qs: str, location: str | None) -> str:
        """The base URL of a Google-wire path: Gemini's, or Vertex AI's (``vertex``, else
        the host of the path's location, or of ``location`` for a Live session).

        Raises:
            InputError: as :meth:`url_for`.
        """
        vertex = vertex_path(path_qs)
        if is_vertex_live(path_qs):
            if location is None and self.vertex is None:
                raise InputError(
                    "a Vertex AI Live session's path names no location, nor did its setup",
                    where=_shown(path_qs),
                    fix="Set --vertex-upstream https://LOCATION-aiplatform.googleapis.com",
                )
            vertex = VertexPath("", location or "")
        if vertex is None:
            if _VERTEX_PREFIX.match(path_qs):
                raise InputError(
                    "not a Vertex AI model path (projects/PROJECT/locations/LOCATION/...)",
                    where=_shown(path_qs),
                    fix="Send the path google-genai builds, with a location such as us-central1",
                )
            return self.gemini
        if self.vertex is not None:
            return self.vertex
        if not _LOCATION.fullmatch(vertex.location):
            raise InputError(
                f"{_shown(vertex.location)!r} is not a Vertex AI location",
                where=_shown(path_qs),
                fix="Use a location such as us-central1 or global, or set --vertex-upstream",
            )
        if vertex.location == "global":
            return "https://aiplatform.googleapis.com"
        return f"https://{vertex.location}-aiplatform.googleapis.com"


def _shown(text: str, limit: int = 120) -> str:
    """Part of a client-supplied path, safe to put in a message."""
    return text if len(text) <= limit else text[:limit] + "..."
