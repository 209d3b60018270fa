"""``rec score EXPECTED ACTUAL --config CONFIG --json`` run in-process, for the judge tests,
and the files it reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassettes._evalset import EvalSet, save_evalset
from rec.cli import main

__all__ = ["score_files", "score_json"]


def score_files(
    folder: Path, want: EvalSet, got: EvalSet, config: dict[str, Any]
) -> dict[str, Path]:
    """The files :func:`score_json` reads, written in ``folder``: ``expected``, ``actual``,
    ``config``, and ``judge`` (where a judge recording goes)."""
    paths = {
        "expected": save_evalset(want, folder / "want.evalset.json"),
        "actual": save_evalset(got, folder / "got.evalset.json"),
        "config": folder / "config.json",
        "judge": folder / "judge",
    }
    paths["config"].write_text(json.dumps(config))
    return paths


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
