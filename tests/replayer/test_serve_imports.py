"""``rec serve`` holds a large cassette in little more memory than the file: it imports no
google-genai (the replayed client's library, some 40 MB of models rec serve never uses),
no recorder forwarding and no in-process tool replay (httpx, respx: only a miss recorded
in ``auto`` mode or a replay in the agent's own process use them), and it reads the
cassette through its side index, parsing only what it serves."""

from __future__ import annotations

from pathlib import Path

from cassettes._cassette_writer import save_cassette
from tests.factories import make_cassette
from tests.rec_process import probe_serve


def test_rec_serve_imports_no_google_genai(tmp_path: Path) -> None:
    cassette = tmp_path / "served.cassette.json"
    save_cassette(make_cassette(), cassette)
    result = probe_serve(cassette, tmp_path, lambda url: None)
    assert result["status"] in (0, None)
    modules = set(result["modules"])
    assert "replayer._serve" in modules and "cassettes._side_index" in modules
    assert not any(m == "google.genai" or m.startswith("google.genai.") for m in modules)
    assert not modules & {"httpx", "respx", "recorder._forwarding", "replayer._tool_replay"}
