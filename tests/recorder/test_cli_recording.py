"""`rec start` / `rec stop` / `rec status` / `rec serve` as a user runs them: real subprocesses."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from cassettes._cassette import load_cassette
from rec.cli import main
from rec.standin.replies import FAKE_API_KEY
from rec.standin.server import StandinGemini
from recorder._control import recorder_statuses
from recorder._journal_lines import exchange_lines
from tests.factories import echo_model
from tests.rec_process import popen, printed_url, rec_run, rec_start, start_argv
from tests.rec_process import rec_argv as _rec
from tests.rec_process import rec_environment as _env

CLIENT = textwrap.dedent(
    """
    import sys, time
    from google import genai
    client = genai.Client()
    for i in range(int(sys.argv[1])):
        print(client.models.generate_content(model="gemini-2.0-flash", contents=f"turn {i}").text,
              flush=True)
    time.sleep(float(sys.argv[2]))
    sys.exit(int(sys.argv[3]))
    """
)

SERVER_LOOP = "uvloop" if importlib.util.find_spec("uvloop") is not None else "asyncio"
"""The event loop `rec start` and `rec serve` run on (recorder/_traffic/_event_loop.py)."""


@pytest.fixture
def api(standin_factory: Callable[..., StandinGemini]) -> StandinGemini:
    """A stand-in that answers each question with ``echo <question>``."""
    return standin_factory(echo_model)


@pytest.fixture
def client_script(tmp_path: Path) -> Path:
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    return script


def test_start_wraps_a_command_and_exits_with_its_status(
    tmp_path: Path, api: StandinGemini, client_script: Path
) -> None:
    out = tmp_path / "rec"
    proc = rec_start(
        out,
        "wrapped",
        api.url,
        sys.executable,
        str(client_script),
        "3",
        "0",
        "3",
        GOOGLE_API_KEY=FAKE_API_KEY,
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.splitlines() == ["echo turn 0", "echo turn 1", "echo turn 2"]
    assert "wrote" in proc.stderr and "wrapped.cassette.json" in proc.stderr
    assert FAKE_API_KEY not in proc.stderr + proc.stdout
    cassette = load_cassette(out / "wrapped.cassette.json")
    assert len(cassette.exchanges) == 3 == len(api.requests)
    assert not (out / ".rec" / "wrapped.journal.jsonl").exists()


ARGV_CLIENT = textwrap.dedent(
    """
    import sys
    from google import genai
    print(" ".join(sys.argv[1:]), flush=True)
    client = genai.Client()
    reply = client.models.generate_content(model="gemini-2.0-flash", contents="hi")
    print(reply.text, flush=True)
    """
)


def test_start_without_double_dash_leaves_the_commands_options_alone(
    tmp_path: Path, api: StandinGemini
) -> None:
    # The command's own --name and --port are its own: rec's options end at its first word.
    script = tmp_path / "app.py"
    script.write_text(ARGV_CLIENT)
    out = tmp_path / "rec"
    argv = start_argv(out, "mine", api.url)  # no "--": the command follows rec's options
    argv += [sys.executable, str(script), "--name", "child", "--port", "8766"]
    proc = subprocess.run(
        argv, env=_env(GOOGLE_API_KEY=FAKE_API_KEY), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["--name child --port 8766", "echo hi"]
    assert len(load_cassette(out / "mine.cassette.json").exchanges) == 1
    assert not (out / "child.cassette.json").exists()


def test_sigkill_then_stop_recovers_every_completed_exchange(
    tmp_path: Path, api: StandinGemini, client_script: Path
) -> None:
    out = tmp_path / "rec"
    recorder = subprocess.Popen(
        start_argv(out, "crashy", api.url, sys.executable, str(client_script), "2", "60", "0"),
        env=_env(GOOGLE_API_KEY=FAKE_API_KEY),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    journal = out / ".rec" / "crashy.journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if exchange_lines(journal) >= 2:  # what `rec status` counts (a missing file: 0)
            break
        time.sleep(0.05)
    else:
        recorder.kill()
        pytest.fail("the recorder never journaled two exchanges")
    os.kill(recorder.pid, signal.SIGKILL)
    recorder.wait(timeout=10)
    os.killpg(recorder.pid, signal.SIGKILL)  # the wrapped client too

    status = rec_run("status", "--out", str(out))
    assert "not running" in status.stdout and "2 exchanges" in status.stdout

    stop = rec_run("stop", "--out", str(out))
    assert stop.returncode == 0, stop.stderr
    assert "recovered" in stop.stderr and "2 new exchanges" in stop.stderr
    cassette = load_cassette(out / "crashy.cassette.json")
    assert [e.id for e in cassette.exchanges] == [0, 1]

    api.stop()
    from google import genai

    from replayer._replay_api import replay

    with replay(out / "crashy.cassette.json") as replaying:
        client = genai.Client()
        assert (
            client.models.generate_content(model="gemini-2.0-flash", contents="turn 1").text
            == "echo turn 1"
        )
    assert replaying.misses == []


def test_start_without_command_prints_exports_and_stops_on_rec_stop(
    tmp_path: Path, api: StandinGemini
) -> None:
    out = tmp_path / "rec"
    recorder = popen(start_argv(out, "manual", api.url))
    assert recorder.stdout is not None
    exports = dict(
        line.removeprefix("export ").split("=", 1)
        for line in (recorder.stdout.readline().strip() for _ in range(3))
    )
    url = exports["GOOGLE_GEMINI_BASE_URL"]
    assert url.startswith("http://127.0.0.1:") and exports["GOOGLE_VERTEX_BASE_URL"] == url

    from google import genai
    from google.genai import types

    client = genai.Client(api_key=FAKE_API_KEY, http_options=types.HttpOptions(base_url=url))
    assert client.models.generate_content(model="gemini-2.0-flash", contents="hi").text == "echo hi"

    status = rec_run("status", "--out", str(out))
    assert "manual: recording at" in status.stdout and "1 exchanges recorded" in status.stdout
    [running] = recorder_statuses(out)
    assert running.counters["event_loop"] == SERVER_LOOP  # uvloop wherever it is installed
    stop = rec_run("stop", "--out", str(out))
    assert stop.returncode == 0 and "stopped 'manual'" in stop.stderr
    assert recorder.wait(timeout=30) == 0
    assert len(load_cassette(out / "manual.cassette.json").exchanges) == 1


def test_serve_replays_to_another_process(
    tmp_path: Path, api: StandinGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    from google import genai

    from recorder._api import record

    with monkeypatch.context() as env:
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        with record(tmp_path, name="served", upstream=api.url):
            client = genai.Client()
            client.models.generate_content(model="gemini-2.0-flash", contents="hello")
    api.stop()
    server = popen(_rec("serve", str(tmp_path), "--quiet"))
    try:
        url = printed_url(server)
        script = (
            "from google import genai; c = genai.Client(api_key='placeholder'); "
            "print(c.models.generate_content(model='gemini-2.0-flash', contents='hello').text)"
        )
        child = subprocess.run(
            [sys.executable, "-c", script],
            env=_env(GOOGLE_GEMINI_BASE_URL=url),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert child.stdout.strip() == "echo hello", child.stderr
        with httpx.Client(trust_env=False, timeout=60) as client:
            status = client.get(f"{url}/__rec__/status").json()
        assert status["event_loop"] == SERVER_LOOP
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)


# -- misuse: one clear line, exit status 2 -------------------------------------------------


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_unknown_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _main(capsys, "start", "--prot", "8080")
    assert code == 2
    assert text.strip() == (
        "UsageError: No such option '--prot'. (Did you mean one of: '--host', '--out', "
        "'--port'?) See `rec start --help`."
    )


def test_stop_with_nothing_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _main(capsys, "stop", "--out", str(tmp_path))
    assert code == 2
    assert text.strip() == (
        f"InputError: {tmp_path}: no recorder is running here and there is nothing to recover. "
        "Pass the folder given to `rec start --out`"
    )


@pytest.mark.parametrize(
    ("content", "where"),
    [
        pytest.param(
            '{"format_version": 1, "name": "x", "exchanges": [\n  {"id": 0,}\n]}',
            "line 2 column 12",
            id="not-json",
        ),
        pytest.param(
            '{"format_version": 1, "name": "x", "exchanges": [{"id": 0}]}',
            "exchanges[0].recorded_at",
            id="missing-field",
        ),
        pytest.param(
            '{"format_version": 7, "name": "x", "exchanges": []}',
            "format_version",
            id="future-version",
        ),
        pytest.param(
            '{"format_version": 1, "name": "x", "exchanges": [{"id": 0, '
            '"recorded_at": "t", "request": {"method": "POST", "url": "http://h/u", '
            '"body": {"kind": "jsn", "value": 1}}, "response": {"status": 200}}]}',
            "exchanges[0].request.body",
            id="bad-body-kind",
        ),
    ],
)
def test_corrupt_cassette_names_file_and_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, where: str
) -> None:
    bad = tmp_path / "bad.cassette.json"
    bad.write_text(content)
    code, text = _main(capsys, "serve", str(bad))
    assert code == 2
    line = text.strip()
    assert line.startswith(f"InputError: {bad}:{where}") and "\n" not in line, line


def test_unreadable_cassette(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _main(capsys, "serve", str(tmp_path / "missing.cassette.json"))
    assert code == 2 and "missing.cassette.json: no such file or folder" in text


def test_port_in_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, text = _main(capsys, "start", "--out", str(tmp_path), "--port", str(port))
    assert code == 2
    assert f"127.0.0.1:{port}: port already in use" in text and "--port" in text


def test_start_in_auto_mode_replays_hits_and_records_misses(
    tmp_path: Path, api: StandinGemini, client_script: Path
) -> None:
    out = tmp_path / "rec"

    def run(turns: str, *mode: str) -> subprocess.CompletedProcess[str]:
        command = (sys.executable, str(client_script), turns, "0", "0")
        return rec_start(out, "grow", api.url, *command, flags=mode, GOOGLE_API_KEY=FAKE_API_KEY)

    first = run("2")
    assert first.returncode == 0, first.stderr
    assert len(api.requests) == 2
    second = run("3", "--mode", "auto")  # turns 0 and 1 are recorded, turn 2 is new
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == ["echo turn 0", "echo turn 1", "echo turn 2"]
    assert len(api.requests) == 3  # only the miss went upstream
    cassette = load_cassette(out / "grow.cassette.json")
    assert [e.id for e in cassette.exchanges] == [0, 1, 2]


def test_a_recording_with_no_traffic_writes_nothing_and_says_so(
    tmp_path: Path, api: StandinGemini
) -> None:
    """`rec start` then `rec stop` with no model call in between leaves no empty
    cassette or eval set behind (a replay of them would evaluate nothing), and says so.
    Its NO_PROXY line adds loopback to the user's list instead of replacing it."""
    out = tmp_path / "rec"
    recorder = popen(start_argv(out, "idle", api.url))
    assert recorder.stdout is not None and recorder.stderr is not None
    lines = [recorder.stdout.readline().strip() for _ in range(3)]
    no_proxy = next(line for line in lines if "NO_PROXY" in line)
    shell = subprocess.run(
        ["bash", "-c", f'{no_proxy}; echo "$NO_PROXY|$no_proxy"'],
        env={"PATH": os.environ.get("PATH", ""), "NO_PROXY": "corp.example", "no_proxy": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shell.stdout.strip() == "127.0.0.1,localhost,corp.example|127.0.0.1,localhost"

    stop = rec_run("stop", "--out", str(out))
    assert stop.returncode == 0, stop.stderr
    assert recorder.wait(timeout=60) == 0
    said = recorder.stderr.read() + stop.stderr
    assert "nothing was recorded" in said and "no cassette and no eval set" in said
    # Only rec's own working folder (.rec: locks) is there.
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == []
