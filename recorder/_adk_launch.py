"""Attach rec's ADK capture plugin to ``adk web`` / ``adk api_server`` without code changes.

``rec start -- adk web agents/`` becomes ``adk web --extra_plugins
rec.RecCapturePlugin agents/`` with ``REC_ADK_CAPTURE`` naming the
capture file, so the EvalSet gets exact authors, app name, user id and session state.
Other commands (``adk run`` has no ``--extra_plugins``, scripts, other languages) are left
alone; their EvalSet comes from the traffic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["AdkLaunch", "with_adk_capture"]

PLUGIN = "rec.RecCapturePlugin"
CAPTURE_ENV = "REC_ADK_CAPTURE"
_SERVING = ("web", "api_server")


@dataclass(frozen=True)
class AdkLaunch:
    """The command to run and the extra environment it needs."""

    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    attached: bool = False
    """Whether the capture plugin was attached."""


def with_adk_capture(command: Sequence[str], *, capture: Path) -> AdkLaunch:
    """Add the capture plugin when ``command`` serves ADK agents (``adk web|api_server``)."""
    args = list(command)
    if len(args) < 2 or Path(args[0]).name != "adk" or args[1] not in _SERVING:
        return AdkLaunch(args)
    rest = args[2:]
    for index, arg in enumerate(rest):
        if arg == "--extra_plugins" and index + 1 < len(rest):
            rest[index + 1] = f"{rest[index + 1]},{PLUGIN}"
            break
        if arg.startswith("--extra_plugins="):
            rest[index] = f"{arg},{PLUGIN}"
            break
    else:
        rest = ["--extra_plugins", PLUGIN, *rest]
    return AdkLaunch([args[0], args[1], *rest], {CAPTURE_ENV: str(capture)}, attached=True)
