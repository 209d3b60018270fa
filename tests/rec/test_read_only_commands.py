"""``rec show`` and ``rec check`` start at once: they read, so they load no file lock, and
they build no pydantic model of a cassette section the file does not have (the Live, MCP
and reads sections' models are built on first use, which a plain recording never makes).
``rec show``'s text builds no model of the timeline either: it makes each part without
validation and prints it, and only ``--json`` dumps (and so builds) them.

Each case runs the real command in a fresh interpreter, as a user does, and reports what
it loaded and which of rec's models it built when it is done.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cassettes._cassette_writer import save_cassette
from tests.factories import make_cassette
from tests.rec_process import run_probe

SECTIONS = ("cassettes._live.", "cassettes._mcp.", "cassettes._reads.")
"""The models of the cassette's optional sections."""


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
    result = run_probe([*args, str(cassette)], tmp_path)
    assert result["status"] in (0, None)
    modules = set(result["modules"])  # type: ignore[call-overload]
    built = list(result["built"])  # type: ignore[call-overload]
    assert "cassettes._cassette" in modules  # the probe saw the command read the cassette
    assert "cassettes._cassette.Exchange" in built  # and reports the models it built
    assert not any(m == "filelock" or m.startswith("filelock.") for m in modules)
    assert [name for name in built if name.startswith(SECTIONS)] == []


@pytest.mark.parametrize(
    ("args", "timeline_built"),
    [pytest.param(["show"], False, id="text"), pytest.param(["show", "--json"], True, id="json")],
)
def test_show_builds_the_timeline_models_only_to_dump_them(
    args: list[str], timeline_built: bool, tmp_path: Path
) -> None:
    cassette = save_cassette(make_cassette(3), tmp_path / "plain.cassette.json")
    result = run_probe([*args, str(cassette)], tmp_path)
    assert result["status"] in (0, None)
    assert "replayer._reports.timeline" in result["modules"]
    built = [name for name in result["built"] if name.startswith("replayer._reports.timeline.")]
    assert bool(built) is timeline_built, built
