"""The README tells the truth: its reference matches `--help`, and its commands run as written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from rec.cli import cli

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")

_BLOCK = re.compile(r"<!-- readme-test: exit=(\d+) -->\n```bash\n(.*?)```", re.S)
_QUICKSTART = re.compile(r"<!-- quickstart:(\w+) -->\n```bash\n(.*?)```", re.S)


def _reference() -> str:
    return README[README.index("## Reference") : README.index("## Limitations")]


@pytest.mark.parametrize("name", cli.list_commands(click.Context(cli)))
def test_every_command_and_option_is_documented(name: str) -> None:
    reference = _reference()
    assert f"**`rec {name}" in reference, f"`rec {name}` is missing from the README reference"
    section = reference[reference.index(f"**`rec {name}") :]
    following = re.search(r"\n\*\*`rec (?!" + re.escape(name) + r"\b)", section[5:])
    if following:
        section = section[: following.start() + 5]
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden or param.name == "help":
            continue
        longest = max(param.opts, key=len)
        assert longest in section, f"`rec {name} {longest}` is not documented in the README"


def test_readme_has_exactly_two_quickstart_commands() -> None:
    blocks = dict((kind, body.strip()) for kind, body in _QUICKSTART.findall(README))
    assert sorted(blocks) == ["main", "tests"]
    assert all(len(body.splitlines()) == 1 for body in blocks.values())
    assert "rec replay examples/" in blocks["main"]
    # .ci/run runs the same test command (after installing into its own venv).
    ci = (REPO / ".ci" / "run").read_text()
    assert blocks["tests"].split("&& .venv/bin/")[-1] in ci


def _runnable() -> list[object]:
    params = []
    for number, (code, body) in enumerate(_BLOCK.findall(README)):
        first = body.strip().splitlines()[0]
        params.append(pytest.param(int(code), body, id=f"{number}-{first[:40]}"))
    return params


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("expected", "script"), _runnable())
def test_readme_command_runs_as_written(
    expected: int, script: str, tmp_path: Path, loopback_only: object
) -> None:
    """Each command exits as the README says, and what it writes lies under a folder that
    `.gitignore` covers (report.xml, results/... never land in the clone)."""
    shutil.copytree(
        REPO / "examples",
        tmp_path / "examples",
        ignore=shutil.ignore_patterns("__pycache__", ".rec", "*.lock"),
    )
    before = _files(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == expected, done.stdout + done.stderr
    written = sorted(path for path, data in _files(tmp_path).items() if before.get(path) != data)
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=REPO,
        input="\n".join(written),
        capture_output=True,
        text=True,
    ).stdout.split()
    assert [path for path in written if path not in ignored] == []


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_readme_says_to_activate_the_venv_before_bare_rec() -> None:
    """The quickstart installs into .venv, the workflows call bare `rec`."""
    bare = [
        block.start() + line.start()
        for block in re.finditer(r"```bash\n(.*?)```", README, re.S)
        for line in re.finditer(r"^rec \w", block.group(1), re.M)
    ]
    said = README.index("activate the virtualenv first (`. .venv/bin/activate`)")
    assert bare and said < min(bare)


def test_readme_documents_every_pytest_plugin_key() -> None:
    from rec.pytest_plugin import CONFIG_KEYS, MARKER_KEYS

    section = README[README.index("### pytest: the `rec` fixture") : README.index("### GitHub")]
    sentence = section[section.index("The marker takes") :]
    for key in MARKER_KEYS:
        assert f"`{key}`" in sentence[: sentence.index("`rec_config` returns")], key
    config = sentence[sentence.index("`rec_config` returns") :]
    for key in CONFIG_KEYS:
        assert f"`{key}`" in config[: config.index(".")], key


def test_the_adk_extra_brings_pytest_asyncio_for_the_agent_evaluator_example() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert any(req.startswith("pytest-asyncio") for req in extras["adk"])
    assert "pytest-asyncio" in README[README.index("### pytest: drop-in") :][:1500]


def test_replay_names_its_arguments_as_the_readme_does() -> None:
    """One name everywhere: the usage line, `--help` and the README say EVALSET_OR_DIR."""
    from click.testing import CliRunner

    usage = CliRunner().invoke(cli, ["replay", "--help"]).output.splitlines()[0]
    assert usage == "Usage: replay [OPTIONS] AGENT EVALSET_OR_DIR..." or usage.endswith(
        "replay [OPTIONS] AGENT EVALSET_OR_DIR..."
    )
    assert "**`rec replay AGENT EVALSET_OR_DIR... [OPTIONS]`**" in README
    assert "EVALSETS" not in CliRunner().invoke(cli, ["replay"]).output
