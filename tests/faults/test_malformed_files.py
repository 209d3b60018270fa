"""Malformed files, generated: every file rec reads, broken in ways no one wrote a test for.

Each kind of file starts as a valid one built by the factories and is broken by hypothesis:
a value replaced by any JSON, a key dropped or added, a value nested 200,000 deep, a
5,000-digit integer, the bytes cut short or made invalid UTF-8. The command that reads it
must then either accept it or answer with one line and exit status 2 (``rec check``: 1 with
one line per problem), never a traceback, and never touch the files already in its output
folder. The examples are derandomized: a failure reproduces on every run.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cassettes._cassette import dump_cassette
from cassettes._eval_config import dump_eval_config
from cassettes._evalset import dump_evalset
from rec.cli import main
from tests.factories import (
    adk_session_document,
    gemini_stream,
    legacy_cases_document,
    make_cassette,
    make_evalset,
    make_exchange,
    make_full_evalset,
)

pytestmark = pytest.mark.faults  # the fault-injection suite (README: Guarantees)

SETTINGS = settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SENTINEL = "written before the command ran\n"

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _places(document: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) of a JSON document, the document itself first."""
    places: list[tuple[Any, Any]] = [(None, None)]
    stack = [document]
    while stack:
        node = stack.pop()
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else []
        )
        for key, value in items:
            places.append((node, key))
            stack.append(value)
    return places


@st.composite
def _broken(draw: st.DrawFn, document: Any) -> bytes:
    text = json.dumps(document).encode()
    how = draw(st.sampled_from(["replace", "drop", "add", "deep", "digits", "cut", "bytes"]))
    if how == "cut":
        return text[: draw(st.integers(0, len(text) - 1))]
    if how == "bytes":
        at = draw(st.integers(0, len(text)))
        return (
            text[:at] + draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\x00", b"\xe9"])) + text[at:]
        )
    changed = copy.deepcopy(document)
    container, key = draw(st.sampled_from(_places(changed)))
    marker = "__rec_marker__"
    if how == "replace" or container is None:
        value: Any = draw(JSON_VALUES) if how in ("replace", "drop", "add") else marker
        if container is None:
            changed = value
        else:
            container[key] = value
    elif how == "drop":
        container.pop(key)
    elif how == "add" and isinstance(container, dict):
        container[draw(st.text(min_size=1, max_size=12))] = draw(JSON_VALUES)
    else:
        container[key] = marker
    text = json.dumps(changed).encode()
    nested = b"[" * 200_000 + b"]" * 200_000 if how == "deep" else b"7" * 5000
    return text.replace(json.dumps(marker).encode(), nested)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _assert_read(argv: list[str], out_dir: Path | None = None, *, check: bool = False) -> None:
    kept = {p: p.read_text() for p in out_dir.iterdir() if p.is_file()} if out_dir else {}
    code, out, err = _run(argv)
    assert "Traceback" not in out + err
    if check:
        assert code in (0, 1), (code, out, err)
        return
    if code == 2:
        assert err.count("\n") == 1 and err.startswith(("InputError: ", "SecretFound: ")), err
        assert all(p.read_text() == text for p, text in kept.items()), "a file was overwritten"
    else:
        assert code in (0, 1), (code, out, err)


def _kinds(folder: Path) -> dict[str, tuple[str, Any, Callable[[Path, Path], list[str]]]]:
    good = folder / "good.evalset.json"
    good.write_text(dump_evalset(make_evalset(["hi", "bye"])), encoding="utf-8")
    cassette = make_cassette(
        [make_exchange(0), make_exchange(1, stream_chunks=gemini_stream("Sunny"))]
    )
    return {
        "evalset": (
            "broken.evalset.json",
            json.loads(dump_evalset(make_full_evalset())),
            lambda file, out: ["score", str(file), str(file), "--results", str(out)],
        ),
        "legacy": (
            "broken.test.json",
            legacy_cases_document(),
            lambda file, out: ["import", str(file), "--out", str(out)],
        ),
        "eval_config": (
            "broken_config.json",
            json.loads(dump_eval_config_example()),
            lambda file, out: ["score", str(good), str(good), "--config", str(file)],
        ),
        "cassette": (
            "broken.cassette.json",
            json.loads(dump_cassette(cassette)),
            lambda file, out: ["import", str(file), "--out", str(out)],
        ),
        "adk_session": (
            "broken.json",
            adk_session_document(),
            lambda file, out: ["import", str(file), "--out", str(out)],
        ),
    }


