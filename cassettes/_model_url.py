"""Which model call a request URL names: ``…/models/{model}:{method}``.

The Gemini API's ``/v1beta/models/gemini-2.5-flash:generateContent`` and Vertex AI's
``/v1beta1/projects/P/locations/L/publishers/google/models/gemini-2.5-flash:streamGenerateContent``
both end in the model and the method; the query (``?alt=sse``) is not part of it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["GENERATE_METHODS", "STREAM_METHOD", "ModelCall", "model_call"]

STREAM_METHOD = "streamGenerateContent"
"""The method that streams a model turn (server-sent events)."""

GENERATE_METHODS = frozenset({"generateContent", STREAM_METHOD})
"""The methods that generate content (a model turn), unary and streamed."""

_MODEL_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")


@dataclass(frozen=True)
class ModelCall:
    """The model and method a request URL names."""

    model: str
    method: str
    """``generateContent``, ``streamGenerateContent``, ``countTokens``, ``embedContent``, ..."""


@functools.lru_cache(maxsize=512)
def model_call(url: str) -> ModelCall | None:
    """The model call ``url`` (a full URL or a path with its query) names; None for others.

    Remembered per URL (the answer is immutable): a recording repeats a few URLs, and
    threading, ``rec show`` and the reports ask for each exchange's more than once."""
    found = _MODEL_PATH.search(urlsplit(url).path)
    return ModelCall(found["model"], found["method"]) if found else None
