"""Load the thing ``rec replay`` drives: an ADK agent (as ``adk eval`` loads it) or a program.

AGENT may be:

- an ADK agent **folder** (``path/to/my_agent``, holding ``__init__.py`` / ``agent.py``): its
  ``.env`` is loaded as ``adk eval`` loads it, its parent goes on ``sys.path`` and the
  package is imported by its folder name;
- an importable **module** (``my_pkg.my_agent`` or ``my_pkg.my_agent.agent``);
- ``module:function`` (or ``path/to/file.py:function``) for a **plain google-genai program**.

For ADK, as ``adk eval`` (``google/adk/cli/cli_eval.py``) and ``AgentEvaluator`` do: the
module's ``agent`` submodule when it has one, then ``agent.app`` (an ``App``: its plugins,
context cache and resumability configs take part in the run), else ``agent.root_agent``
(an agent, or any ADK 2 workflow node such as a ``Workflow`` graph, as ADK's own loader
accepts), else ``await agent.get_agent_async()`` (which returns ``(agent, exit_stack)``).
``app_name`` is the folder (package) name. ``agent.reset_data`` is called before each case
when present.

**The program protocol.** A program is an async function::

    async def chat(text: str, session: rec.ProgramSession) -> str | None:
        client = session.data.setdefault("client", genai.Client())
        chat = session.data.setdefault(
            "chat", client.aio.chats.create(model="gemini-2.0-flash", config=...))
        reply = await chat.send_message(text)
        return reply.text

rec calls it once per user turn of an eval case, in order, with the user's text and one
:class:`ProgramSession` per case (``app_name``, ``user_id``, ``session_id``, ``state`` from
the case's ``session_input``; ``turn`` = 0-based index; ``data`` = a dict the program keeps
its own objects in between turns, e.g. its chat). ``rec replay`` imports AGENT only once
the replay proxy runs and placeholder credentials are set, so a google-genai client the
module creates at import talks to the proxy, as one created inside the call. What it
returns is ignored: the actual invocations are extracted from its model traffic, the way
``rec start`` extracts them.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import sysconfig
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

from cassettes._errors import InputError
from cassettes._secret_shapes import mask

__all__ = [
    "LoadedAgent",
    "ProgramFunction",
    "ProgramSession",
    "is_program_spec",
    "load_agent",
    "load_agent_async",
    "sub_agent",
]


@dataclass
class ProgramSession:
    """The session a plain google-genai program gets for one eval case (see module docs)."""

    app_name: str
    """``session_input.app_name`` (or the program's module name)."""
    user_id: str
    """``session_input.user_id``."""
    session_id: str
    """``session_input.session_id``, or a fixed id derived from the eval id."""
    state: dict[str, Any] = field(default_factory=dict)
    """``session_input.state`` (a copy: the program may change it)."""
    turn: int = 0
    """0-based index of the user turn being sent."""
    data: dict[str, Any] = field(default_factory=dict)
    """The program's own objects kept between the turns of one case (its chat, its client)."""


ProgramFunction = Callable[[str, ProgramSession], Awaitable[str | None]]
"""``async def fn(text, session) -> str | None``."""


@dataclass
class LoadedAgent:
    """What :func:`load_agent` found: an ADK agent (with its App) or a program."""

    spec: str
    """AGENT as given (named in messages)."""
    app_name: str
    """The folder / package name (ADK's ``app_name``)."""
    root_agent: Any = None
    """The ADK agent to run (a ``BaseAgent``), or None for a program."""
    app: Any = None
    """The module's ``App`` when it defines one (its plugins are kept)."""
    reset: Callable[[], object] | None = None
    """``agent.reset_data`` when the module defines it."""
    program: ProgramFunction | None = None
    """The program function (``module:function``), or None for ADK."""

    @property
    def is_program(self) -> bool:
        return self.program is not None


_FIX_AGENT = (
    "Give an ADK agent folder (with __init__.py importing agent.py that defines root_agent, "
    "app or get_agent_async), a module name, or module:function for a google-genai program"
)


def _import_folder(folder: Path) -> ModuleType:
    """Import an agent folder as a package named after it, its parent on ``sys.path``.

    When another package of that name is already imported (two copies of an agent, e.g.
    before and after an edit), or would be imported by that name (its folder comes first on
    ``sys.path``), this one is imported under a unique name instead.
    """
    folder = folder.resolve()
    name = folder.name
    existing = sys.modules.get(name)
    if existing is not None:
        where = getattr(existing, "__file__", None) or ""
        if Path(where).resolve().parent == folder:
            return existing
    else:
        parent = str(folder.parent)
        if parent not in sys.path:
            sys.path.insert(0, parent)
        # The name finds this folder unless a folder of that name comes first on sys.path
        # (another agent's parent, put there before this one's).
        if _finds(name, folder):
            return importlib.import_module(name)
    name = f"rec_agent_{abs(hash(str(folder))):x}_{folder.name}"
    if name in sys.modules:
        return sys.modules[name]
    init = folder / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(folder)]
    )
    return _exec_spec(name, spec, folder, "folder")