def dump_eval_config_example() -> str:
    from cassettes._eval_config import EvalConfig

    config = EvalConfig.model_validate(
        {
            "criteria": {
                "tool_trajectory_avg_score": {"threshold": 1.0, "match_type": "IN_ORDER"},
                "response_match_score": 0.5,
                "tool_trajectory_rules_score": {
                    "threshold": 1,
                    "tool_args": {"f": {"ignore": ["x"]}},
                },
            }
        }
    )
    return dump_eval_config(config)


@pytest.mark.parametrize("kind", ["evalset", "legacy", "eval_config", "cassette", "adk_session"])
def test_a_broken_file_is_one_line_exit_2_and_overwrites_nothing(tmp_path, kind):
    name, document, argv = _kinds(tmp_path)[kind]
    out = tmp_path / "out"
    out.mkdir()
    for written in ("broken.evalset.json", "test_config.json"):
        (out / written).write_text(SENTINEL)

    @SETTINGS
    @given(data=_broken(document))
    def read(data: bytes) -> None:
        file = tmp_path / name
        file.write_bytes(data)
        _assert_read(argv(file, out), out)
        _assert_read(["check", str(file)], check=True)

    read()


def test_broken_journal_lines_are_skipped_and_the_rest_recovered(tmp_path):
    exchanges = [make_exchange(i) for i in range(3)]
    lines = [e.model_dump_json(exclude_none=True) for e in exchanges]

    @SETTINGS
    @given(data=_broken(json.loads(lines[1])))
    def recover(data: bytes) -> None:
        folder = tmp_path / "rec"
        (folder / ".rec").mkdir(parents=True, exist_ok=True)
        journal = folder / ".rec" / "s.journal.jsonl"
        journal.write_bytes(
            b"\n".join([lines[0].encode(), data.replace(b"\n", b" "), lines[2].encode()]) + b"\n"
        )
        code, out, err = _run(["stop", "--out", str(folder), "--quiet"])
        assert "Traceback" not in out + err and code in (0, 2), (code, out, err)
        if code == 0:
            saved = json.loads((folder / "s.cassette.json").read_text())
            ids = [e["id"] for e in saved["exchanges"]]
            assert 0 in ids and 2 in ids, ids  # the good lines are never lost

    recover()


def _special_file(target: Path, kind: str) -> None:
    """Make ``target`` a FIFO, a bound Unix socket or a symlink to /dev/zero."""
    import os
    import socket

    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "socket":
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(target))
        listener.close()
    else:
        target.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-symlink", "socket"])
