"""rec's ``sitecustomize``: instruments a Python that ``rec start`` runs.

``rec start -- COMMAND`` puts this folder first on the child's ``PYTHONPATH`` (see
``recorder._instrumentation``), so Python imports this module at interpreter start. It
first runs the ``sitecustomize`` that would have run without rec (the next one on
``sys.path``). Then, only when ``REC_INSTRUMENT=1`` and not ``REC_NO_INSTRUMENT``, it
registers post-import hooks (Vertex AI clients, the Live client's reach of a loopback
proxy: ``recorder._traffic._compat.install_live_reach``, the ADK capture plugin): nothing of
google-genai or ADK is imported here, only once the program imports them itself. It never
breaks the program: a hook that fails prints one ``rec:`` line to stderr.
"""

from __future__ import annotations

# Only what Python's start-up has imported already (no pathlib, typing or importlib.abc):
# a program that never imports google-genai or ADK should not pay for rec.
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

_HERE = os.path.dirname(os.path.realpath(__file__))
_FLOOR = os.path.join(os.path.dirname(_HERE), "_traffic")
"""The recorder's traffic floor, whose stdlib-only modules this file loads by path."""


def _say(message: str) -> None:
    sys.stderr.write(f"rec: {message}\n")


def _chain_next_sitecustomize() -> None:
    """Run the ``sitecustomize`` next on ``sys.path`` as if it were the only one."""
    others = [p for p in sys.path if os.path.realpath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    mine = sys.modules.get("sitecustomize")
    sys.modules["sitecustomize"] = module  # the user's module answers `import sitecustomize`
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - as site.py: report and go on
        if mine is not None:
            sys.modules["sitecustomize"] = mine
        _say(f"the sitecustomize at {spec.origin} raised {type(exc).__name__}: {exc}")


class _ChainedLoader:
    """The module's own loader, then ``hook(module)``."""

    def __init__(self, loader: Any, hook: Callable[[ModuleType], None]) -> None:
        self._loader = loader
        self._hook = hook

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self._loader.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        # The module keeps its real loader (importlib.resources and reloads use it).
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        try:
            self._hook(module)
        except Exception as exc:  # noqa: BLE001 - never break the program's import
            _say(f"instrumenting {module.__name__} failed ({type(exc).__name__}: {exc})")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _AfterImport:
    """Calls a hook right after a named module has been imported (first import only)."""

    def __init__(self, hooks: dict[str, Callable[[ModuleType], None]]) -> None:
        self._hooks = hooks

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        hook = self._hooks.get(fullname)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None:
            return None
        del self._hooks[fullname]
        spec.loader = _ChainedLoader(spec.loader, hook)  # type: ignore[assignment]  # a Loader by protocol
        return spec


def _load_floor_file(name: str) -> ModuleType:
    """A stdlib-only module of the traffic floor, loaded by path (rec may not be importable)."""
    spec = importlib.util.spec_from_file_location(
        f"_rec_{name}", os.path.join(_FLOOR, f"{name}.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _vertex_hook(module: ModuleType) -> None:
    proxy = os.environ.get("GOOGLE_VERTEX_BASE_URL")
    if not proxy:
        return
    vertex = _load_floor_file("_vertex_clients")
    vertex.patch_client_class(module.Client, lambda: (proxy,), os.environ)


class _RecHook:
    """A hook that hands the imported module (or ``part`` of it) to a function of rec's;
    when this interpreter cannot import rec it says so: rec ``cannot`` do something and
    ``instead`` happens."""

    def __init__(self, target: str, *, part: str | None, cannot: str, instead: str) -> None:
        self.module, _, self.name = target.rpartition(".")
        self.part, self.cannot, self.instead = part, cannot, instead

    def __call__(self, module: ModuleType) -> None:
        try:
            function = getattr(importlib.import_module(self.module), self.name)
        except ImportError as exc:
            _say(
                f"cannot {self.cannot}: rec is not importable by {sys.executable} ({exc}); "
                f"{self.instead}"
            )
            return
        function(module if self.part is None else getattr(module, self.part))


_live_hook = _RecHook(
    "recorder._traffic.install_live_reach",
    part=None,
    cannot="let the Live client reach rec",
    instead="a Live session would try wss:// and fail",
)
_runner_hook = _RecHook(
    "recorder._instrumentation.attach_capture_plugin",
    part="Runner",
    cannot="attach the ADK capture plugin",
    instead="the eval set is built from the model traffic",
)


def _install() -> None:
    hooks: dict[str, Callable[[ModuleType], None]] = {
        "google.genai.client": _vertex_hook,
        "google.genai.live": _live_hook,
    }
    if os.environ.get("REC_ADK_CAPTURE"):
        hooks["google.adk.runners"] = _runner_hook
    for name in list(hooks):
        already = sys.modules.get(name)
        if already is not None:  # imported by a .pth file before us
            hooks.pop(name)(already)
    if hooks:
        sys.meta_path.insert(0, _AfterImport(hooks))


_chain_next_sitecustomize()
if os.environ.get("REC_INSTRUMENT") == "1" and os.environ.get("REC_NO_INSTRUMENT", "") in ("", "0"):
    _install()
