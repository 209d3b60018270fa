"""Point model clients (in this process and in children) at a rec proxy.

google-genai, and the OpenAI and Anthropic SDKs and LiteLLM through their base-URL
variables (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ...: see :func:`child_environment`).

google-genai reads ``GOOGLE_GEMINI_BASE_URL`` / ``GOOGLE_VERTEX_BASE_URL`` when a client
is created, and also has process-wide default base URLs that win over the environment
(private: see ``recorder/_traffic/_compat.py``); both are set for the duration and restored
afterwards. ``NO_PROXY`` is extended with
loopback so an ``HTTP_PROXY`` in the environment cannot capture the traffic. Vertex AI
clients configured from the environment get their project and location as arguments for
the block, so they use the base URL instead of google-genai's API-gateway mode
(``recorder._traffic._vertex_clients``). google-genai's Live client is made to reach a plain-HTTP
loopback proxy over ``ws://`` (``recorder._traffic._compat.install_live_reach``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping

from cassettes._providers import PROVIDERS
from recorder._traffic._compat import genai_default_base_urls, install_live_reach
from recorder._traffic._vertex_clients import explicit_vertex_clients

_LOOPBACK = "127.0.0.1,localhost,::1"


_LITELLM_OFFLINE = (
    "LITELLM_LOCAL_MODEL_COST_MAP",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS",
    "LITELLM_LOCAL_BLOG_POSTS",
)
"""LiteLLM fetches these documents from GitHub at import or first use unless told to use
its bundled copies: rec tells it to, so a replay never reaches the network."""


def provider_base_urls(url: str) -> dict[str, str]:
    """The OpenAI and Anthropic base-URL variables naming their mounts on the proxy ``url``."""
    return {name: url + provider.mount for provider in PROVIDERS for name in provider.base_url_vars}


def child_environment(url: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process whose model traffic must go through ``url``.

    google-genai's base URLs name ``url``; the OpenAI and Anthropic ones (read by their
    SDKs and by LiteLLM) name the provider's mount on it (``url/openai``,
    ``url/anthropic``: ``cassettes._providers``), and LiteLLM keeps to its bundled data.
    """
    env = dict(os.environ if base is None else base)
    env["GOOGLE_GEMINI_BASE_URL"] = url
    env["GOOGLE_VERTEX_BASE_URL"] = url
    env.update(provider_base_urls(url))
    for name in _LITELLM_OFFLINE:
        env.setdefault(name, "True")
    for name in ("NO_PROXY", "no_proxy"):
        existing = env.get(name, "")
        env[name] = f"{existing},{_LOOPBACK}" if existing else _LOOPBACK
    return env


@contextlib.contextmanager
def pointing_clients_at(url: str, *, extra: Mapping[str, str] | None = None) -> Iterator[None]:
    """Within the block, new google-genai clients in this process talk to ``url``."""
    kept = ("NO_PROXY", "no_proxy", *_LITELLM_OFFLINE)
    wanted = child_environment(url, base={k: v for k, v in os.environ.items() if k in kept})
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
