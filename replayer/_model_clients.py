"""What rec adds to the google-genai clients ADK builds for an agent's models.

ADK's ``Gemini`` model builds its google-genai ``Client`` from ``client_kwargs``, once per
event loop, each model of the agent tree its own: a replay run (and each worker) builds
one per model. rec adds two things there, through ADK's public ``Gemini.client_kwargs``
(merged into what the model already had, and put back when the block ends):

- **one TLS context per process** (:func:`shared_tls`): a google-genai client builds three
  TLS contexts when it is created (httpx, aiohttp, websockets), each loading the CA bundle
  from disk, 40 ms or more in all (several hundred ms on a loaded machine). On a short
  run that is most of what a replayed call costs (home_assistant, two models and 18
  calls: ~50 ms a call). The shared context is built the way google-genai builds its default
  (``SSL_CERT_FILE`` or certifi's bundle, ``SSL_CERT_DIR``); a model that already names a
  context of its own keeps it;
- **the in-process transport** (``replayer._in_process``).

For clients rec cannot see being built (``rec.replay()``, the ``rec`` fixture: the agent is
the caller's), :func:`shared_tls_for_clients` gives every google-genai client built in the
block the same context. google-genai has no public process-wide default for it, so the
block wraps the three private static methods ``BaseApiClient`` builds its contexts with
(``_ensure_httpx_ssl_ctx``, ``_ensure_aiohttp_ssl_ctx``, ``_ensure_websocket_ssl_ctx``,
google-genai 2.34): each is handed the shared context where the client names none; where
a release lacks one, that one builds its own as before (slower, never different). A
Vertex AI client asked to present a client certificate
(``GOOGLE_API_USE_CLIENT_CERTIFICATE``) keeps google-genai's own contexts.
"""

from __future__ import annotations

import contextlib
import functools
import os
import ssl
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = [
    "clients_answered_by",
    "gemini_models",
    "model_client_args",
    "shared_tls",
    "shared_tls_for_clients",
    "tls_context",
]


def gemini_models(root: Any) -> list[Any]:
    """Every ``Gemini`` model the agent tree resolves to (sub-agents, AgentTool agents)."""
    from google.adk.agents import BaseAgent, LlmAgent
    from google.adk.models import Gemini
    from google.adk.tools.agent_tool import AgentTool

    found: dict[int, Any] = {}
    seen: set[int] = set()
    pending: list[Any] = [root]
    while pending:
        node = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AgentTool):
            pending.append(node.agent)
        elif isinstance(node, BaseAgent):
            if isinstance(node, LlmAgent):
                model = node.canonical_model
                if isinstance(model, Gemini):
                    found[id(model)] = model
                pending.extend(node.tools or [])
            pending.extend(node.sub_agents or [])
    return list(found.values())


def _merged(
    client_kwargs: dict[str, Any] | None,
    sync_args: Mapping[str, Any],
    async_args: Mapping[str, Any],
    *,
    override: bool,
) -> dict[str, Any]:
    """``client_kwargs`` with these ``http_options`` client arguments added (``override``:
    they replace the model's own; otherwise the model's own win)."""
    from google.genai import types

    kwargs = dict(client_kwargs or {})
    options = kwargs.get("http_options")
    if options is None:
        options = types.HttpOptions()
    elif isinstance(options, dict):
        options = types.HttpOptions.model_validate(options)
    else:
        options = options.model_copy()
    for field, extra in (("client_args", sync_args), ("async_client_args", async_args)):
        if not extra:
            continue
        own = getattr(options, field) or {}
        setattr(options, field, {**own, **extra} if override else {**extra, **own})
    kwargs["http_options"] = options
    return kwargs


