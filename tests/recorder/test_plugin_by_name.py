"""``adk web --extra_plugins rec.RecCapturePlugin`` loads rec's capture plugin.

ADK's own loader (``ApiServer._instantiate_extra_plugins``, what ``adk web`` and ``adk
api_server`` run for ``--extra_plugins``) is given the public name the docs show and
``rec start`` passes; it logs and skips a name it cannot load, so the test checks that it
built the plugin. tests/recorder/test_adk_web_capture.py runs the whole command.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from google.adk.cli.api_server import ApiServer

import rec
from recorder._adk_launch import with_adk_capture


def _loaded(qualified_name: str) -> list[object]:
    server = SimpleNamespace(extra_plugins=[qualified_name])
    server._import_plugin_object = lambda name: ApiServer._import_plugin_object(server, name)
    return ApiServer._instantiate_extra_plugins(server)  # type: ignore[arg-type]


def test_adk_loads_the_plugin_by_its_public_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REC_ADK_CAPTURE", str(tmp_path / "demo.adk.jsonl"))
    [plugin] = _loaded("rec.RecCapturePlugin")
    assert isinstance(plugin, rec.RecCapturePlugin)


def test_adk_skips_a_name_it_cannot_load() -> None:
    assert _loaded("rec.NoSuchPlugin") == []


def test_rec_start_passes_the_public_name(tmp_path: Path) -> None:
    launch = with_adk_capture(["adk", "web", "agents"], capture=tmp_path / "x.adk.jsonl")
    assert launch.command[launch.command.index("--extra_plugins") + 1] == "rec.RecCapturePlugin"


def test_capture_path_is_where_the_plugin_writes(tmp_path: Path) -> None:
    assert rec.capture_path(tmp_path, "demo") == tmp_path / ".rec" / "demo.adk.jsonl"
