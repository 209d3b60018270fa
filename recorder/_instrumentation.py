"""Zero-code instrumentation of the recorded process, the way ``opentelemetry-instrument`` does it.

``rec start -- COMMAND`` puts ``recorder/_sitecustomize`` first on the child's
``PYTHONPATH`` and sets ``REC_INSTRUMENT=1`` (:func:`instrumented_environment`). Any Python
the command starts then runs rec's ``sitecustomize`` at interpreter start, which imports
nothing heavy and, only while ``REC_INSTRUMENT`` says rec is recording:

- runs the ``sitecustomize`` that was next on the path (the user's or the distribution's);
- registers two post-import hooks (a ``sys.meta_path`` finder; nothing is imported until
  the program imports it itself): after ``google.genai.client`` is imported, Vertex AI
  clients configured from the environment get their project and location as arguments
  (``recorder._traffic._vertex_clients``); after ``google.genai.live`` is imported, the Live client
  reaches rec's plain-HTTP loopback proxy over ``ws://`` (``recorder._traffic._compat``); after
  ``google.adk.runners`` is imported, every ADK
  ``Runner`` gets rec's capture plugin unless it has one already
  (:func:`attach_capture_plugin`; skipped when ``REC_ADK_CAPTURE`` is unset).

A child that is not Python ignores ``PYTHONPATH``; a Python program that never imports
google-genai or ADK pays for one small file. Opt out with ``rec start --no-instrument``,
or ``REC_NO_INSTRUMENT=1`` in the environment (also read by the ``sitecustomize``, so it
can switch a single grandchild off).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recorder._adk_launch import CAPTURE_ENV

__all__ = [
    "INSTRUMENT_ENV",
    "NO_INSTRUMENT_ENV",
    "SITECUSTOMIZE_DIR",
    "attach_capture_plugin",
    "instrumented_environment",
]

log = logging.getLogger(__name__)

INSTRUMENT_ENV = "REC_INSTRUMENT"
"""Set to ``1`` by ``rec start`` for its command: the ``sitecustomize`` acts only then."""
NO_INSTRUMENT_ENV = "REC_NO_INSTRUMENT"
"""Set (to anything but ``0`` or empty) to turn the instrumentation off."""
SITECUSTOMIZE_DIR = Path(__file__).resolve().parent / "_sitecustomize"
"""The folder ``rec start`` puts first on the child's ``PYTHONPATH``."""


def _opted_out(environ: Mapping[str, str]) -> bool:
    """Whether ``REC_NO_INSTRUMENT`` turns the instrumentation off."""
    return environ.get(NO_INSTRUMENT_ENV, "") not in ("", "0")


def instrumented_environment(environ: Mapping[str, str], *, capture: Path | None) -> dict[str, str]:
    """The variables to add to a child's environment so that its Pythons are instrumented.

    ``capture`` is the ADK capture file (None: no capture plugin, only the Vertex AI hook).
    Empty when ``REC_NO_INSTRUMENT`` is set in ``environ``.
    """
    if _opted_out(environ):
        return {}
    path = [str(SITECUSTOMIZE_DIR)]
    existing = environ.get("PYTHONPATH", "")
    path += [p for p in existing.split(os.pathsep) if p and p != str(SITECUSTOMIZE_DIR)]
    extra = {"PYTHONPATH": os.pathsep.join(path), INSTRUMENT_ENV: "1"}
    if capture is not None:
        extra[CAPTURE_ENV] = str(capture)
    return extra


def attach_capture_plugin(runner_class: Any) -> None:
    """Make every ``runner_class`` (ADK's ``Runner``) built from now on carry the capture plugin.

    The plugin is put first in the runner's plugin manager after ADK's own ``__init__``
    (its callbacks name who reads the clock before an app plugin can answer one, as
    replay's own plugin does), unless a ``RecCapturePlugin`` is there already
    (``adk web --extra_plugins``, a script that added it, an ``AgentTool`` runner sharing
    its parent's plugins). Called by the child's ``sitecustomize`` once
    ``google.adk.runners`` is imported; for the life of the process.
    """
    original = runner_class.__dict__["__init__"]
    if getattr(original, "__rec_capture__", False):
        return

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        try:
            _add_plugin(self)
        except Exception as exc:  # noqa: BLE001 - never break the user's program over capture
            log.warning("rec: could not attach the ADK capture plugin (%s)", exc)

    __init__.__rec_capture__ = True  # type: ignore[attr-defined]
    runner_class.__init__ = __init__


def _add_plugin(runner: Any) -> None:
    from recorder._adk_plugin import RecCapturePlugin

    manager = runner.plugin_manager
    if any(isinstance(plugin, RecCapturePlugin) for plugin in manager.plugins):
        return
    manager.register_plugin(RecCapturePlugin())
    manager.plugins.insert(0, manager.plugins.pop())
