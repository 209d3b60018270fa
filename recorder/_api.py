"""In-process recording for tests and scripts: :func:`record`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from cassettes._redaction import RedactionRules
from cassettes._secret_shapes import credential_scope
from recorder._recorder import Recorder
from recorder._tool_traffic import capturing_tool_traffic
from recorder._traffic import DEFAULT_UPSTREAM, Upstreams, pointing_clients_at

__all__ = ["record"]


@contextlib.contextmanager
def record(
    out_dir: str | Path,
    *,
    name: str = "recording",
    upstream: str = DEFAULT_UPSTREAM,
    vertex_upstream: str | None = None,
    redaction: RedactionRules | None = None,
    point_clients: bool = True,
    write_evalset: bool = True,
    app_name: str | None = None,
    capture_tools: bool = True,
    overwrite: bool = False,
) -> Iterator[Recorder]:
    """Record model traffic of this process into ``out_dir/name.cassette.json``.

    Runs the recording proxy on 127.0.0.1 (a free port) in a background thread and, while
    the block runs, points new google-genai clients at it (``GOOGLE_GEMINI_BASE_URL``,
    ``GOOGLE_VERTEX_BASE_URL`` and google-genai's default base URLs; restored afterwards).
    When the block ends the cassette and the EvalSet are written atomically.

    With ``capture_tools`` (the default) the HTTP calls this process's tools make with
    httpx to anything but the proxy are sent for real and recorded too (redacted), after
    the model exchanges and marked ``origin: "tool"``, so that ``rec replay --live-tools``
    can serve them (see ``recorder._tool_traffic``).

    Example::

        with rec.record("recordings", name="weather") as recording:
            client = genai.Client()
            client.models.generate_content(model="gemini-2.0-flash", contents="Hi")
        recording.result.cassette_path   # recordings/weather.cassette.json

    A name that already holds a recording is refused unless ``overwrite`` is true.

    Raises:
        InputError: bad name or upstream, a recorder already running on that name, or a
            recording of that name exists and ``overwrite`` is false.
    """
    session = Recorder(
        out_dir,
        name=name,
        upstreams=Upstreams(gemini=upstream, vertex=vertex_upstream),
        redaction=redaction,
        write_evalset=write_evalset,
        app_name=app_name,
        overwrite=overwrite,
    )
    with _recording(
        session, redaction=redaction, capture_tools=capture_tools, point_clients=point_clients
    ):
        yield session


@contextlib.contextmanager
def _recording(
    session: Recorder,
    *,
    redaction: RedactionRules | None,
    capture_tools: bool,
    point_clients: bool,
) -> Iterator[None]:
    """Run ``session`` for the block, capturing this process's tools' calls (redacted with
    ``redaction``) and pointing its clients at the proxy, as asked."""
    # One registry of credentials per recording: what this block's tools, MCP servers and
    # proxy learn is masked in its files, and told to no other recording's proxy.
    with credential_scope(), session.running_in_thread(), contextlib.ExitStack() as stack:
        if capture_tools:
            own = [session.url]
            stack.enter_context(
                capturing_tool_traffic(session.paths.tools, own=own, redaction=redaction)
            )
        if point_clients:
            stack.enter_context(pointing_clients_at(session.url))
        yield
