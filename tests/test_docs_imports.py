"""The README, the docs and the examples name only public names, never a private module.

Users copy what these pages show: a private module (``recorder._adk_plugin``,
``cassettes._secret_shapes``) would tie their code to rec's insides. docs/architecture.md,
the contributors' map of the code, names files by design and is the one page left out.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"\b(?:cassettes|recorder|replayer|rec)[./]_[A-Za-z]\w*")
"""A private module or file of rec's packages, dotted (``recorder._x``) or as a path."""
MAP_OF_THE_CODE = ROOT / "docs" / "architecture.md"
SUFFIXES = {".md", ".py", ".toml", ".txt", ".sh", ".yaml", ".yml", ".json", ".cfg", ".ini"}


def _pages() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found += sorted(
        p for p in (ROOT / "examples").rglob("*") if p.is_file() and p.suffix in SUFFIXES
    )
    return [p for p in found if p != MAP_OF_THE_CODE and "__pycache__" not in p.parts]


def _private_names(text: str) -> list[str]:
    return PRIVATE.findall(text)


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_names_no_private_module(page: Path) -> None:
    named = _private_names(page.read_text(encoding="utf-8"))
    assert named == [], f"{page.relative_to(ROOT)} names {named}: show the public rec name"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        pytest.param("adk web --extra_plugins rec.RecCapturePlugin", [], id="public"),
        pytest.param("from recorder._adk_plugin import X", ["recorder._adk_plugin"], id="dotted"),
        pytest.param("see `replayer/_score.py`", ["replayer/_score"], id="a-path"),
        pytest.param("rec._options", ["rec._options"], id="rec-private"),
        pytest.param("rec.standin and rec.__version__", [], id="rec-public"),
    ],
)
def test_the_check_tells_private_from_public(text: str, named: list[str]) -> None:
    assert _private_names(text) == named


def test_the_pages_are_found() -> None:
    pages = {p.relative_to(ROOT).as_posix() for p in _pages()}
    assert {"README.md", "docs/replay.md", "examples/record.py"} <= pages
