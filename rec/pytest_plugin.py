"""rec's pytest plugin (``pytest11``): ``--rec-mode``, the ``rec`` marker and fixture.

Use the ``rec`` fixture in any test whose code calls Gemini through google-genai or ADK::

    @pytest.mark.rec(recording="weather")
    def test_weather(rec):
        client = genai.Client()
        assert "sunny" in client.models.generate_content(model=..., contents="...").text

Recordings live in ``<test dir>/recordings/<test module>/<name>.cassette.json`` (override
with the ``rec_recordings_dir`` / ``rec_recording_name`` fixtures). Modes:

- ``replay`` (default): serve the recording; a request with no recording fails the test
  with the divergence (fail closed); a missing recording fails the test. No credentials.
- ``record``: forward to the real API (``upstream``) and (re)write the recording.
- ``auto``: replay what is recorded, record what is missing.
- ``live``: nothing is recorded or replayed.

Which mode wins: the ``--rec-mode`` command-line option, then the marker's ``mode``, then
the ``rec_config`` fixture's ``"mode"``, then ``replay``. ``--rec-mode`` also sets
``REC_MODE`` for :class:`rec.AgentEvaluator`, for each test only (through
``monkeypatch``: the process environment is restored after the test); so do
``--rec-streaming`` (``REC_STREAMING``: run the agents with streaming or without, instead
of as each case was recorded) and ``--rec-no-freeze-time`` (``REC_FREEZE_TIME=0``: the
real clock instead of the recording's), which only ``AgentEvaluator`` reads.

Safe under ``pytest -n auto``: replay only reads; record and auto write the cassette
atomically (temp file + rename) under a lock file, so parallel workers never see a torn
file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from typing_extensions import assert_never

if TYPE_CHECKING:
    from cassettes._errors import ReplayMiss
    from cassettes._record_mode import RecordMode
    from replayer._replay_channel import ReplayChannel

# rec's packages are imported inside the hooks and fixtures that need them: this module is
# loaded by every pytest run where rec is installed, and must not slow them down.

MARKER_KEYS = ("mode", "recording", "upstream")
"""Arguments ``@pytest.mark.rec(...)`` accepts."""

CONFIG_KEYS = ("mode", "upstream")
"""Keys the ``rec_config`` fixture's dict may hold (defaults for the marker's)."""

_CALL_FAILED = pytest.StashKey[bool]()
"""Set on a test item once its call phase has run: whether the test body failed."""


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Notes whether the test body failed, so the ``rec`` fixture reports a miss once."""
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rec", "rec: record and replay model traffic")
    group.addoption(
        "--rec-mode",
        action="store",
        default=None,
        metavar="MODE",
        help="replay (default: fail closed on a missing recording), record, auto "
        "(replay hits, record misses) or live (rec.RecordMode).",
    )
    group.addoption(
        "--rec-streaming",
        action="store",
        default=None,
        choices=("sse", "none"),
        help="AgentEvaluator: run the agents with streaming (sse) or without (none); "
        "default: each case as it was recorded.",
    )
    group.addoption(
        "--rec-no-freeze-time",
        action="store_true",
        default=False,
        help="AgentEvaluator: run the cases on the real clock, not the recording's.",
    )
    group.addoption(
        "--rec-html",
        action="store",
        default=None,
        metavar="FILE",
        help="Write one HTML report (as `rec replay --html`) of every AgentEvaluator "
        "evaluation in the run.",
    )


def _html_parts(config: pytest.Config) -> Path | None:
    """Where AgentEvaluator leaves its reports for ``--rec-html`` (beside the report)."""
    html = config.getoption("--rec-html", default=None)
    if not html:
        return None
    target = Path(html).absolute()
    return target.with_name(f".{target.name}.parts")


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "rec(recording=None, mode=None): record or replay this test's model traffic"
    )
    given = config.getoption("--rec-mode", default=None)
    if given is not None:
        _parse_mode(given, "--rec-mode")
    parts = _html_parts(config)
    if parts is not None and not _is_xdist_worker(config):
        import shutil

        shutil.rmtree(parts, ignore_errors=True)  # a run that died left its parts


