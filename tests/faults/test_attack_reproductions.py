"""What an attack from outside tried against a running recorder and the CLI: a web page's
cross-site POST, a recorder on port 80, a name that climbs out of `--out`. Each is refused
with one line, or works, and nothing reaches the upstream or a foreign folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from rec.cli import main
from rec.standin.replies import FAKE_API_KEY, Reply
from recorder._recorder import Recorder
from recorder._traffic import Upstreams
from recorder._traffic._server import _loopback_hosts
from tests.factories import adk_session_document

from .harness import UNARY

pytestmark = pytest.mark.faults

BODY = '{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}'


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"content-type": "text/plain"}, id="simple-text-plain"),
        pytest.param({"content-type": "application/x-www-form-urlencoded"}, id="simple-form"),
        pytest.param(
            {"content-type": "application/json", "origin": "https://evil.example"},
            id="origin",
        ),
        pytest.param(
            {"content-type": "application/json", "sec-fetch-site": "cross-site"},
            id="sec-fetch-site",
        ),
    ],
)
def test_model_routes_refuse_a_cross_site_browser_request(
    tmp_path: Path, standin_factory: Any, headers: dict[str, str]
) -> None:
    """Item 5: what a web page can send cross-site without a preflight never reaches the
    upstream with the recording's credentials, and is not recorded."""
    api = standin_factory(lambda request: Reply.text("fine"))
    with Recorder(
        tmp_path, name="web", upstreams=Upstreams(gemini=api.url)
    ).running_in_thread() as rec:
        with httpx.Client(trust_env=False, timeout=60) as client:
            refused = client.post(rec.url + UNARY, content=BODY, headers=headers)
            api_client = client.post(
                rec.url + UNARY,
                content=BODY,
                headers={"content-type": "application/json", "x-goog-api-key": FAKE_API_KEY},
            )
    assert refused.status_code == 403, refused.text
    assert "web page" in refused.json()["error"]["message"]
    assert api_client.status_code == 200
    assert len(api.requests) == 1  # only the API client's request went upstream


def test_a_recorder_on_port_80_answers_a_host_without_a_port() -> None:
    """Item 7: on HTTP's default port clients send `Host: 127.0.0.1`, without `:80`."""
    hosts = _loopback_hosts("127.0.0.1", 80)
    assert hosts is not None and {"127.0.0.1", "localhost", "127.0.0.1:80"} <= hosts
    other = _loopback_hosts("127.0.0.1", 8080)
    assert other is not None and "127.0.0.1" not in other


def test_rec_stop_exits_non_zero_when_a_recorder_does_not_stop(
    tmp_path: Path, standin_factory: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 7: a recorder `rec stop` cannot stop (here one whose program decides its end)
    is said, and `rec stop` exits 1 instead of 0."""
    api = standin_factory(lambda request: Reply.text("fine"))
    with Recorder(tmp_path, name="held", upstreams=Upstreams(gemini=api.url)).running_in_thread():
        assert main(["stop", "--out", str(tmp_path)]) == 1
    assert "does not stop on request" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["../../x", "a/b", ".hidden", "..", "bad\nname"])
def test_rec_import_refuses_a_name_that_leaves_out(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 11: `rec import --name` is checked by the same validator as `rec start --name`."""
    import json

    session = tmp_path / "session.json"
    session.write_text(json.dumps(adk_session_document()))
    out = tmp_path / "deep" / "out"
    code = main(["import", str(session), "--out", str(out), "--name", name])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "cannot be used as a file name" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["session.json"]


def test_rec_import_never_replaces_an_eval_set_of_the_same_name_unasked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 1, for `rec import`: a second source imported under a name that already holds
    an eval set replaced the first one's cases, exit 0. It is refused (the file untouched)
    unless --overwrite is given."""
    import json

    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps(adk_session_document([("hi", "Hello.")], session_id="s-1")))
    second.write_text(json.dumps(adk_session_document([("bye", "Bye.")], session_id="s-2")))
    out = tmp_path / "out"
    assert main(["import", str(first), "--out", str(out), "--name", "bugs"]) == 0
    kept = (out / "bugs.evalset.json").read_bytes()
    capsys.readouterr()
    assert main(["import", str(second), "--out", str(out), "--name", "bugs"]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "--overwrite" in err and len(err.strip().splitlines()) == 1
    assert (out / "bugs.evalset.json").read_bytes() == kept
    assert main(["import", str(second), "--out", str(out), "--name", "bugs", "--overwrite"]) == 0
    assert (out / "bugs.evalset.json").read_bytes() != kept
