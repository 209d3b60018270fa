"""The secret corpus end to end: 35 credential shapes reach no file rec writes and no output.

A real ``rec start -- python client.py`` records through the real proxy to the stand-in
Gemini API, with ``--upstream http://deploy:PASSWORD@...``. The client types every shape of
the corpus into a prompt (the stand-in echoes it back in a stream split over events), gets
the session's own key back split across two stream events, sends the key base64-encoded
inside ``inlineData``, and calls the API with an ``X-Api-Key`` header and an ``apikey=``
parameter. While it runs it copies rec's journal and state file aside. Then ``rec replay``
runs a program on an EvalSet whose user turns hold the corpus (every turn misses), with
``--junit``, ``--results`` and ``--html``.

Not one value may appear in the cassette, the EvalSet, the journal, the state file, the
JUnit XML, the results JSON, the HTML report, stdout or stderr. The exchanges that carried
a credential in their body are refused, each said once with the rule that would remove
it; the folder stays usable (``rec check`` passes, the clean exchanges replay).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner
from google import genai

import rec
from cassettes._cassette import load_cassette
from cassettes._cassette_writer import save_cassette
from cassettes._evalset import dump_evalset
from rec.cli import cli
from rec.standin.replies import FAKE_API_KEY, Reply, StandinRequest
from tests.factories import make_cassette, make_evalset, make_exchange
from tests.rec_process import rec_argv, rec_environment
from tests.secret_corpus import (
    SHAPES,
    b64,
    base64_carriers,
    base64_spellings,
    hex_carriers,
    percent_carriers,
    secret_part,
)

PASSWORD = "FAKEupstream-password-0123"
HEADER_SECRET = "FAKEheader-secret-0123456789"
QUERY_SECRET = "FAKEquery-secret-0123456789"

CLIENT = textwrap.dedent(
    """
    import json, os, shutil, sys
    import httpx
    from google import genai
    from google.genai import types

    out, snapshot, shapes = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    client = genai.Client()
    model = "gemini-2.0-flash"
    echoed = 0
    for value in shapes:
        text = "".join(c.text or "" for c in client.models.generate_content_stream(
            model=model, contents=f"remember {value} for me"))
        echoed += value in text
    split = "".join(c.text or "" for c in client.models.generate_content_stream(
        model=model, contents="split my key"))
    inline = types.Part.from_bytes(
        data=("GOOGLE_API_KEY=" + os.environ["GOOGLE_API_KEY"] + "\\n").encode(),
        mime_type="text/plain",
    )
    client.models.generate_content(model=model, contents=[inline, "what is in this file?"])
    base = os.environ["GOOGLE_GEMINI_BASE_URL"]
    raw = httpx.post(
        f"{base}/v1beta/models/{model}:generateContent?apikey={sys.argv[5]}",
        headers={"X-Api-Key": sys.argv[4], "x-goog-api-key": os.environ["GOOGLE_API_KEY"]},
        json={"contents": [{"role": "user", "parts": [{"text": "hello raw"}]}]},
    )
    clean = client.models.generate_content(model=model, contents="hello clean").text
    shutil.copytree(os.path.join(out, ".rec"), snapshot)
    print(json.dumps({"echoed": echoed, "split": split, "raw": raw.status_code, "clean": clean}))
    """
)

PROGRAM = textwrap.dedent(
    """
    from google import genai


    async def chat(text, session):
        client = genai.Client()
        reply = await client.aio.models.generate_content(model="gemini-2.0-flash", contents=text)
        return reply.text
    """
)


def _echo(request: StandinRequest) -> Reply | None:
    if request.rpc not in ("generateContent", "streamGenerateContent"):
        return None
    parts = [p for c in request.contents for p in c.get("parts", [])]
    text = " ".join(p["text"] for p in parts if "text" in p)
    if text == "split my key":
        pieces = ("Your key is ", FAKE_API_KEY[:17], FAKE_API_KEY[17:], ", keep it safe.")
        chunks = [
            {"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}, "index": 0}]}
            for t in pieces
        ]
        chunks[-1]["candidates"][0]["finishReason"] = "STOP"
        return Reply(chunks=tuple(chunks))
    return Reply.text(f"You said: {text}", chunks=4)


VALUES = [value for _, value in SHAPES]
FORBIDDEN = sorted(
    {secret_part(v) for v in VALUES}
    | {secret_part(v)[4:20] for v in VALUES}  # no half of one either
    | {FAKE_API_KEY, FAKE_API_KEY[:17], FAKE_API_KEY[17:], b64(FAKE_API_KEY)[:20]}
    | {PASSWORD, HEADER_SECRET, QUERY_SECRET}
)


def _leaks(place: str, text: str) -> list[str]:
    return [f"{place}: {secret[:6]}…" for secret in FORBIDDEN if secret in text]


def _files_leaks(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            found += _leaks(str(path), path.read_text(encoding="utf-8", errors="replace"))
    return found


def _report_flags(reports: Path) -> list[str]:
    """``rec replay``'s flags for every report it writes, each in ``reports``."""
    junit, results, html = reports / "junit.xml", reports / "results", reports / "report.html"
    return ["--junit", str(junit), "--results", str(results), "--html", str(html)]


def test_no_credential_of_the_corpus_reaches_any_file_or_output(
    tmp_path: Path, standin_factory: Any, monkeypatch: Any, loopback_only: Any
) -> None:
    api = standin_factory(_echo)
    out, snapshot = tmp_path / "rec", tmp_path / "snapshot"
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    upstream = api.url.replace("http://", f"http://deploy:{PASSWORD}@")
    proc = subprocess.run(
        rec_argv("start", "--out", str(out), "--name", "corpus", "--upstream", upstream, "--")
        + [sys.executable, str(script), str(out), str(snapshot), json.dumps(VALUES)]
        + [HEADER_SECRET, QUERY_SECRET],
        env=rec_environment(GOOGLE_API_KEY=FAKE_API_KEY),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    # The session was never cut: every answer reached the client whole.
    assert report == {
        "echoed": len(VALUES),
        "split": f"Your key is {FAKE_API_KEY}, keep it safe.",
        "raw": 200,
        "clean": "You said: hello clean",
    }
    assert api.requests[-2].headers["authorization"].startswith("Basic ")  # userinfo sent on
    assert api.requests[-2].query["apikey"] == QUERY_SECRET  # ...and the request as it was

    # Refused: each shape's prompt, the split key, the inline key; said with the fix.
    assert proc.stderr.count("was not recorded") == len(VALUES) + 2, proc.stderr
    assert "--redact-path candidates[*].content.parts[*].text" in proc.stderr
    assert f"rec: {len(VALUES) + 2} exchange(s) were answered but left out" in proc.stderr
    assert f"-> Gemini API http://127.0.0.1:{api.port}," in proc.stderr
    cassette = load_cassette(out / "corpus.cassette.json")
    assert [e.request.url.rsplit("/", 1)[-1] for e in cassette.exchanges] == [
        "gemini-2.0-flash:generateContent",  # the raw call, apikey dropped
        "gemini-2.0-flash:generateContent",
    ]
    assert cassette.upstream == f"http://127.0.0.1:{api.port}"
    assert "x-api-key" not in cassette.exchanges[0].request.headers
    assert (snapshot / "corpus.journal.jsonl").is_file()
    assert list(snapshot.glob("*state*")), sorted(p.name for p in snapshot.iterdir())

    # The folder is usable: rec check passes, and another recording can start there.
    checked = CliRunner().invoke(cli, ["check", str(out)], catch_exceptions=False)
    assert checked.exit_code == 0, checked.output
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    with rec.record(out, name="corpus", upstream=api.url, overwrite=True):
        client = genai.Client()
        client.models.generate_content(model="gemini-2.0-flash", contents="again")
    assert len(load_cassette(out / "corpus.cassette.json").exchanges) == 1

    leaks = _leaks("rec start stdout", "\n".join(proc.stdout.splitlines()[:-1]))
    leaks += _leaks("rec start stderr", proc.stderr)
    leaks += _files_leaks(out) + _files_leaks(snapshot)
    assert leaks == []


def test_no_credential_of_the_corpus_reaches_a_replay_report(
    tmp_path: Path, monkeypatch: Any, loopback_only: Any
) -> None:
    """Item 8: every turn of the EvalSet quotes a credential (a tool URL with ``apikey=`` and
    ``key=AIza...`` among them); each misses, and the miss is in every report."""
    replay_dir = tmp_path / "replay"
    replay_dir.mkdir()
    save_cassette(make_cassette([make_exchange(0)]), replay_dir / "corpus.cassette.json")
    cases = [f"please use {value} now" for value in VALUES]
    cases.append(f"fetch https://api.example.com/r?apikey={QUERY_SECRET}&key={FAKE_API_KEY}")
    evalset = make_evalset(cases, eval_set_id="corpus", app_name="corpus_program")
    (replay_dir / "corpus.evalset.json").write_text(dump_evalset(evalset))
    program = tmp_path / "corpus_program.py"
    program.write_text(PROGRAM)
    reports = tmp_path / "reports"
    result = CliRunner().invoke(
        cli,
        [
            "replay",
            f"{program}:chat",
            str(replay_dir / "corpus.evalset.json"),
            *_report_flags(reports),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 1, result.output  # every turn misses
    assert result.output.count("no recording matches") >= len(cases)
    assert (reports / "junit.xml").is_file() and (reports / "report.html").is_file()
    assert list((reports / "results").glob("*.evalset_result.json"))
    assert _leaks("rec replay output", result.output) + _files_leaks(reports) == []


TOOL_KEY = "FAKEtool-key-0123456789abcdef"


def _tool_api(request: StandinRequest) -> Reply:
    """A tool's API that echoes the key it was given."""
    return Reply.json({"rate": 1.1, "echo": request.headers.get("x-api-key")})


def test_a_tools_key_and_base64_keys_at_every_offset_reach_no_file_or_output(
    tmp_path: Path, standin_factory: Any, monkeypatch: Any, caplog: Any
) -> None:
    """Items 2 and 3: a tool's ``X-Api-Key`` value is a credential everywhere once rec saw it
    sent (the model request carrying the tool's result, the EvalSet, the journal, `rec
    show`), and the session key or the tool key base64-encoded behind a prefix of any
    length (``base64("user:" + KEY)``, offsets 0, 1 and 2) or in hex is refused, and one
    percent-encoded (any of its characters, either case) is replaced."""
    api = standin_factory(_echo, routes={"/lookup": _tool_api})
    out, snapshot = tmp_path / "rec", tmp_path / "snapshot"
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
    percent = percent_carriers(FAKE_API_KEY) + percent_carriers(TOOL_KEY)
    keys = (FAKE_API_KEY, TOOL_KEY)
    carriers = [c for key in keys for c in base64_carriers(key) + hex_carriers(key)] + percent
    with rec.record(out, name="tools", upstream=api.url):
        tool = httpx.get(f"{api.url}/lookup", headers={"X-Api-Key": TOOL_KEY}).json()
        assert tool["echo"] == TOOL_KEY  # the tool got its answer as it was
        client = genai.Client()
        model = "gemini-2.0-flash"
        client.models.generate_content(model=model, contents=f"the tool said {json.dumps(tool)}")
        for carrier in carriers:
            client.models.generate_content(model=model, contents=f"auth {carrier}")
        clean = client.models.generate_content(model=model, contents="hello clean").text
        shutil.copytree(out / ".rec", snapshot)
    assert clean == "You said: hello clean"
    cassette = load_cassette(out / "tools.cassette.json")
    model_exchanges = [e for e in cassette.exchanges if e.origin is None]
    # the tool result (its key replaced), the percent-encoded keys (replaced), the clean one
    assert len(model_exchanges) == 2 + len(percent)
    assert "<redacted>" in json.dumps(model_exchanges[0].request.body.model_dump())
    shown = CliRunner().invoke(cli, ["show", str(out / "tools.cassette.json")])
    assert shown.exit_code == 0, shown.output

    forbidden = [TOOL_KEY, FAKE_API_KEY, *base64_spellings(FAKE_API_KEY), *percent]
    forbidden += base64_spellings(TOOL_KEY) + hex_carriers(FAKE_API_KEY) + hex_carriers(TOOL_KEY)
    leaks = []
    for place, text in [("rec show", shown.output), ("log", caplog.text)] + [
        (str(p), p.read_text(errors="replace"))
        for folder in (out, snapshot)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    ]:
        leaks += [f"{place}: {secret[:6]}…" for secret in forbidden if secret in text]
    assert leaks == []
    assert not list((out / ".rec").glob("*.jsonl")), "capture files left after finalisation"


def test_rec_score_json_masks_like_the_reports(tmp_path: Path) -> None:
    """Item 4: `rec score --json` prints the EvalSetResult masked, as --results writes it."""
    from cassettes._evalset import save_evalset
    from tests.factories import make_invocation

    leaked = "AIzaSyFAKE" + "x" * 29
    expected = make_evalset([[make_invocation("hi", final_text=f"use {leaked}")]])
    actual = make_evalset([[make_invocation("hi", final_text=f"the key is {leaked}")]])
    save_evalset(expected, tmp_path / "expected.evalset.json")
    save_evalset(actual, tmp_path / "actual.evalset.json")
    result = CliRunner().invoke(
        cli,
        ["score", str(tmp_path / "expected.evalset.json"), str(tmp_path / "actual.evalset.json")]
        + ["--json"],
    )
    assert result.exit_code in (0, 1), result.output
    assert '"eval_set_id"' in result.output
    assert leaked not in result.output and "AIza…(redacted)" in result.output


VAULT_HEADER_KEY = "FAKEvault-header-key-0123456789ab"
VAULT_QUERY_KEY = "FAKEvault-query-key-0123456789abc"
ADK_AGENT = textwrap.dedent(
    """
    import os

    import httpx
    from google.adk.agents import LlmAgent

    from tests.agents.inventory.agent import inventory_agent
    from tests.agents.inventory.harness import stdio_connection


    def open_vault() -> dict:
        \"\"\"Open the vault and say what is inside.\"\"\"
        reply = httpx.get(
            os.environ["VAULT_URL"] + "/vault?apikey=" + os.environ["VAULT_QUERY_KEY"],
            headers={"X-Api-Key": os.environ["VAULT_HEADER_KEY"]},
        )
        return reply.json()


    _mcp = inventory_agent(
        stdio_connection(__import__("pathlib").Path(os.environ["VAULT_BIN"]),
                         __import__("pathlib").Path(os.environ["VAULT_MARKER"])),
        tool_filter=("whoami",),
    )
    root_agent = LlmAgent(
        name="vault_agent",
        model="gemini-2.0-flash",
        instruction="You open the vault and say who you are.",
        tools=[open_vault, *_mcp.tools],
    )
    """
)


def _vault(request: StandinRequest) -> Reply:
    """A tool's API that echoes both keys it was given."""
    return Reply.json(
        {
            "inside": "gold",
            "echo": request.headers.get("x-api-key"),
            "query": request.query.get("apikey"),
        }
    )


def test_adk_tool_and_mcp_credentials_reach_no_model_request_nor_report(
    tmp_path: Path, standin_factory: Any, monkeypatch: Any
) -> None:
    """Issue 39: on ADK's own path (google-genai's async client, which sends over aiohttp)
    a tool's ``X-Api-Key``/``apikey=`` values and an MCP stdio server's ``--token`` and
    environment token are masked in the model requests and replies that carry the tools'
    results, hence in the cassette, `rec show` and every report of a replay."""
    from rec.standin.brain import RuleBrain, call, say
    from tests.agents.adk_recording import record_adk
    from tests.agents.inventory.harness import ARG_TOKEN, ENV_TOKEN

    vault = standin_factory(routes={"/vault": _vault})
    agent_dir = tmp_path / "vault_agent"
    agent_dir.mkdir()
    (agent_dir / "__init__.py").write_text("from . import agent\n")
    (agent_dir / "agent.py").write_text(ADK_AGENT)
    env = {
        "VAULT_URL": vault.url,
        "VAULT_QUERY_KEY": VAULT_QUERY_KEY,
        "VAULT_HEADER_KEY": VAULT_HEADER_KEY,
        "VAULT_BIN": str(tmp_path / "bin"),
        "VAULT_MARKER": str(tmp_path / "started.log"),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    agent = importlib.import_module("vault_agent.agent").root_agent
    brain = RuleBrain(
        [
            call("open_vault", {}, when="vault"),
            call("whoami", {}, when="who"),
            say("Done.", when="thanks"),
        ]
    )
    out = tmp_path / "rec"
    record_adk(
        out,
        agent,
        [["open the vault", "who are you?"]],
        responder=brain,
        app_name="vault_agent",
        name="vault",
        capture=True,
    )
    cassette = load_cassette(out / "vault.cassette.json")
    assert any(e.origin == "tool" for e in cassette.exchanges)
    assert cassette.mcp is not None
    text = (out / "vault.cassette.json").read_text()
    assert "gold" in text and "account inventory-bot" in text  # the results were recorded

    runner = CliRunner()
    shown = runner.invoke(cli, ["show", str(out / "vault.cassette.json")])
    assert shown.exit_code == 0, shown.output
    reports = tmp_path / "reports"
    replayed = runner.invoke(
        cli,
        [
            "replay",
            str(agent_dir),
            str(out),
            *_report_flags(reports),
        ],
    )
    assert (reports / "report.html").is_file(), replayed.output
    secrets = [VAULT_HEADER_KEY, VAULT_QUERY_KEY, ARG_TOKEN, ENV_TOKEN]
    places = [("rec show", shown.output), ("rec replay", replayed.output)] + [
        (str(p), p.read_text(errors="replace"))
        for folder in (out, reports)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    ]
    leaks = [f"{place}: {s[:12]}…" for place, text in places for s in secrets if s in text]
    assert leaks == []


def test_two_recordings_at_once_keep_their_credentials_and_tool_calls_apart(
    tmp_path: Path, standin_factory: Any
) -> None:
    """Issue 39: two in-process recordings running at the same time in two threads (each
    its own event loop, tools over httpx and aiohttp, the model over google-genai's async
    client) each capture their own tool calls only, and each one's key is masked in its
    own files."""
    import asyncio
    import threading

    import aiohttp
    from google.genai import types

    api = standin_factory(_echo, routes={"/lookup": _tool_api})
    keys = {"north": "FAKEnorth-tool-key-0123456789ab", "south": "FAKEsouth-tool-key-0123456789ab"}
    both_recording = threading.Barrier(2, timeout=300)
    failures: list[BaseException] = []

    async def agent(name: str, url: str) -> None:
        headers = {"X-Api-Key": keys[name]}
        for _ in range(3):  # interleaved with the other recording's calls
            async with httpx.AsyncClient() as http:
                sent = await http.get(f"{api.url}/lookup?by=httpx-{name}", headers=headers)
                first = sent.json()
            async with aiohttp.ClientSession() as session:
                reply = await session.get(f"{api.url}/lookup?by=aiohttp-{name}", headers=headers)
                second = await reply.json()
            options = types.HttpOptions(base_url=url)
            client = genai.Client(api_key=FAKE_API_KEY, http_options=options)
            said = json.dumps([first, second])
            await client.aio.models.generate_content(
                model="gemini-2.0-flash", contents=f"the tools said {said}"
            )
            await asyncio.sleep(0.01)

    def record(name: str) -> None:
        try:
            with rec.record(tmp_path / name, name=name, upstream=api.url, point_clients=False) as r:
                both_recording.wait()
                asyncio.run(agent(name, r.url))
                both_recording.wait()
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)
            both_recording.abort()

    threads = [threading.Thread(target=record, args=(name,)) for name in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert failures == []
    for name, other in (("north", "south"), ("south", "north")):
        cassette = load_cassette(tmp_path / name / f"{name}.cassette.json")
        tools = [e.request.url for e in cassette.exchanges if e.origin == "tool"]
        assert sorted(tools) == sorted(
            [f"{api.url}/lookup?by=httpx-{name}", f"{api.url}/lookup?by=aiohttp-{name}"] * 3
        )
        assert len([e for e in cassette.exchanges if e.origin is None]) == 3
        for path in (tmp_path / name).rglob("*"):
            if path.is_file():
                text = path.read_text(errors="replace")
                assert keys[name] not in text and keys[other] not in text, path
                assert f"-{other}" not in text, path  # nothing of the other's tool calls


def test_a_key_split_across_anthropic_stream_deltas_is_refused(
    tmp_path: Path, standin_factory: Any, monkeypatch: Any, caplog: Any
) -> None:
    """Issue 39: Anthropic's event stream (``event:`` and ``data:`` lines, each text piece a
    ``content_block_delta``) with the key split over two deltas is refused as a Gemini or
    OpenAI stream is, so neither the cassette nor `rec show` holds it."""
    api = standin_factory(_echo)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    from cassettes._redaction import RedactionRules

    out, streams = tmp_path / "rec", []
    with rec.record(out, name="claude", upstream=api.url) as recording:
        for text in ("split my key", "hello clean"):
            with httpx.stream(
                "POST",
                f"{recording.url}/anthropic/v1/messages",
                headers={"x-api-key": "sk-ant-api03-FAKEclient0123456789abcdef"},
                json={
                    "model": "claude-sonnet-4-5",
                    "max_tokens": 64,
                    "stream": True,
                    "messages": [{"role": "user", "content": text}],
                },
            ) as reply:
                streams.append(reply.read().decode())
    assert FAKE_API_KEY[:17] in streams[0] and FAKE_API_KEY[17:] in streams[0]  # answered
    assert "was not recorded" in caplog.text
    cassette_path = out / "claude.cassette.json"
    cassette = load_cassette(cassette_path)
    assert len(cassette.exchanges) == 1  # the clean one
    shown = CliRunner().invoke(cli, ["show", str(cassette_path)])
    assert shown.exit_code == 0, shown.output
    for place, text in [("cassette", cassette_path.read_text()), ("rec show", shown.output)]:
        assert FAKE_API_KEY[:17] not in text and FAKE_API_KEY[17:] not in text, place
    assert "--redact-path delta.text" in caplog.text
    # The fix the message gives records the exchange, its deltas redacted.
    rules = RedactionRules(json_paths=("delta.text",))
    with rec.record(out, name="fixed", upstream=api.url, redaction=rules) as recording:
        httpx.post(
            f"{recording.url}/anthropic/v1/messages",
            headers={"x-api-key": "sk-ant-api03-FAKEclient0123456789abcdef"},
            json={"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True}
            | {"messages": [{"role": "user", "content": "split my key"}]},
        )
    fixed = (out / "fixed.cassette.json").read_text()
    assert len(load_cassette(out / "fixed.cassette.json").exchanges) == 1
    assert FAKE_API_KEY[:17] not in fixed and FAKE_API_KEY[17:] not in fixed
    assert "content_block_delta" in fixed
