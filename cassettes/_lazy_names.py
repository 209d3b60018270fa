"""A package door whose names load on first use (a module ``__getattr__``, PEP 562).

A door hands on names from the modules behind it without importing them when the door is
imported: the first use of a name imports its module and keeps the name on the door.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(door: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of the package ``door``: each name of ``homes`` is imported from
    the module ``homes`` names for it (a full module name) on first use.

    Example::

        __getattr__ = lazy_names(__name__, {"Recorder": "recorder._recorder"})
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {door!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[door], name, value)
        return value

    return __getattr__
