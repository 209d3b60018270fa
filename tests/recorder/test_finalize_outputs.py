"""What finalising a recording writes: the same bytes whichever way it gets there.

The bundled examples' cassettes were written by rec; a journal of their exchanges,
finalised as ``rec stop`` finalises it, gives each cassette back byte for byte, and the
EvalSet written in one pass is the one extracting, redacting and writing it step by step
gives. Its exchanges are freed before collections resume (the first would walk them all).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

import pytest

from cassettes._cassette import Exchange, load_cassette
from cassettes._cassette_writer import save_cassette
from cassettes._evalset import dump_evalset, parse_evalset
from cassettes._evalset_writer import (
    eval_set_id_for,
    redact_evalset,
    write_evalset_files,
    write_redacted_evalset_files,
)
from cassettes._extraction import evalset_from_exchanges
from cassettes._file_names import side_index_file
from recorder._recording import finalize_recording
from recorder._recording_state import RecordingPaths
from tests.cassettes.genai_requests import FAKE_KEY
from tests.factories import make_exchange

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RECORDED = sorted(
    path
    for path in EXAMPLES.rglob("*.cassette.json")
    if (cassette := load_cassette(path)).mcp is None and cassette.live is None
)


def _name(path: Path) -> str:
    return path.name.removesuffix(".cassette.json")


@pytest.mark.parametrize("source", RECORDED, ids=[_name(p) for p in RECORDED])
def test_a_journal_of_an_examples_exchanges_finalises_to_its_cassette(
    source: Path, tmp_path: Path
) -> None:
    recorded = load_cassette(source)
    paths = RecordingPaths(tmp_path, _name(source))
    paths.journal.parent.mkdir(parents=True)
    paths.journal.write_text(
        "".join(e.model_dump_json(exclude_none=True) + "\n" for e in recorded.exchanges),
        encoding="utf-8",
    )
    result = finalize_recording(paths, upstream=recorded.upstream)
    assert paths.cassette.read_bytes() == source.read_bytes()
    evalset = evalset_from_exchanges(
        recorded.exchanges, eval_set_id=eval_set_id_for(_name(source)), app_name="rec"
    )
    evalset, _ = redact_evalset(evalset, path=tmp_path / "x.evalset.json")
    assert result.evalset_path is not None
    assert result.evalset_path.read_text(encoding="utf-8") == dump_evalset(evalset)


def test_a_credential_in_the_evalset_is_masked_in_one_pass_as_step_by_step(
    tmp_path: Path,
) -> None:
    source = EXAMPLES / "genai_afc" / "recordings" / "fahrenheit.evalset.json"
    text = source.read_text(encoding="utf-8")
    assert "How warm is the kitchen?" in text
    evalset = parse_evalset(text.replace("How warm is the kitchen?", f"My key is {FAKE_KEY}"))
    (tmp_path / "one").mkdir()
    (tmp_path / "steps").mkdir()
    written, hits = write_redacted_evalset_files(evalset, tmp_path / "one", name="f")
    redacted, expected_hits = redact_evalset(evalset, path=tmp_path / "x.evalset.json")
    expected = write_evalset_files(redacted, tmp_path / "steps", name="f")
    assert hits == expected_hits > 0
    assert written[0].read_bytes() == expected[0].read_bytes()
    assert FAKE_KEY not in written[0].read_text(encoding="utf-8")
    assert "AIza…(redacted)" in written[0].read_text(encoding="utf-8")
    clean, none = write_redacted_evalset_files(parse_evalset(text), tmp_path / "one", name="g")
    assert none == 0 and clean[0].read_text(encoding="utf-8") == dump_evalset(parse_evalset(text))


def _exchanges_alive() -> int:
    return sum(isinstance(o, Exchange) for o in gc.get_objects())


def test_collections_resume_only_once_the_recordings_exchanges_are_freed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first collection after the pause would walk every object made during it.
    paths = RecordingPaths(tmp_path, "freed")
    paths.journal.parent.mkdir(parents=True)
    paths.journal.write_text(
        "".join(make_exchange(i).model_dump_json(exclude_none=True) + "\n" for i in range(50)),
        encoding="utf-8",
    )
    before = _exchanges_alive()
    seen: list[int] = []
    enable: Callable[[], None] = gc.enable

    def enabling() -> None:
        seen.append(_exchanges_alive() - before)
        enable()

    monkeypatch.setattr(gc, "enable", enabling)
    gc.enable()
    seen.clear()
    result = finalize_recording(paths, upstream=None)
    assert result.exchanges == 50
    assert seen and seen[-1] == 0


@pytest.mark.parametrize("source", RECORDED[:2], ids=[_name(p) for p in RECORDED[:2]])
def test_finalising_writes_the_side_index_a_plain_save_writes(source: Path, tmp_path: Path) -> None:
    recorded = load_cassette(source)
    paths = RecordingPaths(tmp_path / "finalised", _name(source))
    paths.journal.parent.mkdir(parents=True)
    paths.journal.write_text(
        "".join(e.model_dump_json(exclude_none=True) + "\n" for e in recorded.exchanges),
        encoding="utf-8",
    )
    finalize_recording(paths, upstream=recorded.upstream)
    saved = save_cassette(recorded, tmp_path / "saved" / source.name)
    written = side_index_file(paths.cassette)
    assert written.exists()
    assert written.read_bytes() == side_index_file(saved).read_bytes()


def test_overwrite_without_an_evalset_removes_the_replaced_recordings_evalset(
    tmp_path: Path, standin: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--overwrite --no-evalset``: the EvalSet of the recording replaced is not left
    beside the new cassette (its cases are conversations the cassette no longer holds)."""
    from google import genai

    import rec
    from rec.standin.replies import FAKE_API_KEY

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    url = standin.url  # type: ignore[attr-defined]
    with rec.record(tmp_path, name="bug", upstream=url):
        client = genai.Client()
        client.models.generate_content(model="gemini-2.0-flash", contents="first")
    evalset = tmp_path / "bug.evalset.json"
    assert "first" in evalset.read_text()
    with rec.record(tmp_path, name="bug", upstream=url, overwrite=True, write_evalset=False):
        client = genai.Client()
        client.models.generate_content(model="gemini-2.0-flash", contents="second")
    assert "second" in (tmp_path / "bug.cassette.json").read_text()
    assert not evalset.exists()


