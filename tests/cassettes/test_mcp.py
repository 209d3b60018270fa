"""The ``mcp`` section of a cassette: folding journal lines, serving calls, identities."""

from __future__ import annotations

import json

import pytest

from cassettes._cassette import Cassette, dump_cassette, parse_cassette
from cassettes._errors import InputError
from cassettes._mcp import (
    McpCall,
    McpCallBook,
    McpHttpServer,
    McpJournalLine,
    McpRecording,
    McpServerHello,
    McpStdioServer,
    McpToolsetIdentity,
    McpToolsetRecording,
    mcp_recording_from_lines,
    merge_mcp_recordings,
)
from cassettes._mcp_identity import (
    http_server_identity,
    nearest_toolset,
    stdio_server_identity,
    toolset_changes,
)
from cassettes._redaction import REDACTED

CALC = McpToolsetIdentity(server=McpStdioServer(command="python", args=["calc.py"]))
LISTING = {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]}


def _line(session: str, *, call: McpCall | None = None, toolset=CALC) -> McpJournalLine:
    hello = McpServerHello(server_info={"name": "calc"}) if call is None else None
    return McpJournalLine(toolset=toolset, session=session, opened_at="t0", server=hello, call=call)


def _call(method: str, params=None, result=None) -> McpCall:
    return McpCall(method=method, params=params, result=result)


# -- folding journal lines ----------------------------------------------------------------


def test_lines_fold_into_toolsets_sessions_and_counted_calls() -> None:
    add = _call("tools/call", {"name": "add", "arguments": {"a": 1}}, {"content": []})
    other = McpToolsetIdentity(server=CALC.server, tool_filter=["add"])
    recording = mcp_recording_from_lines(
        [
            _line("s1"),
            _line("s1", call=_call("tools/list", result=LISTING)),
            _line("s1", call=add),
            _line("s1", call=_call("tools/list", result=LISTING)),
            _line("s2"),
            _line("s2", call=_call("tools/list", result=LISTING)),
            _line("s3", toolset=other),
        ]
    )
    assert [t.toolset for t in recording.toolsets] == [CALC, other]
    first, second = recording.toolsets[0].sessions
    assert first.server == McpServerHello(server_info={"name": "calc"})
    assert [(c.method, c.count) for c in first.calls] == [("tools/list", 2), ("tools/call", 1)]
    assert [(c.method, c.count) for c in second.calls] == [("tools/list", 1)]


def test_a_changed_answer_is_kept_after_the_first() -> None:
    changed = {"tools": []}
    recording = mcp_recording_from_lines(
        [
            _line("s", call=_call("tools/list", result=LISTING)),
            _line("s", call=_call("tools/list", result=changed)),
        ]
    )
    assert [c.result for c in recording.toolsets[0].sessions[0].calls] == [LISTING, changed]


def test_merge_joins_sessions_of_the_same_toolset() -> None:
    one = mcp_recording_from_lines([_line("a", call=_call("tools/list", result=LISTING))])
    two = mcp_recording_from_lines([_line("b", call=_call("tools/list", result=LISTING))])
    merged = merge_mcp_recordings([one, None, two])
    assert merged is not None and len(merged.toolsets) == 1
    assert len(merged.toolsets[0].sessions) == 2
    assert merge_mcp_recordings([None, McpRecording()]) is None


# -- serving ------------------------------------------------------------------------------


def test_the_book_serves_answers_in_order_then_repeats_the_last() -> None:
    first = _call("tools/list", result={"tools": ["v1"]}).model_copy(update={"count": 2})
    second = _call("tools/list", result={"tools": ["v2"]})
    book = McpCallBook(
        [
            McpToolsetRecording(
                toolset=CALC,
                sessions=[{"opened_at": "t", "calls": [first, second]}],  # type: ignore[list-item]
            )
        ]
    )
    served = [book.answer("tools/list", None).result["tools"][0] for _ in range(4)]  # type: ignore[union-attr]
    assert served == ["v1", "v1", "v2", "v2"]
    assert book.answer("tools/call", {"name": "add", "arguments": {}}) is None


