"""Vertex AI clients configured from the environment, made to work through rec's base URL.

google-genai (2.x) puts a Vertex AI client into "API gateway" mode when it has a custom base
URL (rec's proxy) but received ``project`` and ``location`` only from the environment
(``GOOGLE_CLOUD_PROJECT`` / ``GOOGLE_CLOUD_LOCATION``), not as arguments and without an API
key: it then clears both and posts every call to the bare base URL, with no model and no
method (``google/genai/_api_client.py``, ``BaseApiClient.__init__`` and the URL building
in ``_build_request``). ADK builds its client from the environment, so every ADK agent on
Vertex AI configured that way would be out of reach of any base-URL proxy.

While rec records or replays, :func:`explicit_vertex_clients` makes each new
``google.genai.Client`` that talks to rec's proxy receive the environment's project and
location as arguments, which is what google-genai then uses anyway, without the gateway.
A client with an API key, with both values given, on another backend or with its own base
URL is left exactly as it is. Only the public ``Client`` constructor is wrapped.

This module uses nothing but the standard library (and google-genai once a client is
made): the child's ``sitecustomize`` loads it by path, also in a Python where rec itself is
not installed (``recorder/_sitecustomize``).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["explicit_vertex_clients", "patch_client_class", "vertex_arguments"]

_TRUE = ("true", "1")


def _env_flag(environ: Mapping[str, str], name: str) -> bool | None:
    value = environ.get(name)
    return None if value is None else value.lower() in _TRUE


def _base_url(http_options: Any) -> str | None:
    if isinstance(http_options, Mapping):
        value = http_options.get("base_url")
    else:
        value = getattr(http_options, "base_url", None)
    return value if isinstance(value, str) and value else None


def _same_url(left: str, right: str) -> bool:
    return left.rstrip("/") == right.rstrip("/")


def vertex_arguments(
    arguments: Mapping[str, Any], environ: Mapping[str, str], proxies: tuple[str, ...]
) -> dict[str, str] | None:
    """The ``project``/``location`` to pass to a ``Client(**arguments)``, or None to leave it.

    Only for a Vertex AI client (``vertexai``/``enterprise``, else
    ``GOOGLE_GENAI_USE_ENTERPRISE`` / ``GOOGLE_GENAI_USE_VERTEXAI``, enterprise first as in
    google-genai) without an explicit API key, missing project or location, whose base URL
    (its own ``http_options.base_url``, else ``GOOGLE_VERTEX_BASE_URL`` or
    ``GOOGLE_GEMINI_BASE_URL``) is one of ``proxies``. The project comes from
    ``GOOGLE_CLOUD_PROJECT``; the location from ``GOOGLE_CLOUD_LOCATION``, else ``global``
    (google-genai's own default without a base URL). Without a project there is nothing to
    give: the call stays in gateway mode, which rec's proxy answers with an error saying how
    to fix it.
    """
    vertex = arguments.get("enterprise")
    if vertex is None:
        vertex = arguments.get("vertexai")
    if vertex is None:
        enterprise = _env_flag(environ, "GOOGLE_GENAI_USE_ENTERPRISE")
        vertex = (
            enterprise
            if enterprise is not None
            else _env_flag(environ, "GOOGLE_GENAI_USE_VERTEXAI")
        )
    if not vertex or arguments.get("api_key"):
        return None
    project, location = arguments.get("project"), arguments.get("location")
    if project and location:
        return None
    # Its own base URL, else the environment's: google-genai 2.34 reads
    # GOOGLE_GEMINI_BASE_URL for a client that is Vertex only by the environment, and
    # GOOGLE_VERTEX_BASE_URL for ``vertexai=True``; rec sets both to its proxy.
    own = _base_url(arguments.get("http_options"))
    bases = (
        [own]
        if own
        else [environ.get(n) for n in ("GOOGLE_VERTEX_BASE_URL", "GOOGLE_GEMINI_BASE_URL")]
    )
    if not any(base and _same_url(base, proxy) for base in bases for proxy in proxies):
        return None
    project = project or environ.get("GOOGLE_CLOUD_PROJECT")
    if not project:
        return None
    return {
        "project": project,
        "location": location or environ.get("GOOGLE_CLOUD_LOCATION") or "global",
    }


def patch_client_class(
    client_class: Any, proxies: Callable[[], tuple[str, ...]], environ: Mapping[str, str]
) -> Callable[[], None]:
    """Wrap ``client_class.__init__`` (see the module docstring); return the undo function.

    The undo puts back exactly what was there (the class's own ``__init__``).
    """
    original = client_class.__dict__["__init__"]

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        given = vertex_arguments(kwargs, environ, proxies())
        if given is not None:
            kwargs.update(given)
        original(self, *args, **kwargs)

    client_class.__init__ = __init__

    def undo() -> None:
        client_class.__init__ = original

    return undo


_lock = threading.Lock()
_active: list[str] = []
_undo: list[Callable[[], None]] = []


@contextlib.contextmanager
def explicit_vertex_clients(url: str, environ: Mapping[str, str]) -> Iterator[None]:
    """Within the block, Vertex AI clients created for ``url`` get project and location.

    Blocks nest (a replay inside a recording, two recordings): the constructor is wrapped
    once while any block is open, and put back exactly as it was when the last one ends.
    ``environ`` is read when each client is created (pass ``os.environ``).
    """
    from google.genai import Client

    with _lock:
        _active.append(url)
        if len(_active) == 1:
            _undo.append(patch_client_class(Client, lambda: tuple(_active), environ))
    try:
        yield
    finally:
        with _lock:
            _active.remove(url)
            if not _active:
                _undo.pop()()