def pytest_sessionfinish(session: pytest.Session) -> None:
    """``--rec-html``: the controller renders every report the evaluations left."""
    parts = _html_parts(session.config)
    if parts is None or _is_xdist_worker(session.config):
        return
    import shutil

    from replayer._reports.html import write_html
    from replayer._reports.set_report import SetReport

    files = sorted(parts.glob("*.json")) if parts.is_dir() else []
    reports = [SetReport.model_validate_json(file.read_bytes()) for file in files]
    write_html(reports, session.config.getoption("--rec-html"))
    shutil.rmtree(parts, ignore_errors=True)


@pytest.fixture(autouse=True)
def _rec_html_environment(request: pytest.FixtureRequest) -> Iterator[None]:
    """``--rec-html``: tells ``AgentEvaluator`` where to leave its reports; restored."""
    parts = _html_parts(request.config)
    if parts is None:
        yield
        return
    from replayer._agent_evaluator import HTML_PARTS_VARIABLE

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(HTML_PARTS_VARIABLE, str(parts))
        yield


@pytest.fixture(autouse=True)
def _rec_mode_environment(request: pytest.FixtureRequest) -> Iterator[None]:
    """``--rec-mode``, ``--rec-streaming`` and ``--rec-no-freeze-time`` as ``REC_MODE``,
    ``REC_STREAMING`` and ``REC_FREEZE_TIME`` for this test (``AgentEvaluator`` reads them);
    restored after it."""
    config = request.config
    wanted = {
        "REC_MODE": config.getoption("--rec-mode", default=None),
        "REC_STREAMING": config.getoption("--rec-streaming", default=None),
        "REC_FREEZE_TIME": "0" if config.getoption("--rec-no-freeze-time", default=False) else None,
    }
    if not any(wanted.values()):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        for name, value in wanted.items():
            if value:
                patch.setenv(name, str(value))
        yield


@dataclass
class RecSession:
    """What the ``rec`` fixture gives the test."""

    mode: RecordMode
    """The mode in force (see the module docstring)."""
    cassette: Path
    """The recording file (read in replay, written in record/auto)."""
    url: str | None = None
    """The loopback proxy google-genai is pointed at (None in live mode)."""
    channel: ReplayChannel | None = None
    """What the replay served and missed (replay mode)."""

    @property
    def misses(self) -> list[ReplayMiss]:
        """Replay misses so far (each also fails the test when it ends)."""
        return self.channel.misses if self.channel is not None else []


@pytest.fixture
def rec_config() -> dict[str, Any]:
    """Defaults for the ``rec`` fixture (override in a conftest): ``mode``, ``upstream``."""
    return {}


@pytest.fixture
def rec_recordings_dir(request: pytest.FixtureRequest) -> Path:
    """Where this test module's recordings live: ``<test dir>/recordings/<module name>/``."""
    module = Path(str(request.node.fspath))
    return module.parent / "recordings" / module.stem


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@pytest.fixture
def rec_recording_name(request: pytest.FixtureRequest) -> str:
    """This test's recording name: the test name with unsafe characters replaced."""
    name = request.node.name
    for prefix in ("test_",):
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix) :]
    return _UNSAFE.sub("-", name).strip("-.") or "recording"


def _marker_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("rec")
    if marker is None:
        return {}
    if marker.args:
        raise pytest.UsageError(
            f"{request.node.nodeid}: @pytest.mark.rec takes keyword arguments only "
            f"({', '.join(MARKER_KEYS)})"
        )
    unknown = sorted(set(marker.kwargs) - set(MARKER_KEYS))
    if unknown:
        raise pytest.UsageError(
            f"{request.node.nodeid}: unknown @pytest.mark.rec argument(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(MARKER_KEYS)}"
        )
    options = dict(marker.kwargs)
    if options.get("mode") is not None:
        options["mode"] = _parse_mode(options["mode"], f"{request.node.nodeid}: @pytest.mark.rec")
    return options


