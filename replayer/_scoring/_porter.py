"""NLTK's Porter stemmer, loaded without the rest of NLTK.

``response_match_score`` stems ASCII words with ``nltk.stem.porter.PorterStemmer``, as
ADK does (through ``rouge_score``). But ``import nltk.stem.porter`` first runs
``nltk/__init__.py``, which imports most of NLTK and, through it, SciPy: seconds of
start-up for one small class. The stemmer's module needs only a few small NLTK modules
(an abstract base class and the helpers its demo uses), so :func:`porter_stemmer` runs
NLTK's own ``porter.py`` with its ``from nltk... import`` lines answered by private copies
of exactly the modules it names, executed from NLTK's installed files. The stemmer is
NLTK's code, unchanged; ``tests/replayer/test_porter.py`` compares it word for word with
``nltk.stem.porter.PorterStemmer``.

When NLTK is imported already, or the private load fails for any reason (another NLTK
version importing something else), the ordinary import is used.
"""

from __future__ import annotations

import builtins
import importlib.util
import logging
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["porter_stemmer"]

log = logging.getLogger(__name__)


def porter_stemmer() -> Any:
    """A new ``nltk.stem.porter.PorterStemmer()`` (default mode, as ``rouge_score`` builds it)."""
    if "nltk" not in sys.modules:
        try:
            return standalone_porter_class()()
        except Exception as exc:  # noqa: BLE001 - any surprise: use the ordinary import
            log.debug("loading NLTK's Porter stemmer alone failed (%r); importing nltk", exc)
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


class _Deferred(types.ModuleType):
    """An NLTK module loaded (privately) on its first attribute read.

    ``porter.py`` imports ``nltk.redos``, which imports the third-party ``regex`` engine
    (20 ms), for its ``demo()`` only: stemming never reads it.
    """

    def __init__(self, dotted: str, load: Callable[[str], types.ModuleType]) -> None:
        super().__init__(dotted)
        self.dotted = dotted
        self.load = load

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.load(self.dotted), attribute)


def standalone_porter_class() -> type[Any]:
    """``PorterStemmer`` from NLTK's ``stem/porter.py``, its NLTK imports loaded privately.

    Raises:
        ImportError: NLTK is not installed, or ``porter.py`` imports an NLTK name in a
            way this loader does not answer.
    """
    spec = importlib.util.find_spec("nltk")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("nltk is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    loaded: dict[str, types.ModuleType] = {}

    def load(dotted: str) -> types.ModuleType:
        module = loaded.get(dotted)
        if module is not None:
            return module
        parts = dotted.split(".")[1:]
        path = root.joinpath(*parts).with_suffix(".py")
        module = types.ModuleType(f"{__name__}.nltk_{'_'.join(parts)}")
        module.__file__ = str(path)
        module.__dict__["__builtins__"] = {**vars(builtins), "__import__": private_import}
        loaded[dotted] = module
        exec(compile(path.read_bytes(), str(path), "exec"), module.__dict__)
        return module

    def private_import(
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> Any:
        if level or not (name == "nltk" or name.startswith("nltk.")):
            return builtins.__import__(name, globals, locals, fromlist or (), level)
        if not fromlist:
            raise ImportError(f"`import {name}` is not answered by the standalone loader")
        if name == "nltk":  # from nltk import redos: only the demo uses it (and its regex)
            return types.SimpleNamespace(
                **{item: _Deferred(f"nltk.{item}", load) for item in fromlist}
            )
        return load(name)  # from nltk.stem.api import StemmerI

    stemmer = load("nltk.stem.porter").PorterStemmer
    assert isinstance(stemmer, type)
    return stemmer
