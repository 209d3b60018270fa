"""A tool changed since the recording: the miss never suggests ignoring a change the recorded
calls break on, and mock mode fails a recorded call that no longer fits the tool.

Driven as a user drives it: ``rec replay`` over a copy of the home assistant example whose
``get_room_temperature(room)`` is edited after the recording.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rec.cli import main
from replayer._reports.layout import PIPE_WIDTH

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SIGNATURE = "def get_room_temperature(room: str) -> dict[str, Any]:"
FIRST_LINE = "    if room not in _SENSOR_READINGS_C:"
DESCRIPTION = "Read the current temperature of a room from its sensor."


@pytest.fixture
def home(tmp_path: Path, loopback_only: object) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", ".rec")
    return Path(
        shutil.copytree(EXAMPLES / "home_assistant", tmp_path / "home_assistant", ignore=ignore)
    )


def _edit(agent: Path, old: str, new: str) -> None:
    source = agent / "agent.py"
    text = source.read_text()
    assert text.count(old) == 1, old
    source.write_text(text.replace(old, new))


def _rename_room_to_area(agent: Path) -> None:
    _edit(agent, SIGNATURE, SIGNATURE.replace("room: str", "area: str"))
    _edit(agent, FIRST_LINE, "    room = area\n" + FIRST_LINE)


def _replay(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, str]:
    """The exit status and the output with its lines unwrapped (the report wraps long ones)."""
    code = main(["replay", str(home), str(home / "recordings"), "--workers", "1", *args])
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).split())


def test_a_renamed_parameter_gets_no_ignore_hint_and_fails_in_mock_mode(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    _rename_room_to_area(home)
    code = main(["replay", str(home), str(home / "recordings"), "--workers", "1"])
    raw = capsys.readouterr().out
    output = " ".join(raw.split())
    assert code == 1, output
    # Not a terminal: each case that could not run is one line, cut at a word; the whole
    # reason follows, wrapped.
    failed = [line for line in raw.splitlines() if line.startswith("FAILED  ")]
    assert len(failed) == 2 and all(len(line) <= PIPE_WIDTH for line in failed), failed
    assert all(line.endswith(" ...") for line in failed), failed
    assert "get_room_temperature.parameters_json_schema.properties: area added" in output
    assert "--ignore" not in output.replace("--ignore PATH", ""), output
    assert "a tool's declaration changed in a way the recorded calls of it may no longer fit" in (
        output
    )
    # What the hint used to propose: the model replays, and mock mode refuses the old call.
    code, output = _replay(capsys, home, "--ignore", "tools[0].functionDeclarations")
    assert code == 1, output
    assert "0 of 2 cases passed" in output, output
    assert (
        'tool get_room_temperature was called as get_room_temperature(room="bedroom"), which '
        "does not fit the tool as it is now: get_room_temperature(area: str) (no parameter "
        "room; area not given)"
    ) in output, output
    assert "--live-tools" in output


def test_a_changed_description_is_ignored_as_the_hint_says(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit(home, DESCRIPTION, "Read a room's temperature from its sensor.")
    code, output = _replay(capsys, home)
    assert code == 1, output
    hint = "--ignore tools[0].functionDeclarations"
    assert f"(here: {hint})" in output, output
    code, output = _replay(capsys, home, *hint.split(" "))
    assert code == 0, output
    assert "2 of 2 cases passed" in output, output


def test_a_declared_tool_is_judged_by_its_declarations_parameters() -> None:
    """A tool that is no Python function (an MCP or OpenAPI tool) is read by what it
    declares to the model."""
    from google.adk.tools.base_tool import BaseTool
    from google.genai import types

    from replayer._mock_tools import call_misfit

    class Declared(BaseTool):
        def _get_declaration(self) -> types.FunctionDeclaration:
            schema = {"type": "object", "properties": {"product": {}, "n": {}}}
            return types.FunctionDeclaration(
                name=self.name, parameters_json_schema={**schema, "required": ["product"]}
            )

    tool = Declared(name="get_price", description="The price.")
    assert call_misfit(tool, {"product": "tea", "n": 2}) is None
    assert call_misfit(tool, {"product": "tea"}) is None
    assert call_misfit(tool, {"product": "tea", "colour": "green"}) is None  # ADK drops it
    assert call_misfit(tool, {"item": "tea"}) == (
        "get_price(product, n?) (no parameter item; product not given)"
    )