@contextlib.contextmanager
def model_client_args(
    root: Any,
    *,
    sync_args: Mapping[str, Any] | None = None,
    async_args: Mapping[str, Any] | None = None,
    override: bool = True,
) -> Iterator[int]:
    """Add client arguments to every ``Gemini`` model under ``root`` for the block.

    Yields:
        How many models were given them.
    """
    models = gemini_models(root)
    before = [(model, model.client_kwargs) for model in models]
    try:
        for model in models:
            model.client_kwargs = _merged(
                model.client_kwargs, sync_args or {}, async_args or {}, override=override
            )
        yield len(models)
    finally:
        for model, client_kwargs in before:
            model.client_kwargs = client_kwargs


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The process's TLS context for model clients: google-genai's default, built once."""
    import certifi

    return ssl.create_default_context(
        cafile=os.environ.get("SSL_CERT_FILE", certifi.where()),
        capath=os.environ.get("SSL_CERT_DIR"),
    )


def shared_tls(root: Any) -> contextlib.AbstractContextManager[int]:
    """Every ``Gemini`` model under ``root`` builds its clients with :func:`tls_context`
    (httpx's ``verify``, aiohttp's and websockets' ``ssl``) unless it names its own."""
    context = tls_context()
    return model_client_args(
        root,
        sync_args={"verify": context},
        async_args={"verify": context, "ssl": context},
        override=False,
    )


_GENAI_TLS = {
    "_ensure_httpx_ssl_ctx": (("client_args", "verify"), ("async_client_args", "verify")),
    "_ensure_aiohttp_ssl_ctx": (("async_client_args", "ssl"),),
    "_ensure_websocket_ssl_ctx": (("async_client_args", "ssl"),),
}
"""google-genai's private builders of a client's TLS contexts, and the ``HttpOptions``
arguments each reads a caller's context from."""
_patch_lock = threading.Lock()
_patch_depth = 0
_originals: dict[str, Any] = {}
_answering: list[tuple[str, Any, Any]] = []
"""The blocks of :func:`clients_answered_by` in force: the base URL they answer for, and
their sync and async httpx transports (the innermost last)."""


def _with_context(options: Any, fields: tuple[tuple[str, str], ...]) -> Any:
    """``options`` with :func:`tls_context` in each of ``fields`` that names no context."""
    update: dict[str, Any] = {}
    for field, key in fields:
        args = getattr(options, field) or {}
        if not args.get(key):
            update[field] = {**args, key: tls_context()}
    return options.model_copy(update=update) if update else options


def _give_transports(options: Any) -> None:
    """Give a client whose base URL is an answering block's its transports, where it names
    none of its own: set in the client's own options, so google-genai uses httpx (not
    aiohttp) for its async calls for the client's whole life."""
    base = str(getattr(options, "base_url", None) or "")
    from replayer._compat import genai_uses_httpx

    if _answering and not genai_uses_httpx(options):
        return  # rec's transports are httpx's: an httpx2 client replays over the socket
    for url, sync, asynchronous in reversed(_answering):
        if not base.startswith(url):
            continue
        if options.httpx_client is None and not (options.client_args or {}).get("transport"):
            options.client_args = {**(options.client_args or {}), "transport": sync}
        own_async = options.httpx_async_client is not None or getattr(
            options, "aiohttp_client", None
        )
        if not own_async and not (options.async_client_args or {}).get("transport"):
            options.async_client_args = {
                **(options.async_client_args or {}),
                "transport": asynchronous,
            }
        return


def _client_certificate_wanted(vertexai: bool) -> bool:
    """A Vertex AI client that presents the default client certificate (mTLS)."""
    return vertexai and os.environ.get("GOOGLE_API_USE_CLIENT_CERTIFICATE", "").lower() == "true"


def _sharing(original: Callable[..., Any], fields: tuple[tuple[str, str], ...]) -> Any:
    def ensure(options: Any, vertexai: bool = False, **kwargs: Any) -> Any:
        if fields is _GENAI_TLS["_ensure_httpx_ssl_ctx"]:
            _give_transports(options)
        if not _client_certificate_wanted(vertexai):
            options = _with_context(options, fields)
        return original(options, vertexai=vertexai, **kwargs)

    return staticmethod(ensure)


@contextlib.contextmanager
def shared_tls_for_clients() -> Iterator[None]:
    """Every google-genai client built in this process during the block uses
    :func:`tls_context` where it names no context of its own (see the module docstring).
    Blocks may nest and overlap across threads: the last to end puts google-genai back."""
    global _patch_depth
    from replayer._compat import genai_api_client

    api = genai_api_client()
    with _patch_lock:
        if _patch_depth == 0 and api is not None:
            for name, fields in _GENAI_TLS.items():
                original = api.__dict__.get(name)
                if isinstance(original, staticmethod):
                    _originals[name] = original
                    setattr(api, name, _sharing(original.__func__, fields))
        _patch_depth += 1
    try:
        yield
    finally:
        with _patch_lock:
            _patch_depth -= 1
            if _patch_depth == 0 and api is not None:
                for name, original in _originals.items():
                    setattr(api, name, original)
                _originals.clear()


@contextlib.contextmanager
def clients_answered_by(url: str, sync: Any, asynchronous: Any) -> Iterator[None]:
    """Every google-genai client built in this process during the block whose base URL is
    ``url`` (a replay's) sends through these httpx transports (and uses the process's one
    TLS context), unless it names a transport or client of its own."""
    entry = (url, sync, asynchronous)
    with shared_tls_for_clients():
        _answering.append(entry)
        try:
            yield
        finally:
            _answering.remove(entry)
