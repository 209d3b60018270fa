"""Messages send users to public things: no string rec shows names a private module.

Every string literal of rec's packages that is not a docstring and reads as prose (it holds
a space) is a message, an error's fix or a help text; none may name ``replayer._x``,
``recorder._x`` or ``cassettes._x``. Module paths rec imports by name hold no space; the one
Python command rec runs (the build worker's) starts with ``import``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"\b(replayer|recorder|cassettes)\._\w+")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of docstring constants (a module's, a class's, a function's, an attribute's)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _messages_naming_private_modules(file: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(file.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [
        f"{file.relative_to(root)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and " " in node.value
        and not node.value.startswith("import ")
        and PRIVATE.search(node.value)
    ]


def test_no_message_names_a_private_module() -> None:
    found = [
        line
        for package in ("cassettes", "recorder", "replayer", "rec")
        for file in sorted((ROOT / package).rglob("*.py"))
        for line in _messages_naming_private_modules(file)
    ]
    assert found == []


def test_the_scan_sees_a_message_that_does(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('raise ValueError(f"bad {x} (see replayer._agent_loading)")\n')
    assert len(_messages_naming_private_modules(module, root=tmp_path)) == 1
