"""Every private name of google-genai the recorder uses, in one place.

google-genai reads ``GOOGLE_GEMINI_BASE_URL`` / ``GOOGLE_VERTEX_BASE_URL`` (public), but a
base URL set with its private ``google.genai._base_url.set_default_base_urls`` wins over
them. A process that called it would send its model traffic past rec's proxy: to a real
endpoint during replay. rec therefore sets those defaults too, for the duration of a
recording or a replay, through :func:`genai_default_base_urls`; it is the only access to
a private google-genai name, and ``tests/recorder/test_compat.py`` checks it against the
installed release.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

from cassettes import RunError

__all__ = ["KNOWN_GENAI", "GenaiChanged", "genai_default_base_urls"]

KNOWN_GENAI = "2.34 and 3.x"
"""The google-genai releases this access was written against."""

_MODULE = "google.genai._base_url"
_NAMES = ("_default_base_gemini_url", "_default_base_vertex_url", "set_default_base_urls")


class GenaiChanged(RunError):
    """google-genai no longer has the private name rec relies on."""


@contextlib.contextmanager
def genai_default_base_urls(url: str) -> Iterator[None]:
    """google-genai's process-wide default base URLs point at ``url`` within the block.

    Raises:
        GenaiChanged: the installed google-genai lacks the names (the message says which).
    """
    try:
        module = importlib.import_module(_MODULE)
    except ImportError:
        module = None
    missing = [name for name in _NAMES if module is None or not hasattr(module, name)]
    if module is None or missing:
        raise GenaiChanged(
            f"google-genai has no {_MODULE}.{missing[0] if missing else _NAMES[0]} (rec sets "
            f"google-genai's default base URLs with it; written against {KNOWN_GENAI})",
            path="google-genai",
            fix="Install a google-genai release rec supports, or update recorder/_compat.py",
        )
    previous = (module._default_base_gemini_url, module._default_base_vertex_url)
    module.set_default_base_urls(gemini_url=url, vertex_url=url)
    try:
        yield
    finally:
        module.set_default_base_urls(gemini_url=previous[0], vertex_url=previous[1])