def _finds(name: str, folder: Path) -> bool:
    """Whether importing the top-level ``name`` would import ``folder``."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    places = [spec.origin] if spec.origin else list(spec.submodule_search_locations or ())
    return any(
        (Path(place).resolve().parent if spec.origin else Path(place).resolve()) == folder
        for place in places
    )


def _load_dotenv(folder: Path) -> None:
    """The agent's ``.env`` (the nearest one from its folder up), loaded as ``adk eval`` does.

    ADK's own ``load_dotenv_for_agent``: variables already in the environment (rec's
    placeholders among them) win, ``ADK_DISABLE_LOAD_DOTENV`` turns it off. An agent that
    picks Vertex AI, its project or its location there replays as it was recorded.
    """
    from google.adk.cli.utils.envs import load_dotenv_for_agent

    folder = folder.resolve()
    load_dotenv_for_agent(folder.name, str(folder.parent))


def _import_file(path: Path) -> ModuleType:
    name = f"rec_program_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    return _exec_spec(name, importlib.util.spec_from_file_location(name, path), path, "file")


def _exec_spec(name: str, spec: ModuleSpec | None, path: Path, what: str) -> ModuleType:
    """Run the module ``spec`` describes as ``sys.modules[name]``; ``what``: folder or file."""
    if spec is None or spec.loader is None:
        raise InputError(f"cannot import this {what}", path=path, fix=_FIX_AGENT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)  # a half-imported module must not be reused
        raise
    return module


def _import(target: str) -> tuple[ModuleType, str]:
    """Import a folder, a ``.py`` file or a dotted module; return it and its app name."""
    path = Path(target)
    try:
        if path.is_dir():
            if not (path / "__init__.py").is_file() and not (path / "agent.py").is_file():
                raise InputError(
                    "not an ADK agent folder (no __init__.py or agent.py)",
                    path=path,
                    fix=_FIX_AGENT,
                )
            _load_dotenv(path)
            return _import_folder(path), path.resolve().name
        if target.endswith(".py"):
            if not path.is_file():
                raise InputError("no such file", path=path, fix=_FIX_AGENT)
            return _import_file(path), path.stem
        module = importlib.import_module(target)
    except InputError:
        raise
    except ImportError as exc:
        raise InputError(f"cannot import {target!r}: {exc}", path=target, fix=_FIX_AGENT) from exc
    except (Exception, SystemExit) as exc:  # the user's module raised (or exited) loading
        raise _load_failure(target, exc) from exc
    name = target.split(".")
    app_name = name[-2] if name[-1] == "agent" and len(name) > 1 else name[-1]
    return module, app_name


def _agent_module(module: ModuleType) -> ModuleType:
    """``module.agent`` when the package has one (``adk eval``'s convention), else itself."""
    inner = getattr(module, "agent", None)
    if isinstance(inner, ModuleType):
        return inner
    try:
        return importlib.import_module(module.__name__ + ".agent")
    except ImportError:
        return module
    except (Exception, SystemExit) as exc:  # agent.py raised (or exited) while loading
        raise _load_failure(module.__name__ + ".agent", exc) from exc


_LIBRARIES = tuple(
    {sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")}
)
"""Where installed libraries live: a line there is not the agent's line to fix."""


def _load_failure(target: str, exc: BaseException) -> InputError:
    """One line for an agent whose own code raised on import: where, what, and the fix.

    The place is the agent's own last line in the traceback (``genai.Client()`` at import,
    not the line inside google-genai that raised), else the last line outside importlib.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    outside = [f for f in frames if "importlib" not in f.filename] or frames
    user = [f for f in outside if not f.filename.startswith(_LIBRARIES)] or outside
    where = f"{user[-1].filename}:{user[-1].lineno}" if user else None
    text = " ".join(str(exc).split())[:300]
    if isinstance(exc, SystemExit):  # sys.exit() at import: rec must not exit silently with it
        return InputError(
            f"loading the agent {target!r} called sys.exit({exc.code!r})",
            path=where or target,
            fix="Keep sys.exit out of the agent's module level (`rec --debug ...` shows where)",
        )
    return InputError(
        f"loading the agent raised {type(exc).__name__}: {mask(text)}",
        path=where or target,
        fix="Fix that line of the agent's code (`rec --debug ...` shows the whole traceback)",
    )


def is_program_spec(spec: str) -> bool:
    """Whether AGENT names a plain program (``module:function``), not an ADK agent."""
    return ":" in spec and not Path(spec).exists() and not (len(spec) > 1 and spec[1] == ":")


async def load_agent_async(spec: str, *, agent_name: str | None = None) -> LoadedAgent:
    """Load AGENT as ``adk eval`` does (see the module docstring).

    Args:
        spec: a folder, a module name, or ``module:function`` / ``file.py:function``.
        agent_name: evaluate this sub-agent instead of the root agent (``AgentEvaluator``).

    Raises:
        InputError: nothing importable there, or no agent / function in it.
    """
    if is_program_spec(spec):
        return _load_program(spec)
    # Imported here: a plain google-genai program (above) loads without google-adk.
    from google.adk.apps import App

    module, app_name = _import(spec)
    holder = _agent_module(module)
    app = getattr(holder, "app", None)
    app = app if isinstance(app, App) else None
    root = app.root_agent if app is not None else await _root_agent(holder, spec)
    if agent_name:
        root = sub_agent(root, agent_name, spec)
    reset = getattr(holder, "reset_data", None)
    return LoadedAgent(
        spec=spec,
        app_name=app_name,
        root_agent=root,
        app=app,
        reset=reset if callable(reset) else None,
    )


def _load_program(spec: str) -> LoadedAgent:
    """A plain program: the async function ``module:function`` names."""
    target, _, function_name = spec.rpartition(":")
    module, app_name = _import(target)
    program = getattr(module, function_name, None)
    if program is None or not inspect.iscoroutinefunction(program):
        raise InputError(
            f"{function_name!r} is not an async function in {target}",
            path=spec,
            fix="Point at an `async def chat(text, session)` function (session is a "
            "rec.ProgramSession; see `rec replay --help`)",
        )
    return LoadedAgent(spec=spec, app_name=app_name, program=program)


async def _root_agent(holder: ModuleType, spec: str) -> Any:
    """The agent module's ``root_agent``, or what its ``get_agent_async`` gives (no App)."""
    from google.adk.agents import BaseAgent
    from google.adk.apps import App
    from google.adk.workflow import BaseNode

    found_root = getattr(holder, "root_agent", None)
    if isinstance(found_root, (BaseAgent, BaseNode)):
        # As ADK's own loader (google/adk/cli/utils/agent_loader.py): an agent, or any
        # workflow node (an ADK 2 ``Workflow`` graph), which ADK's Runner runs as it is.
        return found_root
    if callable(getattr(holder, "get_agent_async", None)):
        got: tuple[Any, Any] | Any = await holder.get_agent_async()
        return got[0] if isinstance(got, tuple) else got
    if found_root is not None:
        kind = f"{type(found_root).__module__}.{type(found_root).__qualname__}"
        raise InputError(
            f"{holder.__name__}.root_agent is a {kind}, not an ADK agent or workflow node",
            path=spec,
            fix="Set root_agent to an agent (LlmAgent, SequentialAgent, ...) or a Workflow"
            + (", or name the App `app`" if isinstance(found_root, App) else ""),
        )
    raise InputError(
        f"{holder.__name__} defines no app, root_agent or get_agent_async",
        path=spec,
        fix=_FIX_AGENT,
    )


def sub_agent(root: Any, agent_name: str, spec: str) -> Any:
    """The sub-agent ``agent_name`` of ``root`` (``--agent-name``)."""
    if not callable(getattr(root, "find_agent", None)):
        raise InputError(
            f"the root {type(root).__name__} {root.name!r} has no sub-agents to pick "
            f"{agent_name!r} from",
            path=spec,
            fix="Leave out the agent name (--agent-name) for a workflow graph",
        )
    found = root.find_agent(agent_name)
    if found is None:
        names = sorted(_agent_names(root))
        raise InputError(
            f"no sub-agent named {agent_name!r}",
            path=spec,
            fix=f"Use one of {', '.join(names)}",
        )
    return found


def _agent_names(agent: Any) -> list[str]:
    names = [agent.name]
    for sub in getattr(agent, "sub_agents", []) or []:
        names.extend(_agent_names(sub))
    return names


def load_agent(spec: str, *, agent_name: str | None = None) -> LoadedAgent:
    """Sync :func:`load_agent_async` (for callers outside an event loop)."""
    import asyncio

    return asyncio.run(load_agent_async(spec, agent_name=agent_name))
