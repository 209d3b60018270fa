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
"""

from __future__ import annotations

import contextlib
import functools
import os
import ssl
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["gemini_models", "model_client_args", "shared_tls", "tls_context"]


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
