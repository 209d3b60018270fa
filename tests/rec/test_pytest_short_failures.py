"""pytest failures rec causes read as ``rec replay`` prints them: the cause first, in a few lines.

Real pytest subprocesses: a ``rec`` fixture test that dies of a replay miss (google-genai
against the fixture's loopback proxy), and collected eval cases where google-adk cannot be
imported (a ``sitecustomize`` refuses it, as an install without the ``adk`` extra would).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.factories import UNRECORDED_CALL, rec_fixture_test

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _section(result: pytest.RunResult, title: str) -> list[str]:
    """The lines of the ``= title =`` section of pytest's output."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if f"= {title} =" in line)
    end = next(i for i, line in enumerate(lines) if i > start and re.match(r"^=+ .* =+$", line))
    return lines[start + 1 : end]


def test_a_rec_fixture_miss_fails_with_the_miss_first(pytester: pytest.Pytester) -> None:
    cassette = rec_fixture_test(pytester, "test_dies", "test_miss", UNRECORDED_CALL)
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    section = _section(result, "FAILURES")
    text = "\n".join(section)
    assert len(section) <= 6, text
    assert section[1].startswith(f"{cassette}:exchanges[0]: no recording matches"), text
    assert 'contents[0].parts[0].text changed: "Question 0" -> "unrecorded"' in text
    assert section[-1].startswith("test_dies.py:7: the test raised ClientError"), text
    assert "site-packages" not in text and "tenacity" not in text, text


def test_a_rec_fixture_test_failing_after_a_miss_keeps_its_own_error(
    pytester: pytest.Pytester,
) -> None:
    rec_fixture_test(
        pytester,
        "test_after",
        "test_after",
        """
            try:
                client.models.generate_content(model="gemini-2.0-flash", contents="new")
            except Exception:
                pass
            assert 1 + 1 == 3
        """,
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    text = "\n".join(_section(result, "FAILURES"))
    assert "no recording matches" in text
    assert "test_after.py:11: the test raised AssertionError: assert (1 + 1) == 3" in text, text


_BLOCK_ADK = """
import sys


class _NoAdk:
    def find_spec(self, name, path=None, target=None):
        if name == "google.adk" or name.startswith("google.adk."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoAdk())
"""


def test_without_google_adk_each_eval_case_is_one_line_saying_what_to_install(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The eval sets in the agent's package (pytest imports its ``__init__.py`` at setup)
    and beside it (the case imports the agent when it runs)."""
    ignore = shutil.ignore_patterns("__pycache__", ".rec")
    shutil.copytree(EXAMPLES / "home_assistant", pytester.path / "home_assistant", ignore=ignore)
    shutil.copytree(EXAMPLES / "home_assistant" / "recordings", pytester.path / "evals")
    blocker = pytester.path / "no_adk"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(_BLOCK_ADK)
    path = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(blocker), path])))
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\nrec_agent = home_assistant\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "evals", "home_assistant")
    result.assert_outcomes(failed=2, errors=3)
    install = "replaying this eval case needs google-adk: pip install 'agent-rec[adk]'"
    failures = _section(result, "FAILURES") + _section(result, "ERRORS")
    said = [line for line in failures if not line.startswith("_")]
    assert len(said) == 5, "\n".join(failures)
    one_line = re.compile(rf"\S+\.evalset\.json::\w+: {re.escape(install)}")
    assert all(one_line.fullmatch(line) for line in said), said