def _parse_mode(value: Any, where: str) -> RecordMode:
    from cassettes._errors import InputError
    from cassettes._record_mode import RecordMode

    try:
        return RecordMode.parse(str(value), source=where)
    except InputError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.fixture
def rec(
    request: pytest.FixtureRequest,
    rec_config: dict[str, Any],
    rec_recordings_dir: Path,
    rec_recording_name: str,
) -> Iterator[RecSession]:
    """Record or replay this test's google-genai / ADK model traffic (see the module docs)."""
    from cassettes._atomic_write import locked
    from cassettes._divergence import RERECORD_PYTEST
    from cassettes._file_names import CASSETTE_SUFFIX, cassette_file, recording_name
    from cassettes._record_mode import RecordMode
    from recorder._client_env import pointing_clients_at
    from recorder._forwarding import DEFAULT_UPSTREAM, Upstreams
    from recorder._recorder import Recorder
    from replayer._replay_api import auto_handler, replay
    from replayer._replay_channel import ReplayChannel

    marker = _marker_options(request)
    unknown = sorted(set(rec_config) - set(CONFIG_KEYS))
    if unknown:
        raise pytest.UsageError(
            f"{request.node.nodeid}: unknown rec_config key(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(CONFIG_KEYS)}"
        )
    # Precedence: command line > marker > rec_config fixture > "replay".
    mode = _parse_mode(
        request.config.getoption("--rec-mode")
        or marker.get("mode")
        or rec_config.get("mode")
        or "replay",
        f"{request.node.nodeid}: mode",
    )
    recording = str(marker.get("recording") or rec_recording_name)
    cassette = Path(recording)
    if not cassette.name.endswith(CASSETTE_SUFFIX):
        cassette = cassette_file(rec_recordings_dir, recording)
    elif not cassette.is_absolute():
        cassette = rec_recordings_dir / cassette
    upstream = marker.get("upstream") or rec_config.get("upstream") or DEFAULT_UPSTREAM
    session = RecSession(mode=mode, cassette=cassette)

    if mode is RecordMode.LIVE:
        yield session
    elif mode is RecordMode.REPLAY:
        if not cassette.is_file():
            pytest.fail(
                f"{cassette}: no recording for this test (replay mode fails closed). Record it "
                f"with `pytest --rec-mode=record {request.node.nodeid}`",
                pytrace=False,
            )
        # The fixture reports a miss itself (below), so the log need not.
        channel = ReplayChannel(rerecord=RERECORD_PYTEST)
        with replay(cassette, channel=channel, log_misses=False, ordered=True) as running:
            session.url = running.url
            session.channel = running.channel
            yield session
        # A miss the test did not survive is its failure already (google-genai's error
        # carries the miss): raising it again here would make one failure "1 failed, 1 error".
        if running.misses and not request.node.stash.get(_CALL_FAILED, False):
            raise running.misses[0]
    elif mode is RecordMode.RECORD or mode is RecordMode.AUTO:
        name = recording_name(cassette)
        # Not the recorder's own finalisation lock (.rec/.<cassette>.lock): a separate one.
        with locked(cassette.with_name(name + ".record"), lock_dir=cassette.parent / ".rec"):
            recorder_session = Recorder(
                cassette.parent,
                name=name,
                upstreams=Upstreams(gemini=upstream),
                mode=mode,
                auto_handler=auto_handler() if mode is RecordMode.AUTO else None,
                write_evalset=False,
                overwrite=True,  # --rec-mode record asks to re-record the test's cassette
            )
            with recorder_session.running_in_thread(), pointing_clients_at(recorder_session.url):
                session.url = recorder_session.url
                yield session
    else:
        assert_never(mode)
