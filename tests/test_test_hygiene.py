"""Tests share helpers through helper modules and fixtures, and scope environment changes.

A test module that imports another test module runs that module's fixtures and tests'
imports as a side effect and ties the two together; shared builders live in
``tests/factories.py``, shared agents and recordings in ``tests/agents/``, shared fixtures
in ``conftest.py``. A test that writes ``os.environ`` directly leaks the change into every
later test on that worker: use ``monkeypatch``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    p
    for folder in ("tests", "bench", "examples")
    for p in (ROOT / folder).rglob("*.py")
    if ".venv" not in p.parts
)


def _is_test_module(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return module.startswith("tests.") and (last.startswith("test_") or last == "conftest")


def test_no_module_imports_a_test_module() -> None:
    offenders = []
    for file in SOURCES:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(_is_test_module(name) for name in names):
                offenders.append(f"{file.relative_to(ROOT)}:{node.lineno}")
    assert offenders == [], "move the shared helper to tests/factories.py or tests/agents/"


def _writes_environ(node: ast.AST) -> bool:
    def is_environ(target: ast.AST) -> bool:
        return (
            isinstance(target, ast.Attribute)
            and target.attr == "environ"
            and isinstance(target.value, ast.Name)
            and target.value.id == "os"
        )

    if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return any(isinstance(t, ast.Subscript) and is_environ(t.value) for t in targets)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        mutators = ("pop", "update", "setdefault", "clear", "popitem")
        return node.func.attr in mutators and is_environ(node.func.value)
    return False


# An agent that fills its own environment at import, as Google's agent-starter-pack
# templates do (that is what it stands for); only subprocesses load it.
# And the scripts the trace and BigQuery import tests run as child processes, which set the
# environment of the process they are.
ENVIRONMENT_WRITERS = {
    Path("tests/agents/vertex_starter/agent.py"),
    Path("tests/agents/traced_run.py"),
    Path("tests/agents/bigquery_run.py"),
}


def test_tests_change_the_environment_only_through_monkeypatch() -> None:
    offenders = [
        f"{file.relative_to(ROOT)}:{node.lineno}"
        for file in SOURCES
        if file.parts[len(ROOT.parts)] == "tests"
        and file.relative_to(ROOT) not in ENVIRONMENT_WRITERS
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8")))
        if _writes_environ(node)
    ]
    assert offenders == [], "use monkeypatch.setenv / delenv (restored after the test)"
