"""Spare pydantic its plugin discovery in commands that start in a blink, when no plugin exists.

The first validator pydantic builds in a process looks for plugins with
``importlib.metadata.entry_points(group="pydantic")``, which reads the metadata of every
installed distribution: tens of milliseconds beside google-adk's dependencies, in
``rec check`` and ``rec score``, which users run in loops and pre-commit hooks. pydantic
skips the search when ``PYDANTIC_DISABLE_PLUGINS`` is set (it reads the variable when it
builds that first validator, so setting it inside a command is in time).

:func:`skip_plugin_discovery` sets it only when no distribution on ``sys.path`` declares
a pydantic plugin, read straight from the ``entry_points.txt`` files (a few milliseconds),
so the plugins pydantic loads are the same either way: none. A path this scan cannot read
fully (a zip or egg on ``sys.path``, a distribution finder other than the standard one)
counts as one that may hold a plugin, and pydantic searches as usual. A value the user set
is kept. The commands that use it start no program of the user's that could run in
another environment and inherit the variable, and it is unset when the command ends.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["PLUGINS_VARIABLE", "pydantic_plugins_possible", "skip_plugin_discovery"]

PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"
"""pydantic's switch: ``__all__`` loads no plugin."""

_SECTION = re.compile(rb"^\s*\[\s*pydantic\s*\]", re.MULTILINE)


def pydantic_plugins_possible(paths: Iterable[str] | None = None) -> bool:
    """False only if no distribution on ``paths`` (default ``sys.path``) declares a pydantic
    plugin and every place a distribution could hide was read."""
    if paths is None:
        paths = sys.path
        others = [
            finder
            for finder in sys.meta_path
            if hasattr(finder, "find_distributions")
            and finder is not importlib.machinery.PathFinder
        ]
        if others:
            return True
    for entry in paths:
        folder = Path(entry or ".")
        if folder.is_file() or folder.suffix == ".egg":
            return True  # a zip or an egg: importlib.metadata reads inside, this scan does not
        try:
            with os.scandir(folder) as found:
                names = [e.path for e in found if e.name.endswith((".dist-info", ".egg-info"))]
        except OSError:
            continue  # a missing folder holds no distribution
        for name in names:
            try:
                text = Path(name, "entry_points.txt").read_bytes()
            except (FileNotFoundError, NotADirectoryError):
                continue  # no entry points (an egg-info file has none)
            except OSError:
                return True
            if _SECTION.search(text):
                return True
    return False


@contextlib.contextmanager
def skip_plugin_discovery() -> Iterator[None]:
    """Within the block, pydantic knows there are no plugins to find, when there are none
    (see the module); the environment is as it was afterwards (a command run in-process,
    as tests and ``rec.cli.main`` callers do, leaves nothing behind)."""
    if PLUGINS_VARIABLE in os.environ or pydantic_plugins_possible():
        yield
        return
    os.environ[PLUGINS_VARIABLE] = "__all__"
    try:
        yield
    finally:
        os.environ.pop(PLUGINS_VARIABLE, None)
