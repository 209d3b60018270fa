"""Each package's public surface is pinned: adding or removing a name is a decision."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = ["cassettes", "evalfiles", "loopback", "recorder", "replayer", "standin"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_every_name_resolves(name: str) -> None:
    package = importlib.import_module(name)
    exported = package.__all__
    assert list(exported) == sorted(exported)
    for member in exported:
        assert getattr(package, member) is not None, f"{name}.{member}"


def test_other_packages_import_only_public_names() -> None:
    """Across packages, import from the package (`from cassettes import X`), never a module."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    offenders = []
    for package in ("evalfiles", "loopback", "recorder", "replayer", "rec"):
        for file in (root / package).rglob("*.py"):
            tree = ast.parse(file.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                    continue
                top, _, rest = node.module.partition(".")
                if top in PACKAGES and top != package:
                    public = importlib.import_module(top).__all__
                    for alias in node.names:
                        if rest or alias.name not in public:
                            offenders.append(
                                f"{file.relative_to(root)}: {node.module}.{alias.name}"
                            )
    assert offenders == []


def test_replayer_imports_without_adk() -> None:
    """The pytest plugin and `rec serve` load `replayer` in environments without google-adk."""
    import subprocess
    import sys

    code = (
        "import sys, builtins\n"
        "real = builtins.__import__\n"
        "def guard(name, *a, **k):\n"
        "    if name.startswith('google.adk'):\n"
        "        raise ImportError('no adk here')\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = guard\n"
        "import replayer, replayer.pytest_plugin, replayer.replay_api\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr
