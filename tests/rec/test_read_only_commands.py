"""``rec show`` and ``rec check`` start at once: they read, so they load no file lock, and
they build no pydantic model of a cassette section the file does not have (the Live, MCP
and reads sections' models are built on first use, which a plain recording never makes).

Each case runs the real command in a fresh interpreter, as a user does, and reports what
it loaded and which of rec's models it built when it is done.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cassettes._cassette import save_cassette
from tests.factories import make_cassette

_PROBE = """
import json, sys
sys.argv = ["rec", *json.loads(sys.argv[1])]
from rec.cli import main
try:
    status = main()
except SystemExit as exc:
    status = exc.code
import pydantic

def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)

built = sorted(
    f"{cls.__module__}.{cls.__qualname__}"
    for cls in subclasses(pydantic.BaseModel)
    if cls.__dict__.get("__pydantic_complete__")
)
print("\\n@@" + json.dumps({"status": status, "modules": sorted(sys.modules), "built": built}))
"""

SECTIONS = ("cassettes._live.", "cassettes._mcp.", "cassettes._reads.")
"""The models of the cassette's optional sections."""


def _run(args: list[str], cwd: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("@@")]
    assert lines, f"rec {' '.join(args)} did not finish:\n{done.stderr[-3000:]}"
    result: dict[str, object] = json.loads(lines[-1][2:])
    return result


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["show"], id="show"),
        pytest.param(["show", "--json"], id="show-json"),
        pytest.param(["check"], id="check"),
    ],
)
def test_a_read_only_command_loads_no_lock_and_builds_no_unused_model(
    args: list[str], tmp_path: Path
) -> None:
    cassette = save_cassette(make_cassette(3), tmp_path / "plain.cassette.json")
    result = _run([*args, str(cassette)], tmp_path)
    assert result["status"] in (0, None)
    modules = set(result["modules"])  # type: ignore[call-overload]
    built = list(result["built"])  # type: ignore[call-overload]
    assert "cassettes._cassette" in modules  # the probe saw the command read the cassette
    assert "cassettes._cassette.Exchange" in built  # and reports the models it built
    assert not any(m == "filelock" or m.startswith("filelock.") for m in modules)
    assert [name for name in built if name.startswith(SECTIONS)] == []