def test_the_book_matches_params_regardless_of_key_order() -> None:
    call = _call("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, {"content": []})
    book = McpCallBook(
        [McpToolsetRecording(toolset=CALC, sessions=[{"opened_at": "t", "calls": [call]}])]  # type: ignore[list-item]
    )
    assert book.answer("tools/call", {"arguments": {"b": 2, "a": 1}, "name": "add"}) == call
    assert book.answer("tools/call", {"name": "add", "arguments": {"a": 1, "b": 3}}) is None


# -- in the cassette ----------------------------------------------------------------------


def test_a_cassette_with_mcp_round_trips_and_one_without_has_no_section() -> None:
    recording = mcp_recording_from_lines([_line("s", call=_call("tools/list", result=LISTING))])
    cassette = Cassette(name="c", mcp=recording)
    text = dump_cassette(cassette)
    assert parse_cassette(text) == cassette
    assert '"mcp"' not in dump_cassette(Cassette(name="c"))


@pytest.mark.parametrize(
    ("section", "where"),
    [
        pytest.param({"format_version": 2, "toolsets": []}, "mcp.format_version", id="version"),
        pytest.param(
            {"format_version": 1, "toolsets": [{"toolset": {"server": {"transport": "ftp"}}}]},
            "mcp.toolsets[0].toolset.server",
            id="transport",
        ),
        pytest.param(
            {"format_version": 1, "toolsets": [], "extra": 1}, "mcp.extra", id="unknown-key"
        ),
    ],
)
def test_a_broken_mcp_section_is_rejected_naming_the_place(section: object, where: str) -> None:
    text = json.dumps({"format_version": 1, "name": "c", "mcp": section})
    with pytest.raises(InputError) as caught:
        parse_cassette(text, path="x.cassette.json")
    assert caught.value.where is not None and caught.value.where.startswith(where)
    assert "x.cassette.json" in str(caught.value)


# -- identities: redaction ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env", "stored_args", "stored_env", "secrets"),
    [
        pytest.param(
            ["srv.py", "--token", "abcdef123456"],
            {},
            ["srv.py", "--token", REDACTED],
            {},
            {"abcdef123456"},
            id="flag-then-value",
        ),
        pytest.param(
            ["--api-key=abcdef123456", "--verbose"],
            {},
            [f"--api-key={REDACTED}", "--verbose"],
            {},
            {"abcdef123456"},
            id="flag-equals-value",
        ),
        pytest.param(
            ["--db", "postgres://bot:hunter2hunter2@db/x"],
            {},
            ["--db", "postgres://db/x"],
            {},
            {"hunter2hunter2"},
            id="url-userinfo",
        ),
        pytest.param(
            ["srv.py", "--repo", "octo/cat"],
            {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnop", "LOG_LEVEL": "debug"},
            ["srv.py", "--repo", "octo/cat"],
            {"GITHUB_PERSONAL_ACCESS_TOKEN": REDACTED, "LOG_LEVEL": "debug"},
            {"ghp_abcdefghijklmnop"},
            id="env-by-name",
        ),
        pytest.param(
            ["--login", "s3cr3t-from-env-value"],
            {"API_SECRET": "s3cr3t-from-env-value"},
            ["--login", "…(redacted)"],  # masked as a known credential (mask's marker)
            {"API_SECRET": REDACTED},
            {"s3cr3t-from-env-value"},
            id="env-value-repeated-in-args",
        ),
        pytest.param(
            ["--key", "AIzaSyA-1234567890abcdefghijklmnopqrstu"],
            {},
            ["--key", REDACTED],
            {},
            {"AIzaSyA-1234567890abcdefghijklmnopqrstu"},
            id="google-key",
        ),
    ],
)
def test_stdio_identity_keeps_credentials_out(
    args: list[str],
    env: dict[str, str],
    stored_args: list[str],
    stored_env: dict[str, str],
    secrets: set[str],
) -> None:
    server, found = stdio_server_identity("python", args, env, None)
    assert server.args == stored_args
    assert server.env == stored_env
    assert found == secrets


def test_http_identity_drops_credential_headers_and_url_credentials() -> None:
    server, found = http_server_identity(
        "streamable_http",
        "https://me:pa55word-long@mcp.example.com/mcp?api_key=k-0123456789&region=eu",
        {"Authorization": "Bearer tok-0123456789", "X-Api-Key": "xk-0123456789", "X-Shop": "n"},
    )
    assert server.url == f"https://mcp.example.com/mcp?api_key={REDACTED}&region=eu"
    assert server.headers == {"x-shop": "n"}
    assert found == {
        "pa55word-long",
        "k-0123456789",
        "tok-0123456789",
        "xk-0123456789",
        "Bearer tok-0123456789",
    }


# -- identities: "the same toolset" ---------------------------------------------------------


def _stdio(command: str, *args: str, **options: object) -> McpToolsetIdentity:
    return McpToolsetIdentity(server=McpStdioServer(command=command, args=list(args)), **options)


@pytest.mark.parametrize(
    ("recorded", "now", "changes"),
    [
        pytest.param(
            _stdio("/home/me/.venv/bin/python3.11", "/home/me/proj/server.py"),
            _stdio("/usr/bin/python3", "/github/workspace/server.py"),
            [],
            id="another-machine",
        ),
        pytest.param(
            _stdio("npx", "-y", "srv", "--token", REDACTED),
            _stdio("npx", "-y", "srv", "--token", ""),
            [],
            id="credential-absent-in-ci",
        ),
        pytest.param(
            _stdio("python", "calc.py", tool_filter=["add"]),
            _stdio("python", "calc.py", tool_filter=["add", "mul"]),
            ["tool_filter changed: ['add'] -> ['add', 'mul']"],
            id="filter",
        ),
        pytest.param(
            _stdio("python", "calc.py", tool_name_prefix="calc"),
            _stdio("python", "calc.py"),
            ["tool_name_prefix changed: 'calc' -> None"],
            id="prefix",
        ),
        pytest.param(
            _stdio("python", "calc.py"),
            _stdio("python", "weather.py"),
            ["server arguments changed: ['calc.py'] -> ['weather.py']"],
            id="another-server",
        ),
        pytest.param(
            _stdio("uvx", "calc"),
            _stdio("npx", "calc"),
            ["server command changed: uvx -> npx"],
            id="another-program",
        ),
        pytest.param(
            McpToolsetIdentity(server=McpHttpServer(transport="sse", url="http://h/sse")),
            McpToolsetIdentity(server=McpHttpServer(transport="sse", url="http://h2/sse")),
            ["server URL changed: http://h/sse -> http://h2/sse"],
            id="url",
        ),
        pytest.param(
            McpToolsetIdentity(server=McpHttpServer(transport="sse", url="http://h/mcp")),
            McpToolsetIdentity(
                server=McpHttpServer(transport="streamable_http", url="http://h/mcp")
            ),
            ["transport changed: sse -> streamable_http"],
            id="transport",
        ),
    ],
)
def test_toolset_changes(
    recorded: McpToolsetIdentity, now: McpToolsetIdentity, changes: list[str]
) -> None:
    assert toolset_changes(recorded, now) == changes


def test_nearest_prefers_the_same_server() -> None:
    wanted = _stdio("python", "calc.py", tool_filter=["add", "mul"])
    same_server = _stdio("python", "calc.py", tool_filter=["add"])
    other = _stdio("python", "weather.py", tool_filter=["add", "mul"])
    assert nearest_toolset(wanted, [other, same_server]) == same_server
    assert nearest_toolset(wanted, []) is None
