"""``rec score EXPECTED ACTUAL --config CONFIG --json`` run in-process, for the judge tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rec.cli import main

__all__ = ["score_json"]


def score_json(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], *extra: str
) -> tuple[int, Any]:
    """The exit status and the printed result (parsed; the text when it is not JSON)."""
    code = main(
        [
            "score",
            str(files["expected"]),
            str(files["actual"]),
            "--config",
            str(files["config"]),
            "--json",
            *extra,
        ]
    )
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip().startswith("{") else out
