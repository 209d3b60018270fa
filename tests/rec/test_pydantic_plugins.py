"""``rec check``, ``score`` and ``show`` spare pydantic its plugin search only where there is none.

A real pydantic plugin, installed as a distribution on ``PYTHONPATH``, still sees every
validator those commands build; without one, pydantic is told so and never searches, nor
loads the library it searches with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import distributions
from pathlib import Path

import pytest

from cassettes._cassette_writer import save_cassette
from rec._pydantic_plugins import (
    PLUGINS_VARIABLE,
    pydantic_plugins_possible,
    skip_plugin_discovery,
)
from tests.factories import make_cassette

ROOT = Path(__file__).resolve().parents[2]
EVALSET = ROOT / "examples" / "production_bug" / "evals" / "thermostat_bug.evalset.json"

_PLUGIN = """
import os


class Plugin:
    def new_schema_validator(self, schema, schema_type, path, kind, config, settings):
        with open(os.environ["REC_TEST_PLUGIN_LOG"], "a") as log:
            log.write(path.name + "\\n")
        return None, None, None


plugin = Plugin()
"""


def _install_plugin(folder: Path) -> Path:
    folder.mkdir()
    (folder / "recplug.py").write_text(_PLUGIN)
    info = folder / "recplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: recplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nrecplug = recplug:plugin\n")
    return folder


def _in_a_fresh_process(code: str) -> None:
    """Run ``code`` in a new interpreter: what it checks depends on the process's import
    machinery, and a library a test before imported (litellm brings the ``importlib_metadata``
    backport) puts its own distribution finder there, which the scan rightly counts as one
    that may hold a plugin."""
    from tests.rec_process import rec_environment

    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=rec_environment(),
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_scan_agrees_with_importlib_metadata_in_a_fresh_process() -> None:
    _in_a_fresh_process(
        """
import sys
from importlib.metadata import entry_points
from rec._pydantic_plugins import pydantic_plugins_possible
assert pydantic_plugins_possible() is bool(list(entry_points(group="pydantic")))


class Finder:  # another distribution finder: the scan cannot read what it finds
    def find_spec(self, *args):
        return None

    def find_distributions(self, *args):
        return []


sys.meta_path.append(Finder())
assert pydantic_plugins_possible()
"""
    )


def test_the_scan_agrees_with_importlib_metadata(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "other-1.0.dist-info").mkdir(parents=True)
    (plain / "other-1.0.dist-info" / "entry_points.txt").write_text("[console_scripts]\nx = y\n")
    (plain / "old.egg-info").write_text("Name: old\n")
    assert not pydantic_plugins_possible([str(plain), str(tmp_path / "missing")])
    with_plugin = _install_plugin(tmp_path / "with")
    assert pydantic_plugins_possible([str(plain), str(with_plugin)])
    found = [
        ep
        for dist in distributions(path=[str(with_plugin)])
        for ep in dist.entry_points
        if ep.group == "pydantic"
    ]
    assert [ep.value for ep in found] == ["recplug:plugin"]


def test_a_zip_on_the_path_may_hold_a_plugin(tmp_path: Path) -> None:
    archive = tmp_path / "deps.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    assert pydantic_plugins_possible([str(archive)])


@pytest.mark.parametrize(
    ("args", "model"),
    [
        pytest.param(["check", "{bad}"], "EvalSet", id="check"),
        # A plain `rec score` builds no validator at all (replayer._scoring.plain_*): the
        # JSON result takes the models.
        pytest.param(["score", "--json", str(EVALSET), str(EVALSET)], "EvalSet", id="score"),
        pytest.param(["show", "{cassette}"], "Cassette", id="show"),
    ],
)
def test_an_installed_plugin_still_sees_the_validators(
    args: list[str], model: str, tmp_path: Path
) -> None:
    plugins = _install_plugin(tmp_path / "plugins")
    bad = tmp_path / "bad.evalset.json"
    bad.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "a"}]}))
    cassette = save_cassette(make_cassette(2), tmp_path / "a.cassette.json")
    log = tmp_path / "validators.log"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in (PLUGINS_VARIABLE, "PYTHONPATH")
    }
    path = os.pathsep.join(p for p in (str(plugins), os.environ.get("PYTHONPATH")) if p)
    env.update(PYTHONPATH=path, REC_TEST_PLUGIN_LOG=str(log))
    command = [sys.executable, "-m", "rec", *(a.format(bad=bad, cassette=cassette) for a in args)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert model in log.read_text().split()


def test_pydantic_is_told_only_inside_the_command() -> None:
    _in_a_fresh_process(
        f"""
import os
from rec._pydantic_plugins import PLUGINS_VARIABLE, skip_plugin_discovery
from rec.cli import main

os.environ.pop(PLUGINS_VARIABLE, None)
with skip_plugin_discovery():
    assert os.environ[PLUGINS_VARIABLE] == "__all__"
assert PLUGINS_VARIABLE not in os.environ
assert main(["score", {str(EVALSET)!r}, {str(EVALSET)!r}, "--json"]) == 0
assert PLUGINS_VARIABLE not in os.environ
"""
    )


def test_without_plugins_the_search_library_is_never_loaded() -> None:
    """Building validators inside the block loads no ``importlib.metadata`` (pydantic's
    loader imports it even when told there is nothing to find); any other name of the
    loader, and the loader after the block, are pydantic's own."""
    _in_a_fresh_process(
        """
import sys
from pydantic import BaseModel
from rec._pydantic_plugins import skip_plugin_discovery

with skip_plugin_discovery():
    class Point(BaseModel):
        x: int

    assert Point.model_validate({"x": "3"}).x == 3
    assert "importlib.metadata" not in sys.modules, "the plugin search library was loaded"
    stand_in = sys.modules["pydantic.plugin._loader"]
    assert list(stand_in.get_plugins()) == []

with skip_plugin_discovery():  # the stand-in is withdrawn with its block
    assert sys.modules.get("pydantic.plugin._loader") is None
    from pydantic.plugin._loader import PYDANTIC_ENTRY_POINT_GROUP  # any other name

    assert PYDANTIC_ENTRY_POINT_GROUP == "pydantic"
    assert sys.modules["pydantic.plugin._loader"].__file__.endswith("_loader.py")

from pydantic.plugin._loader import get_plugins

assert get_plugins.__module__ == "pydantic.plugin._loader" and get_plugins() is not None
"""
    )


def test_a_value_the_user_set_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PLUGINS_VARIABLE, "logfire")
    with skip_plugin_discovery():
        assert os.environ[PLUGINS_VARIABLE] == "logfire"
    assert os.environ[PLUGINS_VARIABLE] == "logfire"
