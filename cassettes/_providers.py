"""Model providers other than Gemini whose wire rec records and replays: OpenAI, Anthropic.

Their SDKs (``openai``, ``anthropic``) and LiteLLM (``LiteLlm("openai/…")``,
``LiteLlm("anthropic/…")``, any OpenAI-compatible ``api_base``) read their base URL from
the environment, so rec points them at itself the way it points google-genai: each
provider has a *mount* on rec's proxy (``{proxy}/openai``, ``{proxy}/anthropic``), and
what arrives under it goes to the provider's upstream, the base URL the user configured
(``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ...) or else the provider's public one.

A recorded URL is the upstream's (``http://localhost:8000/v1/chat/completions``), a
replayed one the mount's (``/openai/chat/completions``): both key on the provider's
endpoint (:func:`provider_route`), so a recording replays whatever base URL it was made
against. Provider-issued ids that a conversation sends back (tool-call ids ``call_…``,
``toolu_…``) are keyed by their order of appearance (:func:`canonical_ids`), so ids a
client or a live model makes up anew do not break matching.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ANTHROPIC",
    "OPENAI",
    "PROVIDERS",
    "Provider",
    "canonical_ids",
    "configured_upstream",
    "mounted",
    "provider_route",
]


@dataclass(frozen=True)
class Provider:
    """One provider's wire, as rec needs to know it."""

    name: str
    """``openai`` or ``anthropic``."""
    default_upstream: str
    """The public base URL, used when the user configured none."""
    base_url_vars: tuple[str, ...]
    """Environment variables naming the base URL, in the order clients read them."""
    key_vars: tuple[str, ...]
    """Environment variables holding its API key (any one is enough)."""
    endpoints: tuple[str, ...]
    """Paths relative to the base URL a recording keys on (longest first)."""

    @property
    def mount(self) -> str:
        """The path prefix on rec's proxy that carries this provider's traffic."""
        return f"/{self.name}"


OPENAI = Provider(
    name="openai",
    default_upstream="https://api.openai.com/v1",
    # The openai SDK reads OPENAI_BASE_URL; LiteLLM reads OPENAI_BASE_URL, then OPENAI_API_BASE.
    base_url_vars=("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    key_vars=("OPENAI_API_KEY",),
    endpoints=("/chat/completions", "/completions", "/embeddings", "/responses"),
)
ANTHROPIC = Provider(
    name="anthropic",
    default_upstream="https://api.anthropic.com",
    # LiteLLM reads ANTHROPIC_API_BASE first; the anthropic SDK reads ANTHROPIC_BASE_URL.
    base_url_vars=("ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"),
    key_vars=("ANTHROPIC_API_KEY",),
    endpoints=("/v1/messages/count_tokens", "/v1/messages"),
)
PROVIDERS = (OPENAI, ANTHROPIC)


def mounted(path: str) -> tuple[Provider, str] | None:
    """The provider whose mount ``path`` (a request path on rec's proxy, with or without a
    query) is under, and the rest of the path; None for Gemini and other paths."""
    for provider in PROVIDERS:
        if path == provider.mount or path.startswith((provider.mount + "/", provider.mount + "?")):
            return provider, path[len(provider.mount) :]
    return None


def provider_route(path: str) -> str | None:
    """The canonical path of a provider call (``/openai/chat/completions``), whatever base
    URL it was sent to; None for a path that is not a provider endpoint.

    A path on rec's mount keys on what follows the mount; an upstream URL's path (as
    recorded) on the provider endpoint it ends with.
    """
    found = mounted(path)
    if found is not None:
        provider, rest = found
        for endpoint in provider.endpoints:
            if rest.endswith(endpoint):
                return provider.mount + endpoint
        return provider.mount + rest
    if "/models/" in path or "/projects/" in path:  # Gemini and Vertex AI paths
        return None
    for provider in PROVIDERS:
        for endpoint in provider.endpoints:
            if path.endswith(endpoint):
                return provider.mount + endpoint
    return None


def configured_upstream(provider: Provider, environ: Mapping[str, str]) -> str:
    """The base URL the user configured for ``provider``, else its public one."""
    for name in provider.base_url_vars:
        value = environ.get(name, "").strip()
        if value:
            return value.rstrip("/")
    return provider.default_upstream


_ID_KEYS = frozenset({"tool_call_id", "tool_use_id", "call_id", "previous_response_id"})
"""Keys whose value is an id the provider (or the client) issued, wherever they appear."""
_ID_TYPES = frozenset({"tool_use", "function_call"})
"""Objects of these ``type`` s carry an issued ``id`` (Anthropic's ``tool_use`` blocks, the
Responses API's ``function_call`` items), as do the items of OpenAI's ``tool_calls``."""


def canonical_ids(body: Any) -> Any:
    """``body`` with every issued id replaced by its order of first appearance (``id#0``).

    The same id keeps the same placeholder, so a tool result still points at its call.
    """
    seen: dict[str, str] = {}

    def placeholder(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value not in seen:
            seen[value] = f"id#{len(seen)}"
        return seen[value]

    def walk(value: Any, *, owned: bool = False) -> Any:
        if isinstance(value, list):
            return [walk(item, owned=owned) for item in value]
        if not isinstance(value, dict):
            return value
        issued = owned or value.get("type") in _ID_TYPES
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in _ID_KEYS or (key == "id" and issued):
                out[key] = placeholder(item)
            else:
                out[key] = walk(item, owned=key == "tool_calls")
        return out

    return walk(body)
