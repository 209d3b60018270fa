"""A Python file loaded as a module without a package: a script in ``tools/`` or
``examples/``, or an agent file a test wrote."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

__all__ = ["load_script"]


def load_script(path: Path, name: str | None = None) -> ModuleType:
    """Execute ``path`` as a fresh module named ``name`` (default: the file's stem); it is
    not put in ``sys.modules``."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
