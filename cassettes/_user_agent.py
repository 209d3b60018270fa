"""Read client library versions from the ``user-agent`` / ``x-goog-api-client`` headers.

google-genai sends ``google-genai-sdk/2.34.0 gl-python/3.11.7`` and ADK appends
``google-adk/2.13.0``; the versions are kept in each exchange's metadata so that a
cassette says which SDK and ADK produced it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["client_versions"]

_TOKEN = re.compile(r"([A-Za-z][\w.\-]*)/([\w.\-+]+)")


def client_versions(headers: Mapping[str, str]) -> dict[str, str]:
    """``{"google-genai-sdk": "2.34.0", "gl-python": "3.11.7", "google-adk": "2.13.0"}``.

    Labels such as ``+afc`` or ``+chat`` after a version are kept in the version.
    """
    found: dict[str, str] = {}
    for name in ("user-agent", "x-goog-api-client"):
        for product, version in _TOKEN.findall(headers.get(name, "")):
            found.setdefault(product, version)
    return dict(sorted(found.items()))
