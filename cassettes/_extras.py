"""Which optional extra a missing module belongs to, so a command says so in one line.

``pip install agent-rec`` brings what recording and replaying a plain google-genai program
need; ADK agents, their MCP toolsets and the async ``AgentEvaluator`` test need the ``adk``
extra. A command that reaches for one of those without it fails with
``rec replay needs google-adk: pip install 'agent-rec[adk]'`` (exit 2), not a traceback.
"""

from __future__ import annotations

__all__ = ["extra_install", "missing_extra"]

_EXTRA_MODULES = {
    "google.adk": ("google-adk", "adk"),
    "mcp": ("mcp", "adk"),
    "pytest_asyncio": ("pytest-asyncio", "adk"),
}
"""Top module → (its distribution, the extra of agent-rec that installs it)."""


def extra_install(exc: BaseException) -> tuple[str, str] | None:
    """``(distribution, "pip install 'agent-rec[extra]'")`` when ``exc`` or what caused it is
    a missing extra's module (an agent's ``from google.adk ...`` arrives wrapped in rec's own
    error, so the ``__cause__`` / ``__context__`` chain is searched); else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ModuleNotFoundError) and current.name:
            for module, (distribution, extra) in _EXTRA_MODULES.items():
                if current.name == module or current.name.startswith(module + "."):
                    return distribution, f"pip install 'agent-rec[{extra}]'"
        current = current.__cause__ or current.__context__
    return None


def missing_extra(exc: BaseException, *, command: str) -> str | None:
    """The one line a command prints when ``exc`` is a missing extra's module.

    Args:
        exc: what the command raised.
        command: the command as the user typed it (``rec replay``), named in the message.

    Returns:
        ``"rec replay needs google-adk: pip install 'agent-rec[adk]'"``, or None when no
        module of an extra is missing.
    """
    found = extra_install(exc)
    return None if found is None else f"{command} needs {found[0]}: {found[1]}"
