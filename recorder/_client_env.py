"""Point google-genai clients (in this process and in children) at a rec proxy.

google-genai reads ``GOOGLE_GEMINI_BASE_URL`` / ``GOOGLE_VERTEX_BASE_URL`` when a client
is created, and also has process-wide default base URLs that win over the environment
(private: see ``recorder/_compat.py``); both are set for the duration and restored
afterwards. ``NO_PROXY`` is extended with
loopback so an ``HTTP_PROXY`` in the environment cannot capture the traffic. Vertex AI
clients configured from the environment get their project and location as arguments for
the block, so they use the base URL instead of google-genai's API-gateway mode
(``recorder._vertex_clients``). google-genai's Live client is made to reach a plain-HTTP
loopback proxy over ``ws://`` (``recorder._compat.install_live_reach``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping

from recorder._compat import genai_default_base_urls, install_live_reach
from recorder._vertex_clients import explicit_vertex_clients

__all__ = ["child_environment", "pointing_clients_at"]

_LOOPBACK = "127.0.0.1,localhost,::1"


def child_environment(url: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process whose model traffic must go through ``url``."""
    env = dict(os.environ if base is None else base)
    env["GOOGLE_GEMINI_BASE_URL"] = url
    env["GOOGLE_VERTEX_BASE_URL"] = url
    for name in ("NO_PROXY", "no_proxy"):
        existing = env.get(name, "")
        env[name] = f"{existing},{_LOOPBACK}" if existing else _LOOPBACK
    return env


@contextlib.contextmanager
def pointing_clients_at(url: str, *, extra: Mapping[str, str] | None = None) -> Iterator[None]:
    """Within the block, new google-genai clients in this process talk to ``url``."""
    wanted = child_environment(
        url, base={k: v for k, v in os.environ.items() if k in ("NO_PROXY", "no_proxy")}
    )
    wanted.update(extra or {})
    saved = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    install_live_reach()
    try:
        with genai_default_base_urls(url), explicit_vertex_clients(url, os.environ):
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