def test_check_and_score_refuse_a_fifo_or_a_device_without_hanging(
    tmp_path: Path, kind: str
) -> None:
    """Item 8: every file rec reads is a regular file read with a bound. A FIFO (which
    would block the reader forever), a symlink to /dev/zero (endless bytes) and a socket
    are one line each, in a subprocess whose timeout a hang would hit (`rec import` of a
    FIFO hung probing it for a SQLite header)."""
    import subprocess

    from tests.rec_process import rec_argv, rec_environment

    target = tmp_path / "x.evalset.json"
    _special_file(target, kind)
    for args, status in (
        (["check", str(target)], 1),
        (["score", str(target), str(target)], 2),
        (["import", str(target), "--out", str(tmp_path / "out")], 2),
    ):
        done = subprocess.run(
            rec_argv(*args), env=rec_environment(), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == status, done.stderr
        assert "is not a regular file" in done.stdout + done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-symlink", "socket"])
@pytest.mark.parametrize("which", ["evalset", "cassette"])
def test_replay_refuses_a_fifo_or_a_device_without_hanging(
    tmp_path: Path, kind: str, which: str
) -> None:
    """Item 8: `rec replay` of a folder holding a FIFO eval set hung (counting its cases to
    decide on workers), and a cassette that is a symlink to /dev/zero read as "no recording
    beside this eval set". Each is one line naming the file, exit 2."""
    import subprocess

    from tests.rec_process import REPO, rec_argv, rec_environment

    evalset, cassette = tmp_path / "x.evalset.json", tmp_path / "x.cassette.json"
    if which == "cassette":
        evalset.write_text(dump_evalset(make_evalset(["hi"])))
    target = evalset if which == "evalset" else cassette
    _special_file(target, kind)
    for named in (tmp_path, target if which == "evalset" else evalset):
        done = subprocess.run(
            rec_argv("replay", str(REPO / "examples" / "home_assistant"), str(named)),
            env=rec_environment(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and str(target) in lines[0], lines
        assert "is not a regular file" in lines[0], lines


def test_an_agent_that_calls_sys_exit_at_import_is_named_in_one_line(tmp_path: Path) -> None:
    """Item 8: `sys.exit(3)` in the agent's module made `rec replay` exit 3 with no word."""
    import subprocess

    from tests.rec_process import rec_argv, rec_environment

    agent = tmp_path / "exiting_agent.py"
    agent.write_text("import sys\nsys.exit(3)\n")
    evalset = tmp_path / "x.evalset.json"
    evalset.write_text(dump_evalset(make_evalset(["hi"])))
    done = subprocess.run(
        rec_argv("replay", str(agent), str(evalset)),
        env=rec_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "exiting_agent" in lines[0] and "sys.exit(3)" in lines[0], lines


def _cassette_with(change: Callable[[dict[str, Any]], None]) -> str:
    document = json.loads(dump_cassette(make_cassette([make_exchange(0)])))
    change(document["exchanges"][0])
    return json.dumps(document)


def _evalset_with(change: Callable[[dict[str, Any]], None]) -> str:
    document = json.loads(dump_evalset(make_evalset(["hi", "bye"])))
    change(document)
    return json.dumps(document)


def _cassette_section(key: str, section: dict[str, Any]) -> str:
    document = json.loads(dump_cassette(make_cassette([make_exchange(0)])))
    document[key] = section
    return json.dumps(document)


def _live_frame(**frame: Any) -> str:
    session = {"id": 0, "opened_at": "2026-01-01T00:00:00+00:00", "url": "ws://h/ws/x"}
    frames = [{"sender": "server", "offset_ms": 1.0, **frame}]
    return _cassette_section("live", {"sessions": [{**session, "frames": frames}]})


def _mcp_session(server: dict[str, Any] | None, calls: list[dict[str, Any]]) -> str:
    toolset = {"server": {"transport": "stdio", "command": "python"}}
    session = {"opened_at": "2026-01-01T00:00:00+00:00", "server": server, "calls": calls}
    return _cassette_section("mcp", {"toolsets": [{"toolset": toolset, "sessions": [session]}]})


HELLO = {"protocol_version": "2025-11-25", "server_info": {"name": "s", "version": "1"}}
PNG_WITH_BAD_BASE64 = [{"inlineData": {"mimeType": "image/png", "data": "@@not base64@@"}}]


def _set(*path: str | int, to: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        target: Any = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = to

    return change


def _cassette_row(ident: str, *path: str | int, to: Any) -> Any:
    """A row: the cassette with the value at ``path`` set to ``to``."""
    return pytest.param(".cassette.json", _cassette_with(_set(*path, to=to)), id=ident)


@pytest.mark.parametrize(
    ("suffix", "text"),
    [
        _cassette_row("url-ipv6-unclosed", "request", "url", to="http://[::1"),
        _cassette_row("url-relative", "request", "url", to="/relative"),
        _cassette_row("url-space", "request", "url", to="http://h/a b"),
        _cassette_row("url-delete-byte", "request", "url", to="http://h/a\x7fb"),
        _cassette_row("header-control-byte", "response", "headers", "x-a", to="a\x01b"),
        _cassette_row(
            "header-longer-than-clients-read", "response", "headers", "x-a", to="a" * 200_000
        ),  # replay: aiohttp refuses it, the case fails
        _cassette_row("status-100", "response", "status", to=100),
        _cassette_row("status-101", "response", "status", to=101),
        _cassette_row("status-600", "response", "status", to=600),
        _cassette_row("method-empty", "request", "method", to=""),
        _cassette_row("method-crlf", "request", "method", to="POST\r\n"),
        _cassette_row("duration-1e308", "duration_ms", to=1e308),
        _cassette_row(
            "offset-ms-1e308",
            "response",
            "body",
            to={
                "kind": "sse",
                "events": [{"offset_ms": 1e308, "data": {"candidates": []}}],
            },
        ),
        pytest.param(
            ".evalset.json",
            _evalset_with(_set("creation_timestamp", to=1e300)),
            id="timestamp-1e300",
        ),
        pytest.param(
            ".evalset.json",
            _evalset_with(_set("creation_timestamp", to=0)).replace(
                '"creation_timestamp": 0', '"creation_timestamp": ' + "9" * 5000
            ),
            id="timestamp-5000-digits",
        ),
        pytest.param(
            ".evalset.json",
            _evalset_with(_set("eval_cases", 1, "eval_id", to="case_0")),
            id="duplicate-eval-id",
        ),
        # More shapes of the same item, each of which a later command tripped on.
        _cassette_row(
            "content-encoding-crlf",
            "response",
            "body",
            to={"kind": "base64", "base64": "YWJj", "content_encoding": "gzip\r\nx-a: b"},
        ),  # serve: a 500 (aiohttp refuses the header)
        _cassette_row(
            "response-inline-data-invalid-base64",
            "response",
            "body",
            "value",
            "candidates",
            0,
            "content",
            "parts",
            to=PNG_WITH_BAD_BASE64,
        ),  # show: a traceback
        pytest.param(
            ".cassette.json",
            _cassette_with(
                _set("request", "body", "value", "contents", 0, "parts", to=PNG_WITH_BAD_BASE64)
            ),
            id="request-inline-data-invalid-base64",  # show: a traceback
        ),
        pytest.param(
            ".cassette.json",
            _cassette_with(
                _set("response", "body", "value", "usageMetadata", "totalTokenCount", to="many")
            ),
            id="usage-metadata-not-a-number",  # show: a traceback
        ),
        _cassette_row(
            "contents-a-number", "request", "body", "value", "contents", to=5
        ),  # replay: a traceback reading the first user turn
        _cassette_row(
            "parts-a-number", "request", "body", "value", "contents", to=[{"parts": 5}]
        ),  # check, show and replay: a traceback
        pytest.param(
            ".cassette.json",
            _cassette_with(
                _set("request", "body", "value", "contents", to=[{"parts": [{"text": 5}]}])
            ),
            id="text-a-number",  # check and show: a traceback
        ),
        pytest.param(".cassette.json", _live_frame(offset_ms=float("nan")), id="live-offset-nan"),
        pytest.param(
            ".cassette.json", _live_frame(offset_ms=1e308), id="live-offset-1e308"
        ),  # serve --realtime: a hang
        pytest.param(".cassette.json", _live_frame(offset_ms=-1.0), id="live-offset-negative"),
        pytest.param(
            ".cassette.json", _live_frame(base64="@@"), id="live-frame-invalid-base64"
        ),  # serve: binascii.Error in the socket handler
        pytest.param(
            ".cassette.json",
            _mcp_session(HELLO, [{"method": "tools/list", "result": {"tools": 5}}]),
            id="mcp-tools-not-a-list",  # replay: the SDK's ValidationError inside ADK
        ),
        pytest.param(
            ".cassette.json",
            _mcp_session(HELLO, [{"method": "tools/call", "result": {"content": "text"}}]),
            id="mcp-call-result-not-mcp",
        ),
        pytest.param(
            ".cassette.json",
            _mcp_session(None, [{"method": "tools/list", "result": {"tools": []}}]),
            id="mcp-session-without-hello",  # replay cannot answer initialize
        ),
        pytest.param(
            ".evalset.json",
            _evalset_with(_set("eval_set_id", to="set\x00one")),
            id="eval-set-id-nul",  # replay --results: "embedded null byte" traceback
        ),
        pytest.param(
            ".evalset.json",
            _evalset_with(_set("eval_cases", 0, "eval_id", to="case\x01")),
            id="eval-id-control-byte",  # replay --junit: XML no parser reads
        ),
        pytest.param(
            ".json",
            json.dumps({"criteria": {"response_match_score": -1}}),
            id="threshold-negative",  # replay and score: every case passes, silently
        ),
        pytest.param(
            ".json",
            json.dumps({"criteria": {"tool_trajectory_avg_score": {"threshold": 2}}}),
            id="threshold-above-every-score",
        ),
        pytest.param(
            ".json",
            json.dumps(
                {
                    "criteria": {
                        "final_response_match_v2": {
                            "threshold": 0.5,
                            "judge_model_options": {"num_samples": 0},
                        }
                    }
                }
            ),
            id="judge-num-samples-0",  # score: the metric "could not run"
        ),
    ],
)
def test_check_fails_every_file_that_replay_serve_or_show_would_trip_on(
    tmp_path: Path, suffix: str, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 10: "0 problems" from `rec check` means the file runs. Each of these made
    replay, serve or show fail (a traceback, a 500, a hang); check names each one."""
    path = tmp_path / f"broken{suffix}"
    path.write_text(text, encoding="utf-8")
    code = main(["check", str(path)])
    out = capsys.readouterr()
    assert code == 1, out.out + out.err
    assert "0 problems" not in out.out + out.err
    assert "Traceback" not in out.err


@pytest.mark.parametrize(
    "text",
    [
        "nope",
        "[]",
        '{"name": "g"}',
        '{"name": "g", "pid": "1", "url": "u", "mode": "record", "upstream": "u",'
        ' "started_at": "t"}',
        '{"name": "g", "pid": 1, "url": "u", "mode": "bogus", "upstream": "u", "started_at": "t"}',
        '{"name": "g", "pid": 1, "url": "u", "mode": "record", "upstream": "u", "started_at": "t",'
        ' "keep_existing": 1}',
    ],
    ids=["not-json", "not-an-object", "missing", "pid-a-string", "unknown-mode", "int-for-bool"],
)
def test_a_corrupt_recorder_state_is_one_line_exit_2(tmp_path: Path, text: str) -> None:
    state = tmp_path / ".rec" / "g.state.json"
    state.parent.mkdir()
    state.write_text(text)
    for command in ("status", "stop"):
        code, out, err = _run([command, "--out", str(tmp_path)])
        assert code == 2, (command, out, err)
        assert "Traceback" not in out + err
        [line] = err.strip().splitlines()
        assert str(state) in line and "corrupt recorder state" in line and "Delete it" in line
    assert state.read_text() == text


@pytest.mark.parametrize(
    "eval_set_id",
    ["a/b\\c", "nul\x00byte", "x" * 5000, "é" * 300],
    ids=["separators", "nul", "5000-chars", "long-utf8"],
)
def test_a_results_file_is_written_for_any_eval_set_id(tmp_path: Path, eval_set_id: str) -> None:
    """Item 10: `rec replay --results` names each file after its eval set (as ADK does); a
    NUL, or a name longer than a file name can be, failed with a traceback after every case
    ran."""
    from cassettes._eval_result import EvalSetResult, save_eval_set_result

    first = EvalSetResult(eval_set_result_id=f"app_{eval_set_id}_1", eval_set_id=eval_set_id)
    other = EvalSetResult(eval_set_result_id=f"app_{eval_set_id}x_1", eval_set_id=eval_set_id)
    written = [save_eval_set_result(result, tmp_path) for result in (first, other)]
    assert [path.parent for path in written] == [tmp_path, tmp_path]  # never outside
    assert len({path.name for path in written}) == 2  # cut names stay distinct
    assert all(json.loads(path.read_text())["eval_set_id"] == eval_set_id for path in written)


def test_show_and_import_name_a_model_call_google_genai_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 10: a cassette whose reply holds inline data that is not base64 was a
    pydantic traceback in `rec show` and `rec import`; it is one line naming the exchange,
    exit 2 (and `rec check` lists it: see the test above)."""
    path = tmp_path / "bad.cassette.json"
    change = _set(
        "response", "body", "value", "candidates", 0, "content", "parts", to=PNG_WITH_BAD_BASE64
    )
    path.write_text(_cassette_with(change), encoding="utf-8")
    for args in (["show", str(path)], ["import", str(path), "--out", str(tmp_path / "out")]):
        code = main(args)
        out = capsys.readouterr()
        assert code == 2, (args, out.err)
        [line] = out.err.strip().splitlines()
        assert f"{path}:exchanges[0]:" in line and "inlineData.data" in line, line
    assert not list((tmp_path / "out").glob("*"))  # nothing written


def test_check_fails_a_case_two_eval_set_files_both_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 10, duplicate eval_ids across eval sets: two files with one eval_set_id and a
    shared eval_id are one case to results, `rec merge` and --shard. The same eval_id
    under different eval set ids is two cases, and fine."""
    text = dump_evalset(make_evalset(["hi", "bye"]))
    (tmp_path / "a.evalset.json").write_text(text)
    (tmp_path / "b.evalset.json").write_text(text)
    code = main(["check", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "b.evalset.json:eval_cases[0].eval_id" in out and "a.evalset.json too" in out, out
    other = json.loads(text)
    other["eval_set_id"] = "another_set"
    (tmp_path / "b.evalset.json").write_text(json.dumps(other))
    assert main(["check", str(tmp_path)]) == 0, capsys.readouterr().out


PROGRAM = """
from google import genai


async def chat(text, session):
    client = genai.Client()
    reply = await client.aio.models.generate_content(model="gemini-2.0-flash", contents=text)
    return reply.text
"""


def _replay_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A program and its EvalSet (one case, "hi"), and the cassette path beside them."""
    program = tmp_path / "prog.py"
    program.write_text(PROGRAM)
    evalset = make_evalset(["hi"], eval_set_id="prog", app_name="prog")
    (tmp_path / "prog.evalset.json").write_text(dump_evalset(evalset))
    return program, tmp_path / "prog.cassette.json"


ID_LINES = st.one_of(
    JSON_VALUES.map(lambda value: json.dumps(value)),
    st.text(alphabet='0123456789-+.eE"[]{}, ntrufalsNI', min_size=1, max_size=10),
)
"""What a damaged ``"id": ...`` line of a cassette may hold: any JSON value, or garbage."""


def test_a_damaged_id_line_is_one_line_for_replay_show_and_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39: a cassette in rec's own layout (read line by line, not parsed whole)
    whose second exchange's ``"id"`` line is damaged: replay, show and check answer in
    one line (or accept it), never a traceback."""
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaFAKE-key-for-damaged-id-lines-0000")
    program, cassette = _replay_folder(tmp_path)
    text = dump_cassette(make_cassette([make_exchange(0), make_exchange(1)]))
    line = '\n      "id": 1,'
    assert line in text

    @SETTINGS
    @given(value=ID_LINES)
    def read(value: str) -> None:
        cassette.write_text(text.replace(line, f'\n      "id": {value},', 1))
        _assert_read(["show", str(cassette)])
        _assert_read(["replay", f"{program}:chat", str(tmp_path / "prog.evalset.json")])
        _assert_read(["check", str(cassette)], check=True)

    read()


@pytest.mark.parametrize("depth", [900, 1000, 5000])
@pytest.mark.parametrize("place", ["state", "args", "description"])
def test_an_evalset_nested_a_thousand_deep_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, depth: int, place: str
) -> None:
    """Issue 39: an EvalSet nested about 1,000 deep (its session state, a tool call's
    arguments, a description) is refused in one line as ADK's reader refuses it, not a
    RecursionError."""
    monkeypatch.setenv("GOOGLE_API_KEY", "AIzaFAKE-key-for-deep-evalsets-000000")
    program, cassette = _replay_folder(tmp_path)
    cassette.write_text(dump_cassette(make_cassette([make_exchange(0)])))
    document = json.loads((tmp_path / "prog.evalset.json").read_text())
    case = document["eval_cases"][0]
    if place == "state":
        case["session_input"] = {"app_name": "prog", "user_id": "u", "state": {"k": "@@"}}
    elif place == "args":
        call = {"function_call": {"name": "f", "args": {"a": "@@"}}}
        case["conversation"][0]["user_content"]["parts"].append(call)
    else:
        document["description"] = "@@"
    deep = "[" * depth + "]" * depth
    evalset = tmp_path / "prog.evalset.json"
    evalset.write_text(json.dumps(document).replace('"@@"', deep))
    code, out, err = _run(["replay", f"{program}:chat", str(evalset)])
    assert code == 2, (out, err[-2000:])
    assert "Traceback" not in out + err and err.count("\n") == 1, err[-2000:]
    assert str(evalset) in err and "nested" in err, err
    code, out, err = _run(["check", str(evalset)])
    assert code == 1 and "Traceback" not in out + err, (out, err[-2000:])


def test_serve_answers_a_cassette_edited_in_place_clearly_without_a_traceback(
    tmp_path: Path,
) -> None:
    """Issue 39: a cassette changed in place while `rec serve` serves it is answered with
    one clear error per request naming the file (not a "please report it" 500), said once
    in the log, without a traceback."""
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    cassette = tmp_path / "served.cassette.json"
    cassette.write_text(dump_cassette(make_cassette([make_exchange(0), make_exchange(1)])))
    proc = subprocess.Popen(
        [sys.executable, "-m", "rec", "serve", str(cassette)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("export GOOGLE_GEMINI_BASE_URL="), first
        url = first.strip().split("=", 1)[1]
        with cassette.open("r+b") as handle:  # in place: same file, other bytes
            data = handle.read()
            handle.seek(0)
            handle.write(data[: len(data) // 2])
            handle.truncate()
        body = json.dumps(make_exchange(1).request.body.value).encode()  # type: ignore[union-attr]
        answers = []
        for _ in range(2):
            request = urllib.request.Request(
                url + "/v1beta/models/gemini-2.0-flash:generateContent",
                data=body,
                headers={"content-type": "application/json", "x-goog-api-key": "k"},
            )
            with pytest.raises(urllib.error.HTTPError) as failed:
                opener.open(request, timeout=120)
            answers.append((failed.value.code, failed.value.read().decode()))
        stop = urllib.request.Request(url + "/__rec__/stop", data=b"", method="POST")
        opener.open(stop, timeout=120).read()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    for code, text in answers:
        assert code == 409, text
        assert "changed on disk" in text and str(cassette) in text, text
        assert "please report" not in text
    assert "Traceback" not in err and err.count("changed on disk") == 1, err
