"""Private names of other libraries are reached only from the compatibility modules.

``replayer/_compat.py`` (google-adk) and ``recorder/_traffic/_compat.py`` (google-genai) hold every
such access, each checked by a test of its own; anywhere else, ``x._name`` on an object
that is not ``self``/``cls``, ``getattr(x, "_name")`` (and ``hasattr``/``setattr``/
``delattr``) and ``from lib._private import ...`` are refused.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cassettes", "recorder", "replayer", "rec")
COMPAT = {ROOT / "replayer" / "_compat.py", ROOT / "recorder" / "_traffic" / "_compat.py"}
ALLOWED = {
    ("cassettes/_eval_config.py", "config._source"),  # rec's own EvalConfig private attribute
    ("cassettes/_cassette.py", "other._rows"),  # rec's own LazyExchanges, joined to another
    ("recorder/_build_worker.py", "os._exit"),  # the standard library's, documented
}
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make"}  # public, despite the underscore
OWN = set(PACKAGES) | {"__future__"}
_BY_NAME = {"getattr", "hasattr", "setattr", "delattr"}


def _private_uses(file: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            sunder = node.attr.endswith("_") and not node.attr.startswith("__")  # enum API
            if (
                sunder
                or node.attr in NAMEDTUPLE_API
                or node.attr.startswith("__")
                or (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                continue
            found.append(ast.unparse(node))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _BY_NAME
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and node.args[1].value.startswith("_")
            and not node.args[1].value.startswith("__")
        ):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            parts = node.module.split(".")
            if parts[0] in OWN:
                continue
            if any(p.startswith("_") for p in parts) or any(
                a.name.startswith("_") for a in node.names
            ):
                found.append(f"from {node.module} import ...")
    return found


def test_private_names_of_other_libraries_only_in_the_compat_modules() -> None:
    offenders = [
        f"{file.relative_to(ROOT)}: {use}"
        for package in PACKAGES
        for file in sorted((ROOT / package).rglob("*.py"))
        if file not in COMPAT
        for use in _private_uses(file)
        if (str(file.relative_to(ROOT)), use) not in ALLOWED
    ]
    assert offenders == [], (
        "move the access into replayer/_compat.py or recorder/_traffic/_compat.py"
    )


def test_reaching_a_private_name_by_string_is_seen(tmp_path: Path) -> None:
    source = tmp_path / "reach.py"
    source.write_text('manager = getattr(toolset, "_mcp_session_manager", None)\n')
    assert _private_uses(source) == ["getattr(toolset, '_mcp_session_manager', None)"]
