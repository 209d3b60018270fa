"""Regenerate every bundled recording against rec's stand-in model (no key, no network).

    python examples/record.py                    # everything
    python examples/record.py home_assistant     # or genai_afc, production_bug, bookshop,
                                                 # litellm_weather

Run it from a checkout of rec (it uses rec's ``standin`` package) with rec and google-adk
installed. It starts the stand-in Gemini API as a process with the example's rules
(``examples/standin_server.py``) and records exactly what a person would record by hand:

- ``home_assistant``: each ``home_assistant/sessions/NAME.json`` (initial state + the
  user's messages) through ``rec start -- adk run --replay NAME.json``. rec's capture
  plugin writes the session's initial state into the EvalSet's ``session_input.state``
  (the instruction reads ``{home_name}`` from it); the script checks it is the file's
  (plus the ``_time`` that ``adk run --replay`` adds).
  Then ``home_assistant/simulated/``: ``adk eval`` of its conversation_scenario case
  (ADK's user simulator, played by the stand-in) through ``rec start -- adk eval``.
- ``genai_afc``: one conversation with ``thermostat_helper.py`` through ``rec start``.
- ``production_bug``: the "production" session (the buggy agent served by
  ``adk api_server``, exported with GET /apps/.../sessions/ID), ``rec import`` of it, the
  hand correction of its expectation (:func:`correct_expectation`, documented in
  production_bug/README.md), then the model traffic of the buggy and of the fixed agent
  recorded with ``rec replay ... --mode auto``.
- ``litellm_weather``: ``litellm_weather/sessions/trip.json`` through ``rec start -- adk
  run --replay``, with ``OPENAI_BASE_URL`` at the stand-in's OpenAI endpoint (the agent is
  on ``LiteLlm("openai/gpt-4o-mini")``; rec forwards to the base URL it finds set).
- ``bookshop``: two conversations with the bookshop agent served by ``adk api_server``
  under ``rec start`` (which attaches rec's ADK capture plugin, so the MCP sessions with
  ``bookshop_server.py`` are recorded too), the server given a made-up credential.

To record against the real Gemini API instead, see examples/README.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx

EXAMPLES = Path(__file__).resolve().parent
ROOT = EXAMPLES.parent
BIN = Path(sys.executable).parent
FAKE_KEY = "AIzaFAKE-standin-key-000000000000000000"
"""The stand-in wants *a* key; this one is fake (and rec redacts keys anyway)."""


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GOOGLE_", "GEMINI_")) and "PROXY" not in k.upper()
    }
    env.update(GOOGLE_API_KEY=FAKE_KEY, NO_PROXY="127.0.0.1,localhost", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(EXAMPLES)])
    env.update(extra)
    return env


@contextlib.contextmanager
def standin(brain: str, *routes: str) -> Iterator[str]:
    """Run examples/standin_server.py; yield its URL."""
    args = [sys.executable, str(EXAMPLES / "standin_server.py"), "--brain", brain]
    for route in routes:
        args += ["--routes", route]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=_env(), cwd=ROOT)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the stand-in did not start (exit {process.wait()})")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def rec(*args: str, env: dict[str, str], check: bool = True) -> int:
    """Run the ``rec`` CLI (the one installed beside this Python)."""
    print("$ rec " + " ".join(args), flush=True)
    code = subprocess.run([str(BIN / "rec"), *args], env=env, cwd=ROOT).returncode
    if check and code != 0:
        raise SystemExit(f"rec {args[0]} exited {code}")
    return code


def _clear(folder: Path, name: str) -> None:
    for suffix in (".cassette.json", ".evalset.json"):
        (folder / f"{name}{suffix}").unlink(missing_ok=True)


def _tidy(folder: Path) -> None:
    """Remove the empty lock files rec leaves beside recordings (they are not committed)."""
    for lock in [*folder.glob(".*.lock"), *folder.glob(".rec/.*.lock")]:
        lock.unlink()
    with contextlib.suppress(OSError):
        (folder / ".rec").rmdir()


def record_home_assistant() -> None:
    folder = EXAMPLES / "home_assistant"
    out = folder / "recordings"
    rules = "home_assistant.standin_rules"
    with standin(f"{rules}:home_brain", f"{rules}:weather_routes") as url:
        env = _env(HOME_WEATHER_URL=f"{url}/weather")
        for session in sorted((folder / "sessions").glob("*.json")):
            name = session.stem
            _clear(out, name)
            rec(
                "start",
                "--out",
                str(out),
                "--name",
                name,
                "--app-name",
                "home_assistant",
                "--upstream",
                url,
                "--quiet",
                "--",
                str(BIN / "adk"),
                "run",
                "--in_memory",
                "--replay",
                str(session),
                str(folder),
                env=env,
            )
            # rec's capture plugin on adk run's Runner records the initial state itself:
            # check it, and leave the eval set as rec wrote it. `adk run --replay` adds
            # `_time` (when it started) to the file's state, so the session holds it too.
            state = json.loads(session.read_text())["state"]
            evalset = json.loads((out / f"{name}.evalset.json").read_text())
            for case in evalset["eval_cases"]:
                got = dict((case.get("session_input") or {}).get("state") or {})
                if not isinstance(got.pop("_time", None), str) or got != state:
                    sys.exit(f"{name}: recorded session_input.state {got!r}, expected {state!r}")
    _tidy(out)
    record_simulated_user()


def record_simulated_user() -> None:
    """``adk eval`` of a conversation_scenario case (ADK's user simulator) under ``rec start``.

    The eval set and its config (``user_simulator_config``) are the ones in
    ``home_assistant/simulated/``: rec writes the scenario case back beside the cassette,
    which holds the agent's, the simulated user's and the judge's model calls.
    """
    folder = EXAMPLES / "home_assistant"
    out = folder / "simulated"
    rules = "home_assistant.standin_rules"
    with standin(f"{rules}:home_brain", f"{rules}:weather_routes") as url:
        env = _env(HOME_WEATHER_URL=f"{url}/weather")
        rec(
            "start",
            "--out",
            str(out),
            "--name",
            "simulated_evening",
            "--upstream",
            url,
            "--quiet",
            "--overwrite",  # the eval set is adk eval's input too: it is replaced, not cleared
            "--",
            str(BIN / "adk"),
            "eval",
            str(folder),
            str(out / "simulated_evening.evalset.json"),
            "--config_file_path",
            str(out / "test_config.json"),
            env=env,
        )
    shutil.rmtree(folder / ".adk", ignore_errors=True)  # adk eval's own result history
    (out / ".rec" / "simulated_evening.adk.jsonl").unlink()  # in the EvalSet now
    _tidy(out)


def record_genai_afc() -> None:
    folder = EXAMPLES / "genai_afc"
    out = folder / "recordings"
    with standin("genai_afc.standin_rules:afc_brain") as url:
        _clear(out, "fahrenheit")
        rec(
            "start",
            "--out",
            str(out),
            "--name",
            "fahrenheit",
            "--app-name",
            "thermostat_helper",
            "--upstream",
            url,
            "--quiet",
            "--",
            sys.executable,
            str(folder / "thermostat_helper.py"),
            "How warm is the kitchen?",
            "And the bedroom, in Fahrenheit please?",
            env=_env(),
        )
    _tidy(out)


def record_litellm_weather() -> None:
    folder = EXAMPLES / "litellm_weather"
    out = folder / "recordings"
    with standin("litellm_weather.standin_rules:weather_brain") as url:
        # LiteLLM talks OpenAI chat completions to OPENAI_BASE_URL: the stand-in's /v1.
        env = _env(OPENAI_BASE_URL=f"{url}/v1", OPENAI_API_KEY="rec-example-fake-openai-key")
        _clear(out, "trip")
        rec(
            "start",
            "--out",
            str(out),
            "--name",
            "trip",
            "--app-name",
            "litellm_weather",
            "--quiet",
            "--",
            str(BIN / "adk"),
            "run",
            "--in_memory",
            "--replay",
            str(folder / "sessions" / "trip.json"),
            str(folder),
            env=env,
        )
    (out / ".rec" / "trip.adk.jsonl").unlink()  # the plugin's session log: in the EvalSet now
    _tidy(out)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


PRODUCTION_STATE = {"home_name": "Maple House"}
PRODUCTION_TURNS = (
    "What's the temperature in the living room?",
    "Please set the living room to 22 degrees",
)


@contextlib.contextmanager
def adk_api_server(
    agents: Path, env: dict[str, str], *, prefix: Sequence[str] = ()
) -> Iterator[str]:
    """Serve the agents under ``agents`` with ``adk api_server`` (after ``prefix``, e.g. a
    ``rec start ... --``); yield its base URL once it answers."""
    port = _free_port()
    server = subprocess.Popen(
        [
            *prefix,
            str(BIN / "adk"),
            "api_server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--session_service_uri",
            "memory://",
            "--log_level",
            "error",
            str(agents),
        ],
        env=env,
        cwd=ROOT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=60, trust_env=False) as client:
            for _ in range(600):
                try:
                    client.get("/list-apps").raise_for_status()
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=60)


def converse(base: str, app: str, user: str, session: str, turns: tuple[str, ...]) -> None:
    """Create ``session`` on an ``adk api_server`` and send it ``turns`` through /run."""
    path = f"/apps/{app}/users/{user}/sessions/{session}"
    with httpx.Client(base_url=base, timeout=120, trust_env=False) as client:
        client.post(path, json={}).raise_for_status()
        for text in turns:
            client.post(
                "/run",
                json={
                    "app_name": app,
                    "user_id": user,
                    "session_id": session,
                    "new_message": {"role": "user", "parts": [{"text": text}]},
                },
            ).raise_for_status()


def export_production_session(url: str, target: Path) -> None:
    """Serve the buggy agent with ``adk api_server``, hold the conversation, export the session."""
    session_path = "/apps/climate_agent/users/user-4821/sessions/7f3c2a9e-prod"
    before_fix = EXAMPLES / "production_bug" / "before_fix"
    with adk_api_server(before_fix, _env(GOOGLE_GEMINI_BASE_URL=url)) as base:
        with httpx.Client(base_url=base, timeout=60, trust_env=False) as client:
            client.post(session_path, json=PRODUCTION_STATE).raise_for_status()
            for text in PRODUCTION_TURNS:
                client.post(
                    "/run",
                    json={
                        "app_name": "climate_agent",
                        "user_id": "user-4821",
                        "session_id": "7f3c2a9e-prod",
                        "new_message": {"role": "user", "parts": [{"text": text}]},
                    },
                ).raise_for_status()
            exported = client.get(session_path).raise_for_status().json()
    target.write_text(json.dumps(exported, indent=2, ensure_ascii=False) + "\n")


def correct_expectation(evalset_path: Path) -> None:
    """The hand edit of production_bug/README.md, applied to a fresh ``rec import``.

    In invocation 2 (``eval_cases[0].conversation[1]``): the ``set_thermostat`` call's
    ``celsius`` 71.6 -> 22; the tool response recorded for the wrong call (an error) is
    deleted, so mock-mode tools answer the corrected call from the recording; the final
    response becomes what the user should have been told.
    """
    evalset = json.loads(evalset_path.read_text())
    invocation = evalset["eval_cases"][0]["conversation"][1]
    events = invocation["intermediate_data"]["invocation_events"]
    for event in events:
        parts = event.get("content", {}).get("parts", [])
        for part in parts:
            call = part.get("function_call")
            if call and call["name"] == "set_thermostat":
                call["args"]["celsius"] = 22
        parts[:] = [
            p for p in parts if (p.get("function_response") or {}).get("name") != "set_thermostat"
        ]
    events[:] = [e for e in events if e.get("content", {}).get("parts")]
    invocation["final_response"]["parts"] = [
        {"text": "The living room was at 20.5 °C; I set it to 22 °C."}
    ]
    evalset_path.write_text(json.dumps(evalset, indent=2, ensure_ascii=False) + "\n")


def record_production_bug() -> None:
    folder = EXAMPLES / "production_bug"
    evals = folder / "evals"
    export = folder / "production_session.json"
    with standin("home_assistant.standin_rules:home_brain") as url:
        export_production_session(url, export)
        _clear(evals, "thermostat_bug")
        rec("import", str(export), "--out", str(evals), "--name", "thermostat_bug", env=_env())
        evalset = evals / "thermostat_bug.evalset.json"
        correct_expectation(evalset)
        for variant, want in (("before_fix", 1), ("after_fix", 0)):
            code = rec(
                "replay",
                str(folder / variant / "climate_agent"),
                str(evalset),
                "--mode",
                "auto",
                "--upstream",
                url,
                env=_env(),
                check=False,
            )
            if code != want:
                raise SystemExit(f"{variant}: rec replay --mode auto exited {code}, not {want}")
    _tidy(evals)


BOOKSHOP_TOKEN = "bks-demo-credential-not-real-0001"
"""The made-up credential the bookshop's MCP server is given while recording (redacted)."""
BOOKSHOP_SESSIONS = {
    "herbert": (
        "Do you have anything by Frank Herbert?",
        "How many copies of Dune are in stock?",
        "Please order 2 of them for me",
    ),
    "emma": ("I'm looking for Emma", "Are there copies of Emma in stock?"),
}


def record_bookshop() -> None:
    """``rec start -- adk api_server examples``, two conversations with the bookshop agent."""
    out = EXAMPLES / "bookshop" / "recordings"
    with standin("bookshop.standin_rules:bookshop_brain") as url:
        _clear(out, "orders")
        prefix = [
            *(str(BIN / "rec"), "start", "--out", str(out), "--name", "orders"),
            *("--app-name", "bookshop", "--upstream", url, "--quiet", "--"),
        ]
        print("$ " + " ".join(prefix) + " adk api_server examples", flush=True)
        env = _env(BOOKSHOP_API_TOKEN=BOOKSHOP_TOKEN)
        with adk_api_server(EXAMPLES, env, prefix=prefix) as base:
            for session, turns in BOOKSHOP_SESSIONS.items():
                converse(base, "bookshop", "reader", session, turns)
    (out / ".rec" / "orders.adk.jsonl").unlink()  # the plugin's session log: in the EvalSet now
    _tidy(out)


TARGETS = {
    "home_assistant": record_home_assistant,
    "genai_afc": record_genai_afc,
    "production_bug": record_production_bug,
    "bookshop": record_bookshop,
    "litellm_weather": record_litellm_weather,
}


def main(argv: list[str] | None = None) -> None:
    names = list(sys.argv[1:] if argv is None else argv) or list(TARGETS)
    for name in names:
        if name not in TARGETS:
            raise SystemExit(f"unknown example {name!r}; choose from {', '.join(TARGETS)}")
        TARGETS[name]()


if __name__ == "__main__":
    main()
