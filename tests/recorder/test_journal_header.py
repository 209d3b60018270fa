"""The recorder's journal says which secret scan its exchanges passed, and finalisation
looks again only at the exchanges of a journal that does not say it (or names other rules).

Real journals (the recorder's own writer, and a real recorder over the stand-in API),
finalised as ``rec stop`` finalises them, under tmp_path.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from cassettes._cassette import Cassette, Exchange, load_cassette
from cassettes._cassette_writer import save_cassette
from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from recorder._capture_files import read_journal
from recorder._control import recorder_statuses
from recorder._journal import Journal
from recorder._journal_header import JournalHeader, journal_header, scan_rules
from recorder._journal_lines import exchange_lines
from recorder._recorder import Recorder
from recorder._recording import Finishing, finalize_recording
from recorder._recording_state import RecordingPaths
from recorder._traffic import Upstreams
from tests.cassettes.genai_requests import FAKE_KEY
from tests.factories import make_exchange
from tests.journaled import journal_holding

PLANTED = 2
"""The id of the exchange whose answer holds a credential-shaped value."""


def _exchanges() -> list[Exchange]:
    """Four exchanges; #2's answer spells an API key (as an older rec could have let by)."""
    return [
        make_exchange(i, response_body=_answer(f"my key is {FAKE_KEY}" if i == PLANTED else "ok"))
        for i in range(4)
    ]


def _answer(text: str) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]}


def _write(paths: RecordingPaths, header: JournalHeader | None) -> None:
    journal = Journal[Exchange](paths.journal, header=header)
    for exchange in _exchanges():
        journal.append_sync(exchange)
    journal.close()


OTHER_RULES = JournalHeader(rec_journal=1, scan_rules="sha256:" + "0" * 64)


@pytest.mark.parametrize(
    "header",
    [pytest.param(None, id="no-header"), pytest.param(OTHER_RULES, id="other-rules")],
)
def test_a_journal_not_marked_with_this_recs_scan_rules_is_scanned_again(
    header: JournalHeader | None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    paths = RecordingPaths(tmp_path, "old")
    _write(paths, header)
    contents = read_journal(paths.journal)
    assert not contents.scanned and len(contents.exchanges) == 4 and contents.torn_lines == 0
    assert all(text is not None for text in contents.texts)  # each line, for the glance
    with caplog.at_level(logging.ERROR, logger="recorder._recording"):
        result = finalize_recording(paths, upstream=None)
    assert result.exchanges == 3
    assert [e.id for e in load_cassette(paths.cassette).exchanges] == [0, 1, 3]
    assert FAKE_KEY not in paths.cassette.read_text(encoding="utf-8")
    assert "exchange #2 is left out of the recording" in caplog.text
    assert FAKE_KEY not in caplog.text


def test_a_journal_marked_with_this_recs_scan_rules_is_taken_as_scanned(tmp_path: Path) -> None:
    # The header is the recorder's word that it scanned every line (with the recording's
    # known credentials too) before writing it: finalisation does not read them again, so
    # the planted value, which only a hand edit puts past the recorder, stays.
    paths = RecordingPaths(tmp_path, "new")
    _write(paths, journal_header())
    contents = read_journal(paths.journal)
    assert contents.scanned and len(contents.exchanges) == 4 and contents.torn_lines == 0
    assert contents.texts == [None] * 4  # nothing to glance at: the lines are not kept
    result = finalize_recording(paths, upstream=None)
    assert result.exchanges == 4
    assert [e.id for e in load_cassette(paths.cassette).exchanges] == [0, 1, 2, 3]


def test_an_existing_cassettes_exchanges_are_scanned_beside_a_scanned_journal(
    tmp_path: Path,
) -> None:
    # --mode auto: the cassette's exchanges are kept, but the journal's header speaks only
    # for the journal's own lines.
    paths = RecordingPaths(tmp_path, "auto")
    old = _exchanges()
    save_cassette(Cassette(name="auto", exchanges=old), paths.cassette)
    journal = Journal[Exchange](paths.journal, header=journal_header())
    for n in range(2):
        journal.append_sync(make_exchange(len(old) + n))
    journal.close()
    result = finalize_recording(paths, upstream=None, how=Finishing(keep_existing=True))
    assert [e.id for e in load_cassette(paths.cassette).exchanges] == [0, 1, 3, 4, 5]
    assert result.exchanges == 5
    assert FAKE_KEY not in paths.cassette.read_text(encoding="utf-8")


def test_the_header_is_the_first_line_of_a_new_journal_only(tmp_path: Path) -> None:
    path = tmp_path / ".rec" / "j.journal.jsonl"
    first = Journal[Exchange](path, header=journal_header())
    first.append_sync(make_exchange(0))
    first.close()
    header, line = path.read_bytes().splitlines()
    assert json.loads(header) == {"rec_journal": 1, "scan_rules": scan_rules()}
    assert json.loads(line)["id"] == 0
    # Reopened (a recorder that could not finalise the journal before it): appended as is.
    again = Journal[Exchange](path, header=journal_header())
    again.append_sync(make_exchange(1))
    again.close()
    assert path.read_bytes().count(b'"rec_journal"') == 1
    assert exchange_lines(path) == 2  # what `rec status` counts: not the header
    assert [e.id for e in read_journal(path).exchanges] == [0, 1]


def test_a_header_past_the_first_line_marks_nothing(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    old = Journal[Exchange](path)
    old.append_sync(make_exchange(0))
    old.close()
    header = journal_header()
    assert header is not None
    with open(path, "ab") as handle:
        handle.write(header.model_dump_json().encode() + b"\n")
    contents = read_journal(path)
    assert not contents.scanned and len(contents.exchanges) == 1 and contents.torn_lines == 0


def _echo(request: StandinRequest) -> Reply | None:
    return Reply.text("echo") if request.rpc == "generateContent" else None


def test_the_recorder_writes_its_journal_with_the_header(
    tmp_path: Path, standin_factory: Any
) -> None:
    api = standin_factory(_echo)
    recorder = Recorder(tmp_path, name="live", upstreams=Upstreams(gemini=api.url))
    with recorder.running_in_thread():
        body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        with httpx.Client(trust_env=False, timeout=60) as client:
            for _ in range(2):
                answer = client.post(
                    recorder.url + "/v1beta/models/gemini-2.0-flash:generateContent",
                    headers={"x-goog-api-key": FAKE_API_KEY},
                    json=body,
                )
                assert answer.status_code == 200
        first = journal_holding(recorder.paths.journal, 2).split(b"\n", 1)[0]
        assert JournalHeader.model_validate_json(first) == journal_header()
        assert read_journal(recorder.paths.journal).scanned
        [status] = recorder_statuses(tmp_path)
        assert status.journal_exchanges == 2
    assert recorder.result is not None and recorder.result.exchanges == 2
    assert not recorder.paths.journal.exists()
