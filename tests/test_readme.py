"""The README and docs/ tell the truth: the command reference matches `--help`, the README is
a front page that links every docs page, and the commands they show run as written."""

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
DOCS = REPO / "docs"
COMMANDS = (DOCS / "reference" / "commands.md").read_text(encoding="utf-8")
PYTEST_PAGE = (DOCS / "pytest.md").read_text(encoding="utf-8")

_BLOCK = re.compile(r"<!-- readme-test: exit=(\d+) -->\n```bash\n(.*?)```", re.S)
_QUICKSTART = re.compile(r"<!-- quickstart:(\w+) -->\n```bash\n(.*?)```", re.S)


def _pages() -> dict[str, str]:
    pages = {"README.md": README}
    for page in sorted(DOCS.rglob("*.md")):
        pages[page.relative_to(REPO).as_posix()] = page.read_text(encoding="utf-8")
    return pages


@pytest.mark.parametrize("name", cli.list_commands(click.Context(cli)))
def test_every_command_and_option_is_documented(name: str) -> None:
    assert f"**`rec {name}" in COMMANDS, f"`rec {name}` is missing from docs/reference/commands.md"
    section = COMMANDS[COMMANDS.index(f"**`rec {name}") :]
    following = re.search(r"\n\*\*`rec (?!" + re.escape(name) + r"\b)", section[5:])
    if following:
        section = section[: following.start() + 5]
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden or param.name == "help":
            continue
        longest = max(param.opts, key=len)
        assert longest in section, f"`rec {name} {longest}` is not in docs/reference/commands.md"


def test_readme_has_exactly_two_quickstart_commands() -> None:
    blocks = dict((kind, body.strip()) for kind, body in _QUICKSTART.findall(README))
    assert sorted(blocks) == ["main", "tests"]
    assert all(len(body.splitlines()) == 1 for body in blocks.values())
    assert "rec replay examples/" in blocks["main"]
    # .ci/run runs the same test command (after installing into its own venv).
    ci = (REPO / ".ci" / "run").read_text()
    assert blocks["tests"].split("&& .venv/bin/")[-1] in ci


def test_readme_is_a_front_page_with_a_table_of_contents() -> None:
    """The README stays short and links every docs page; details live in docs/."""
    assert len(README.splitlines()) < 400
    contents = README[README.index("## Contents") :]
    contents = contents[: contents.index("\n## ", 1)]
    for heading in re.findall(r"^## (.+)$", README, re.M):
        if heading != "Contents":
            anchor = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
            assert f"(#{anchor})" in contents, f"the table of contents misses {heading!r}"
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)", README))
    pages = {p.relative_to(REPO).as_posix() for p in DOCS.rglob("*.md")} - {"docs/index.md"}
    assert pages - linked == set(), "the README links no way to these docs pages"


def test_every_relative_link_in_the_readme_resolves() -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README):
        if not target.startswith(("http://", "https://", "mailto:")):
            assert (REPO / target).exists(), f"README links {target}, which does not exist"


def _runnable() -> list[object]:
    params, seen = [], set()
    for name, text in _pages().items():
        for code, body in _BLOCK.findall(text):
            if (code, body) in seen:
                continue
            seen.add((code, body))
            first = body.strip().splitlines()[0]
            params.append(pytest.param(int(code), body, id=f"{name}-{len(params)}-{first[:40]}"))
    return params


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("expected", "script"), _runnable())
def test_readme_command_runs_as_written(
    expected: int, script: str, tmp_path: Path, loopback_only: object
) -> None:
    """Each command exits as the page says, and what it writes lies under a folder that
    `.gitignore` covers (a command must not leave report.xml or results/ in the clone)."""
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


def test_readme_says_to_activate_the_venv_before_bare_rec() -> None:
    """The quickstart installs into .venv; the workflows call bare `rec`."""
    bare = [
        block.start() + line.start()
        for block in re.finditer(r"```bash\n(.*?)```", README, re.S)
        for line in re.finditer(r"^rec \w", block.group(1), re.M)
    ]
    said = README.index("activate the virtualenv first (`. .venv/bin/activate`)")
    assert bare and said < min(bare)


def test_docs_document_every_pytest_plugin_key() -> None:
    from rec.pytest_plugin import CONFIG_KEYS, MARKER_KEYS

    section = PYTEST_PAGE[PYTEST_PAGE.index("## pytest: the `rec` fixture") :]
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
    assert "pytest-asyncio" in PYTEST_PAGE[PYTEST_PAGE.index("## pytest: drop-in") :][:1500]


def test_replay_names_its_arguments_as_the_docs_do() -> None:
    """One name everywhere: the usage line, `--help` and the reference say EVALSET_OR_DIR."""
    from click.testing import CliRunner

    usage = CliRunner().invoke(cli, ["replay", "--help"]).output.splitlines()[0]
    assert usage == "Usage: replay [OPTIONS] AGENT EVALSET_OR_DIR..." or usage.endswith(
        "replay [OPTIONS] AGENT EVALSET_OR_DIR..."
    )
    assert "**`rec replay AGENT EVALSET_OR_DIR... [OPTIONS]`**" in COMMANDS
    assert "EVALSETS" not in CliRunner().invoke(cli, ["replay"]).output
