"""Parts the fault-injection tests share: `rec start` as a real process, clients that remember
which exchanges they received in full, and growing a full tmpfs."""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from cassettes._cassette import Cassette, JsonBody
from rec.standin.replies import FAKE_API_KEY, GENERATE_RPCS, Reply, StandinRequest
from tests.rec_process import rec_argv, rec_environment, start_argv

UNARY = "/v1beta/models/gemini-2.0-flash:generateContent"
STREAM = "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"


def start_recorder(
    out: Path, name: str, upstream: str, *, extra: tuple[str, ...] = (), **popen: object
) -> tuple[subprocess.Popen[str], str]:
    """`rec start --out OUT --name NAME [EXTRA...]` without a command; returns the process
    and its URL."""
    process = subprocess.Popen(
        start_argv(out, name, upstream, flags=("--quiet", *extra)),
        env=rec_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,  # type: ignore[arg-type]
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("export GOOGLE_GEMINI_BASE_URL="):
        process.kill()
        raise AssertionError(f"rec start did not start: {line!r} {process.communicate()[1]}")
    return process, line.split("=", 1)[1]


def prompts_in(cassette: Cassette) -> list[str]:
    """The user text of every recorded request (each test prompt is unique)."""
    found = []
    for exchange in cassette.exchanges:
        body = exchange.request.body
        if isinstance(body, JsonBody) and isinstance(body.value, dict):
            for content in body.value.get("contents") or []:
                for part in content.get("parts") or []:
                    if "text" in part:
                        found.append(part["text"])
    return found


def client_and_turn(prompt: str) -> tuple[str, int]:
    """A :class:`Traffic` prompt (``PREFIX-cC-I``) -> its client and turn, (``cC``, I)."""
    _, client, turn = prompt.rsplit("-", 2)
    return client, int(turn)


@dataclass
class Traffic:
    """Clients sending unique prompts (unary and streamed) until stopped.

    ``completed`` holds every prompt whose response arrived in full: rec promises that
    each of those is in the recording, whatever happens to the recorder afterwards, but for
    the lines still on their way behind the last responses
    (:func:`tests.journaled.lost_to_a_kill`).
    """

    url: str
    prefix: str
    clients: int = 2
    completed: set[str] = field(default_factory=set)
    failed: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Traffic:
        for n in range(self.clients):
            thread = threading.Thread(target=self._run, args=(n,), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def wait_for(self, count: int, *, timeout: float = 120) -> None:
        """Wait until ``count`` exchanges completed (a generous bound, not a timing test)."""
        deadline = time.monotonic() + timeout
        while len(self.completed) < count and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def _run(self, client_number: int) -> None:
        with httpx.Client(trust_env=False, timeout=httpx.Timeout(30, connect=10)) as client:
            i = 0
            while not self._stop.is_set():
                prompt = f"{self.prefix}-c{client_number}-{i}"
                i += 1
                path = STREAM if i % 3 == 0 else UNARY
                body = {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}
                try:
                    with client.stream(
                        "POST", self.url + path, json=body, headers={"x-goog-api-key": FAKE_API_KEY}
                    ) as response:
                        data = response.read()
                    if response.status_code == 200 and prompt.encode() in data:
                        with self._lock:
                            self.completed.add(prompt)
                except httpx.HTTPError:
                    with self._lock:
                        self.failed += 1
                    if self._stop.wait(0.05):
                        return


def grow_disk(mountpoint: Path, size: str = "16m") -> None:
    """Make room on the tmpfs (the user freeing space)."""
    subprocess.run(["mount", "-o", f"remount,size={size}", str(mountpoint)], check=True)


def echo(request: StandinRequest) -> Reply | None:
    """The model: answers each prompt with itself, streamed in three events when asked."""
    if request.rpc not in GENERATE_RPCS:
        return None
    text = request.contents[-1]["parts"][0]["text"]
    return Reply.text(f"echo {text} done", chunks=3, delay_s=0.005)


def rec_stop(out: Path) -> subprocess.CompletedProcess[str]:
    """`rec stop --out OUT` as a user runs it."""
    return subprocess.run(
        rec_argv("stop", "--out", str(out)),
        env=rec_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
