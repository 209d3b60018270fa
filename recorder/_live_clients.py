"""google-genai's Live client, made to reach rec's plain-HTTP loopback proxy.

google-genai derives the Live WebSocket URL from the client's base URL by switching the
scheme to ``wss`` whatever it was (``BaseApiClient._websocket_base_url``) and connects
with an SSL context (``websockets``' ``connect(uri, ssl=...)`` in ``google/genai/live.py``),
so a client pointed at ``http://127.0.0.1:PORT`` fails with ``SSL: WRONG_VERSION_NUMBER``
before a byte reaches the proxy. :func:`install` changes exactly that case: a base URL
``http://`` on a loopback host (``127.0.0.1``, ``localhost``, ``::1``) becomes
``ws://`` of the same address, and the SSL context is left out of that connection (a
plain WebSocket takes none). ``https`` base URLs and every other host keep google-genai's
behaviour, so installing it outside a recording changes nothing that worked.

It is installed by rec's ``sitecustomize`` in the processes ``rec start`` / ``rec replay``
run (after ``google.genai.live`` is imported), and in-process by
``recorder._client_env.pointing_clients_at`` (``rec.record()``, ``rec.replay()``, the
pytest plugin). A process rec did not start reaches ``rec serve`` or ``rec start`` the same
way with ``import recorder._live_clients as r; r.install()``, or by giving google-genai a
``ws://127.0.0.1:PORT`` URL of its own.

This module uses nothing but the standard library (and google-genai once installed): the
child's ``sitecustomize`` loads it by path, also in a Python where rec is not installed.
"""

from __future__ import annotations

import functools
import threading
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = ["install", "plain_websocket_url"]

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_MARK = "__rec_live_reach__"
_lock = threading.Lock()


def plain_websocket_url(base_url: str | None) -> str | None:
    """``ws://HOST:PORT/...`` for a plain-HTTP loopback base URL; None for any other."""
    if not base_url:
        return None
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "ws") or (parts.hostname or "") not in _LOOPBACK:
        return None
    return urlunsplit(parts._replace(scheme="ws")).rstrip("/")


def _patch_base_url(api_client_class: Any) -> None:
    original = api_client_class._websocket_base_url
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def _websocket_base_url(self: Any, http_options: Any = None) -> Any:
        options = http_options or getattr(self, "_http_options", None)
        plain = plain_websocket_url(getattr(options, "base_url", None))
        return plain if plain is not None else original(self, http_options)

    setattr(_websocket_base_url, _MARK, True)
    api_client_class._websocket_base_url = _websocket_base_url


def _patch_connect(live_module: Any) -> None:
    original = live_module.ws_connect
    if getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def ws_connect(uri: str, *args: Any, **kwargs: Any) -> Any:
        if isinstance(uri, str) and uri.startswith("ws://"):
            kwargs.pop("ssl", None)  # a plain socket takes no SSL context
        return original(uri, *args, **kwargs)

    setattr(ws_connect, _MARK, True)
    live_module.ws_connect = ws_connect


def install(live_module: Any = None) -> bool:
    """Let google-genai's Live client reach plain-HTTP loopback base URLs (idempotent).

    Returns False when google-genai (or its Live module) is not importable.
    """
    with _lock:
        try:
            if live_module is None:
                from google.genai import live as live_module
            from google.genai import _api_client
        except ImportError:
            return False
        _patch_base_url(_api_client.BaseApiClient)
        _patch_connect(live_module)
        return True
