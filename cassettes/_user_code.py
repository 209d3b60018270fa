"""Import the user's own functions named in config files (custom metrics).

A config names ``module.function``. ``adk eval`` imports it with whatever is on
``sys.path`` (the agent's parent folder is, once the agent is loaded). ``rec score`` and
``rec check`` load no agent, so the config file's folder and its ancestors are searched
too, nearest first: a config kept beside (or below) the agent's package finds it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cassettes._extras import extra_install

__all__ = ["import_callable"]


def import_callable(dotted: str, *, near: str | Path | None = None) -> Callable[..., Any]:
    """Import ``module.function``; fall back to the folders around ``near`` (a file).

    Raises:
        ImportError: the module or attribute cannot be found, or is not callable; the
            message says which.
    """
    module_name, _, attribute = dotted.rpartition(".")
    if not module_name:
        raise ImportError(f'"{dotted}" is not of the form module.function')
    try:
        module = importlib.import_module(module_name)
    except ImportError as first:
        if near is None:
            raise ImportError(f'cannot import module "{module_name}" ({first})') from first
        module = _import_near(module_name, Path(near), first)
    function = getattr(module, attribute, None)
    if function is None:
        raise ImportError(f'module "{module_name}" has no "{attribute}"')
    if not callable(function):
        raise ImportError(f'"{dotted}" is not callable')
    return function  # type: ignore[no-any-return]


def _import_near(module_name: str, near: Path, first: ImportError) -> Any:
    start = near.resolve().parent
    for folder in (start, *start.parents):
        top = module_name.split(".")[0]
        if not ((folder / top).is_dir() or (folder / f"{top}.py").is_file()):
            continue
        sys.path.insert(0, str(folder))
        try:
            return importlib.import_module(module_name)
        except ImportError as exc:
            sys.path.remove(str(folder))
            if not _is_the_module(exc, module_name):
                # Found here, but something it imports is missing: name that, not the module.
                install = extra_install(exc)
                hint = f" ({install[1]})" if install else ""
                raise ImportError(
                    f'module "{module_name}" (in {folder}) cannot be imported: {exc}{hint}'
                ) from exc
            continue
    raise ImportError(
        f'cannot import module "{module_name}" ({first}; also searched {start} and the '
        "folders above it)"
    ) from first


def _is_the_module(exc: ImportError, module_name: str) -> bool:
    """Whether ``exc`` says ``module_name`` (or a package above it) itself is not there."""
    missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
    return missing is not None and (module_name == missing or module_name.startswith(missing + "."))
