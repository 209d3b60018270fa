"""``rec serve`` holds a large cassette in little more memory than the file: it imports no
google-genai (the replayed client's library, some 40 MB of models rec serve never uses),
no recorder forwarding and no in-process tool replay (httpx, respx: only a miss recorded
in ``auto`` mode or a replay in the agent's own process use them), and it reads the
cassette through its side index, parsing only what it serves."""

from __future__ import annotations

import subprocess
import urllib.request
from pathlib import Path

from cassettes._cassette_writer import save_cassette
from tests.factories import make_cassette
from tests.rec_process import probe_argv, probed


def test_rec_serve_imports_no_google_genai(tmp_path: Path) -> None:
    cassette = tmp_path / "served.cassette.json"
    save_cassette(make_cassette(), cassette)
    proc = subprocess.Popen(
        probe_argv(["serve", str(cassette), "-q"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("export GOOGLE_GEMINI_BASE_URL="), proc.stderr.read()  # type: ignore[union-attr]
        url = first.strip().split("=", 1)[1]
        stop = urllib.request.Request(url + "/__rec__/stop", data=b"", method="POST")
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(stop) as answer:
            answer.read()
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    result = probed(["serve"], out)
    assert result["status"] in (0, None)
    modules = set(result["modules"])
    assert "replayer._serve" in modules and "cassettes._side_index" in modules
    assert not any(m == "google.genai" or m.startswith("google.genai.") for m in modules)
    assert not modules & {"httpx", "respx", "recorder._forwarding", "replayer._tool_replay"}
