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

pydantic's plugin loader imports ``importlib.metadata`` when the first validator is built,
even when the variable tells it to load nothing (about a tenth of ``rec show``'s start):
within the block, when pydantic has not loaded it yet, a stand-in loader answers what
pydantic's does with the variable set (no plugins), and any other name it is asked for
loads pydantic's own loader. It is withdrawn when the block ends, so pydantic's own is
the one loaded after.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import os
import re
import sys
import types
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

__all__ = ["PLUGINS_VARIABLE", "pydantic_plugins_possible", "skip_plugin_discovery"]

PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"
"""pydantic's switch: ``__all__`` loads no plugin."""

_LOADER = "pydantic.plugin._loader"
"""pydantic's plugin loader: ``get_plugins()`` imports ``importlib.metadata`` with it."""

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
            try:  # os, not pathlib: a path object per distribution costs a third of the scan
                with open(os.path.join(name, "entry_points.txt"), "rb") as file:
                    text = file.read()
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
    finder = None if _LOADER in sys.modules else _NoPluginsLoader()
    if finder is not None:
        sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        os.environ.pop(PLUGINS_VARIABLE, None)
        if finder is not None:
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
            if getattr(sys.modules.get(_LOADER), "__loader__", None) is finder:
                del sys.modules[_LOADER]


class _NoPluginsLoader:
    """Finds and makes a stand-in for pydantic's plugin loader that finds no plugins, as
    pydantic's own does under ``PYDANTIC_DISABLE_PLUGINS=__all__``, without importing
    ``importlib.metadata``; any other name asked of it is pydantic's own loader's (loaded
    then, in place of the stand-in)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        if name != _LOADER:
            return None
        return importlib.machinery.ModuleSpec(name, cast("Loader", self))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the usual module object

    def exec_module(self, module: types.ModuleType) -> None:
        def get_plugins() -> tuple[()]:
            return ()

        def real(name: str) -> Any:
            if name.startswith("__"):  # the import system asks a module for __path__
                raise AttributeError(name)
            if sys.modules.get(_LOADER) is module:
                del sys.modules[_LOADER]
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            return getattr(importlib.import_module(_LOADER), name)

        module.get_plugins = get_plugins  # type: ignore[attr-defined]
        module.__getattr__ = real  # type: ignore[method-assign]
