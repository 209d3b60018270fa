"""examples/record.py writes the bundled recordings in the shape they are committed in."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cassettes", "recorder", "replayer", "rec")


def _shape(value: Any) -> Any:
    """The keys and value types of a JSON document (list items: each distinct shape once)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        shapes = {json.dumps(_shape(item), sort_keys=True) for item in value}
        return sorted(shapes)
    return type(value).__name__


@pytest.mark.slow
def test_examples_record_py_rewrites_home_assistant_in_the_committed_shape(
    tmp_path: Path,
) -> None:
    """Run the script on a copy of the tree (it records into the copy's examples/)."""
    if not (Path(sys.executable).parent / "adk").exists():
        pytest.fail("the adk command is not installed beside this Python")
    copy = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", ".adk")
    for name in (*PACKAGES, "examples"):
        shutil.copytree(ROOT / name, copy / name, ignore=ignore)
    done = subprocess.run(
        [sys.executable, str(copy / "examples" / "record.py"), "home_assistant"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    folder = Path("examples") / "home_assistant"
    committed = sorted(
        p.relative_to(ROOT)
        for sub in ("recordings", "simulated")
        for p in (ROOT / folder / sub).glob("*.json")
    )
    written = sorted(
        p.relative_to(copy)
        for sub in ("recordings", "simulated")
        for p in (copy / folder / sub).glob("*.json")
    )
    assert written == committed
    for path in committed:
        before = _shape(json.loads((ROOT / path).read_text(encoding="utf-8")))
        after = _shape(json.loads((copy / path).read_text(encoding="utf-8")))
        assert after == before, f"examples/record.py writes {path} in another shape"