def test_stopping_a_recording_parses_each_journal_line_once(
    tmp_path: Path, standin: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real recording's finalisation reads its journal once: each exchange's JSON is
    validated by pydantic-core exactly once, by the capture files' reader, and nothing
    after it (the composer, the EvalSet, the cassette's writer) parses it again. Counted
    from the interpreter's own call events, on every thread, while rec.record stops."""
    import sys
    import threading
    from types import FrameType

    from google import genai

    import rec
    from rec.standin.replies import FAKE_API_KEY

    validator = Exchange.__pydantic_validator__
    parses: dict[str, int] = {"finalising": 0, "elsewhere": 0}

    def finalising(frame: FrameType | None) -> bool:
        while frame is not None:
            if frame.f_code.co_name == "finalize_recording":
                return True
            frame = frame.f_back
        return False

    def count(frame: FrameType, event: str, arg: object) -> None:
        if event == "c_call" and getattr(arg, "__self__", None) is validator:
            parses["finalising" if finalising(frame) else "elsewhere"] += 1

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    url = standin.url  # type: ignore[attr-defined]
    threading.setprofile(count)
    sys.setprofile(count)
    try:
        with rec.record(tmp_path, name="once", upstream=url):
            client = genai.Client()
            for question in ("one", "two", "three"):
                client.models.generate_content(model="gemini-2.0-flash", contents=question)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    cassette = load_cassette(tmp_path / "once.cassette.json")
    assert len(cassette.exchanges) == 3
    assert (tmp_path / "once.evalset.json").exists()
    assert parses["finalising"] == 3
