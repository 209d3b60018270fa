"""Release engineering: one version everywhere, and a wheel that holds what a run needs.

``.ci/wheel`` goes further (it installs the wheel outside the tree and runs the quickstart);
these tests keep the pieces honest on every run of the suite.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import rec
from rec.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_version_prints_rec_and_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"rec {rec.__version__}\n"
    # One source: the distribution's metadata is read from rec.__version__ at build time.
    assert importlib.metadata.version("agent-rec") == rec.__version__


def test_changelog_has_an_entry_for_this_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(rec.__version__)}\] - \d{{4}}-\d\d-\d\d$", changelog, re.M)


@pytest.mark.slow
def test_wheel_ships_what_a_run_needs(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (wheel,) = tmp_path.glob("agent_rec-*-py3-none-any.whl")
    assert wheel.name == f"agent_rec-{rec.__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "recorder/_sitecustomize/sitecustomize.py",
        "replayer/_reports/_html_assets.py",
        "rec/standin/server.py",
        "cassettes/py.typed",
        "recorder/py.typed",
        "replayer/py.typed",
        "rec/py.typed",
    ):
        assert needed in names, f"{needed} is not in {wheel.name}"
    assert not [n for n in names if n.startswith(("tests/", "examples/", "bench/"))]
    metadata = zipfile.ZipFile(wheel).read(
        f"agent_rec-{rec.__version__}.dist-info/entry_points.txt"
    )
    assert b"rec = rec.cli:main" in metadata


def _code_blocks(text: str) -> list[str]:
    return re.findall(r"```(?:bash|yaml)\n(.*?)```", text, re.S)


def test_install_line_truth_no_command_installs_from_an_index_rec_is_not_on() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    wheel = f"agent_rec-{rec.__version__}-py3-none-any.whl"
    commands = [
        line.split("#")[0]
        for block in _code_blocks(readme)
        for line in block.splitlines()
        if "pip install" in line.split("#")[0]
    ]
    assert commands
    # 'agent-rec' is not on PyPI: only a comment or the prose may mention that line.
    assert [c for c in commands if "'agent-rec" in c or '"agent-rec' in c] == []
    assert "not yet on PyPI" in readme
    # Every wheel a command installs is the one `python -m build` writes for this version.
    for found in re.findall(r"agent_rec-[^\s'\[]+\.whl", readme):
        assert found == wheel
    # A CI job that installs rec to replay an agent installs the agent's requirements too.
    for block in _code_blocks(readme):
        for line in block.splitlines():
            if wheel + "[adk]" in line and "/path/to/" not in line:
                assert "-r requirements.txt" in line, line
