"""rec's public face is pinned: adding or removing a name is a decision.

Users import from ``rec`` alone. ``PINNED`` lists every name in ``rec.__all__`` and the
module it comes from; a change to the face changes this file too, so it shows in review.
The internal packages (``cassettes``, ``recorder``, ``replayer``) export nothing: their
modules are private, and the layers between them are kept by the import-linter contracts
in ``pyproject.toml``.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

import rec

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = ("cassettes", "recorder", "replayer")

PINNED: dict[str, str] = {
    "AgentEvaluator": "replayer._agent_evaluator",
    "Cassette": "cassettes._cassette",
    "InputError": "cassettes._errors",
    "MatchRules": "cassettes._matching",
    "ProgramSession": "replayer._agent_loading",
    "RecCapturePlugin": "recorder._adk_plugin",
    "RecError": "cassettes._errors",
    "RecordMode": "cassettes._record_mode",
    "Recorder": "recorder._recorder",
    "RedactionRules": "cassettes._redaction",
    "Replay": "replayer._replay_api",
    "ReplayMiss": "cassettes._errors",
    "ReplayOptions": "replayer._replay_target",
    "RunError": "cassettes._errors",
    "SecretFound": "cassettes._errors",
    "TakesRule": "cassettes._eval_config",
    "UpstreamError": "cassettes._errors",
    "Upstreams": "recorder._traffic",
    "capture_path": "cassettes._evalset_writer",
    "load_cassette": "cassettes._cassette",
    "record": "recorder._api",
    "replay": "replayer._replay_api",
    "replay_evalsets": "replayer._replay_run",
    "serve": "replayer._serve",
}


def test_the_public_face_is_pinned() -> None:
    assert sorted(n for n in rec.__all__ if n != "__version__") == sorted(PINNED), (
        "rec.__all__ changed: update PINNED in tests/test_exported_members.py if intended"
    )
    for name, module in PINNED.items():
        _assert_comes_from(rec, name, module)


def _assert_comes_from(face: ModuleType, name: str, module: str) -> None:
    value = getattr(face, name)
    origin = vars(importlib.import_module(module)).values()
    assert any(value is held for held in origin), f"{face.__name__}.{name} is not {module}'s"


STANDIN: dict[str, str] = {
    "FAKE_API_KEY": "rec.standin.replies",
    "GENERATE_RPCS": "rec.standin.replies",
    "Reply": "rec.standin.replies",
    "Responder": "rec.standin.replies",
    "Rule": "rec.standin.brain",
    "RuleBrain": "rec.standin.brain",
    "ScriptedResponder": "rec.standin.replies",
    "StandinGemini": "rec.standin.server",
    "StandinRequest": "rec.standin.replies",
    "Turn": "rec.standin.brain",
    "builtin_reply": "rec.standin.replies",
    "call": "rec.standin.brain",
    "error_envelope": "rec.standin.replies",
    "finish_chunks": "rec.standin.replies",
    "merge_chunks": "rec.standin.replies",
    "parse_model_path": "rec.standin.replies",
    "say": "rec.standin.brain",
    "split_text": "rec.standin.replies",
    "transfer": "rec.standin.brain",
}
"""``rec.standin``, the testing face: the stand-in Gemini API that tests, examples and
benchmarks drive (and ``rec standin`` serves). Pinned like ``rec``'s own names, each with
the module it comes from."""


def test_the_testing_face_is_pinned() -> None:
    import rec.standin

    assert tuple(sorted(rec.standin.__all__)) == tuple(sorted(STANDIN)), (
        "rec.standin.__all__ changed: update STANDIN in tests/test_exported_members.py"
    )
    for name, module in STANDIN.items():
        _assert_comes_from(rec.standin, name, module)


def test_the_face_is_about_twenty_names() -> None:
    assert 15 <= len(rec.__all__) <= 25


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'replay_async'"):
        rec.replay_async  # noqa: B018


@pytest.mark.parametrize("package", INTERNAL)
def test_internal_packages_export_nothing_and_their_modules_are_private(package: str) -> None:
    module = importlib.import_module(package)
    assert not hasattr(module, "__all__"), f"{package} hands names on: import from rec"
    public = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / package).iterdir()
        if p.name != "__init__.py"
        and not p.name.startswith("_")
        and (p.suffix == ".py" or (p / "__init__.py").exists())
    ]
    assert public == [], f"modules not meant for users start with `_`: {public}"


def test_importing_rec_imports_none_of_its_packages() -> None:
    """``import rec`` (every ``rec`` command starts with it) loads nothing on its own."""
    code = textwrap.dedent(
        """
        import sys, rec
        print(sorted(
            m for m in sys.modules
            if m.split(".")[0] in ("cassettes", "recorder", "replayer", "pydantic")
            or m.startswith(("google.genai", "google.adk"))
        ))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_the_replay_api_imports_without_adk() -> None:
    """The pytest plugin and `rec serve` load in environments without google-adk."""
    code = textwrap.dedent(
        """
        import sys, builtins
        real = builtins.__import__
        def guard(name, *a, **k):
            if name.startswith("google.adk"):
                raise ImportError("no adk here")
            return real(name, *a, **k)
        builtins.__import__ = guard
        import rec, rec.pytest_plugin
        rec.replay, rec.serve, rec.record
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr
