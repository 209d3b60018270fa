"""rec's pytest plugin (``pytest11``): eval cases as tests, the ``--rec-NAME`` options, the
``rec`` marker and fixture.

**Eval cases as tests.** With an agent configured (``--rec-agent AGENT``, the ini setting
``rec_agent``, or ``rec_agents`` lines ``PATH = AGENT``), every ``*.evalset.json`` pytest
walks is collected, one item per eval case (``evals/x.evalset.json::case_id``), replayed
as ``rec replay AGENT`` replays it (:mod:`rec._pytest_evals`). Without one, none is: rec's
own suite and other projects' suites collect what they did. ``--rec-NAME`` (or the ini
setting ``rec_NAME``) is the twin of ``rec replay --NAME`` for every option a CI run needs
(:mod:`rec._replay_flags`: declared once for both).

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

import contextlib
import dataclasses
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from rec._replay_flags import REPLAY_FLAGS, STREAMING, ReplayFlag, flag

if TYPE_CHECKING:
    from cassettes._errors import ReplayMiss
    from cassettes._matching import MatchRules
    from cassettes._record_mode import RecordMode
    from rec._pytest_evals import RunSettings
    from replayer._gate import Gates
    from replayer._replay_channel import ReplayChannel
    from replayer._replay_target import ReplayOptions

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
    """Notes whether the test body failed, so the ``rec`` fixture reports a miss once; an
    ``AgentEvaluator`` failure reads as its message (the reasons and diffs first), without
    the traceback through asyncio and rec."""
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
        error = call.excinfo.value if call.excinfo is not None else None
        if report.failed and getattr(error, "rec_short_report", False):
            report.longrepr = f"{item.nodeid}: {error}"
        elif report.failed and call.excinfo is not None:
            report.longrepr = _miss_first(item, call.excinfo) or report.longrepr
    if report.failed and call.excinfo is not None:
        report.longrepr = _missing_extra(item, call.excinfo.value) or report.longrepr
    return report


def _missing_extra(item: pytest.Item, error: BaseException) -> str | None:
    """One line for a collected eval case that cannot run for want of an extra (google-adk
    for an ADK agent), instead of the import's traceback, at setup (an agent folder's
    ``__init__.py``) or while the case runs."""
    evals = sys.modules.get("rec._pytest_evals")
    if evals is None or not isinstance(item, evals.EvalCaseItem):
        return None
    from cassettes._extras import missing_extra

    needs = missing_extra(error, command="replaying this eval case")
    return None if needs is None else f"{item.nodeid}: {needs}"


def _miss_first(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
    """A test that failed after a replay miss of its ``rec`` fixture: the miss (the cassette,
    the nearest recording, the diff), then the test's own line and what it raised, instead
    of the traceback through google-genai and its retries that ends in the miss."""
    session = getattr(item, "funcargs", {}).get("rec")
    if not isinstance(session, RecSession) or not session.misses:
        return None
    lines = [str(miss) for miss in session.misses]
    raised = excinfo.exconly().strip() or excinfo.typename
    if any(miss.problem in raised for miss in session.misses):
        raised = f"{excinfo.typename} (what the replay answered the miss above with)"
    raised = raised.splitlines()[0]
    raised = raised if len(raised) <= 200 else raised[:199] + "…"
    own = [entry for entry in excinfo.traceback if Path(entry.path) == item.path]
    where = f"{item.location[0]}:{own[-1].lineno + 1}: " if own else ""
    lines.append(f"{where}the test raised {raised}")
    return "\n".join(lines)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rec", "rec: record and replay model traffic")
    group.addoption(
        "--rec-agent",
        action="store",
        default=None,
        metavar="AGENT",
        help="Collect every *.evalset.json pytest walks as tests, one per eval case, "
        "replayed against AGENT (as `rec replay AGENT`). Ini: rec_agent, and rec_agents "
        "lines `PATH = AGENT` for the eval sets under PATH.",
    )
    parser.addini("rec_agent", "The agent collected eval sets run against (--rec-agent).")
    parser.addini(
        "rec_agents",
        "Lines `PATH = AGENT`: eval sets under PATH are collected and run against AGENT.",
        type="linelist",
    )
    for spec in REPLAY_FLAGS:
        _add_twin(group, parser, spec)
    group.addoption(
        "--rec-html",
        action="store",
        default=None,
        metavar="FILE",
        help="Write one HTML report (as `rec replay --html`) of every collected eval case "
        "and AgentEvaluator evaluation in the run.",
    )


def _add_twin(group: Any, parser: pytest.Parser, spec: ReplayFlag) -> None:
    """``--rec-NAME`` and the ini setting ``rec_NAME`` for ``rec replay --NAME``."""
    text = spec.text("--rec-")
    if spec.choices is not None:
        text += f" One of: {', '.join(spec.choices)}."
    if spec.switch:
        group.addoption(f"--rec-{spec.name}", action="store_true", default=False, help=text)
        parser.addini(_ini(spec), text, type="bool", default=False)
    elif spec.multiple:
        group.addoption(
            f"--rec-{spec.name}", action="append", default=[], metavar=spec.metavar, help=text
        )
        parser.addini(_ini(spec), text, type="linelist")
    else:
        group.addoption(
            f"--rec-{spec.name}", action="store", default=None, metavar=spec.metavar, help=text
        )
        parser.addini(_ini(spec), text, default="")


def _ini(spec: ReplayFlag) -> str:
    return "rec_" + spec.name.replace("-", "_")


def _setting(config: pytest.Config, name: str) -> Any:
    """``--rec-NAME`` when given, else the ini setting ``rec_NAME`` (paths made absolute:
    the command line's from where pytest was started, the ini file's from its folder)."""
    spec = flag(name)
    given = config.getoption(_ini(spec))
    if spec.switch:
        return bool(given) or bool(config.getini(_ini(spec)))
    base = config.invocation_params.dir
    if not given:
        given = config.getini(_ini(spec)) or None
        base = config.inipath.parent if config.inipath is not None else config.rootpath
    if given is None:
        return [] if spec.multiple else None
    if spec.path:
        return str(base / given)
    return list(given) if spec.multiple else given


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
    _check_settings(config)
    parts = _html_parts(config)
    if parts is not None and not _is_xdist_worker(config):
        import shutil

        shutil.rmtree(parts, ignore_errors=True)  # a run that died left its parts


def _check_settings(config: pytest.Config) -> None:
    """Every ``--rec-NAME`` (or ``rec_NAME``) checked before any test runs: one line, exit 4."""
    mode = _setting(config, "mode")
    if mode is not None:
        _parse_mode(mode, "--rec-mode")
    streaming = _setting(config, "streaming")
    if streaming is not None and streaming not in STREAMING:
        raise pytest.UsageError(
            f"--rec-streaming: unknown streaming mode {streaming!r}. Use one of: "
            f"{', '.join(STREAMING)} (or leave it out: each case as recorded)"
        )
    runs = _setting(config, "num-runs")
    if runs is not None and (not str(runs).isdigit() or int(runs) < 1):
        raise pytest.UsageError(f"--rec-num-runs: {runs!r} is not a whole number of at least 1")
    if _setting(config, "ignore"):
        _ignore_rules(config)
    if _collects(config):
        config.stash[_OPTIONS] = options = _replay_options(config)
        config.stash[_GATES] = _gates(config, options)
        for line in config.getini("rec_agents"):
            _agents_line(config, line)


def _ignore_rules(config: pytest.Config) -> MatchRules:
    """``--rec-ignore`` (or ``rec_ignore``) as match rules.

    Raises:
        pytest.UsageError: a path is malformed (one line naming the option and the fix).
    """
    from cassettes._errors import InputError
    from cassettes._matching import ignore_rules

    try:
        return ignore_rules(_setting(config, "ignore"), source="--rec-ignore")
    except InputError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    """A ``*.evalset.json`` with an agent configured for it: its eval cases are tests."""
    if not file_path.name.endswith(EVALSET_SUFFIX):
        return None
    agent = _agent_for(parent.config, file_path)
    if agent is None:
        return None
    from rec._pytest_evals import EvalSetFile

    return EvalSetFile.for_file(parent, file_path, _run_settings(parent.config, agent))


EVALSET_SUFFIX = ".evalset.json"
"""The eval sets pytest collects (ADK's legacy ``*.test.json`` are not: an
``AgentEvaluator`` test usually runs them already)."""


def _resolve_agent(spec: str, base: Path) -> str:
    """An agent folder or ``file.py:function`` made absolute from ``base``; a module name
    is kept as it is."""
    head, sep, tail = spec.strip().partition(":")
    candidate = base / head
    if head and candidate.exists():
        return str(candidate.resolve()) + sep + tail
    return spec.strip()


def _agents_line(config: pytest.Config, line: str) -> tuple[str, str]:
    """``PATH = AGENT`` of a ``rec_agents`` line.

    Raises:
        pytest.UsageError: the line is not of that form.
    """
    where, sep, agent = line.partition("=")
    if not sep or not where.strip() or not agent.strip():
        raise pytest.UsageError(
            f"{config.inipath}: rec_agents: {line!r} is not `PATH = AGENT`. Write one line "
            "per folder of eval sets, e.g. `evals/travel = agents/travel`"
        )
    return where.strip(), agent.strip()


def _agent_for(config: pytest.Config, file_path: Path) -> str | None:
    """The agent an eval set runs against: ``--rec-agent``, else the ``rec_agents`` line
    whose PATH holds it (the longest), else ``rec_agent``; None: not collected."""
    given = config.getoption("rec_agent")
    if given:
        return _resolve_agent(given, config.invocation_params.dir)
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    best: tuple[int, str] | None = None
    for line in config.getini("rec_agents"):
        where, agent = _agents_line(config, line)
        folder = (base / where).resolve()
        if file_path.resolve().is_relative_to(folder):
            length = len(folder.parts)
            if best is None or length > best[0]:
                best = (length, _resolve_agent(agent, base))
    if best is not None:
        return best[1]
    fallback = config.getini("rec_agent")
    return _resolve_agent(fallback, base) if fallback else None


_OPTIONS = pytest.StashKey["ReplayOptions"]()
_RUN_SETTINGS = pytest.StashKey[dict[str, "RunSettings"]]()
_GATES = pytest.StashKey["Gates"]()


def _collects(config: pytest.Config) -> bool:
    """Whether an agent is configured, so that eval sets are collected."""
    return bool(
        config.getoption("rec_agent") or config.getini("rec_agent") or config.getini("rec_agents")
    )


def _replay_options(config: pytest.Config) -> ReplayOptions:
    """The ``--rec-NAME`` options as the collected eval cases run them.

    Raises:
        pytest.UsageError: an option cannot be used (one line, as ``rec replay`` says it).
    """
    from cassettes._divergence import PYTEST_HINTS
    from cassettes._errors import InputError
    from replayer._replay_target import ReplayOptions

    recording = _setting(config, "recording")
    eval_config = _setting(config, "config")
    try:
        return ReplayOptions(
            mode=_parse_mode(_setting(config, "mode") or "replay", "--rec-mode"),
            recording=Path(recording) if recording else None,
            upstream=_setting(config, "upstream") or ReplayOptions.upstream,
            live_tools=_setting(config, "live-tools"),
            in_process=_setting(config, "in-process"),
            config=Path(eval_config) if eval_config else None,
            num_runs=int(runs) if (runs := _setting(config, "num-runs")) else None,
            prices=Path(prices) if (prices := _setting(config, "prices")) else None,
            agent_name=_setting(config, "agent-name"),
            streaming=_setting(config, "streaming"),
            freeze_time=not (_setting(config, "no-freeze-time") or _setting(config, "live-clock")),
            recorded_reads=not _setting(config, "live-clock"),
            allow_not_evaluated=_setting(config, "allow-not-evaluated"),
            allow_empty=_setting(config, "allow-empty"),
            rules=_ignore_rules(config),
            hints=PYTEST_HINTS,
        )
    except InputError as exc:
        raise pytest.UsageError(str(exc).replace("--in-process", "--rec-in-process")) from None


def _run_settings(config: pytest.Config, agent: str) -> RunSettings:
    """How the collected eval cases of ``agent`` run (one object per agent and run)."""
    from rec._pytest_evals import RunSettings

    known = config.stash.setdefault(_RUN_SETTINGS, {})
    if agent not in known:
        options = config.stash.get(_OPTIONS, None) or _replay_options(config)
        gates = config.stash.get(_GATES, None) or _gates(config, options)
        if gates.takes is not None:
            options = dataclasses.replace(options, takes_rule=gates.takes)
        known[agent] = RunSettings(agent, options, html_parts=_html_parts(config), gates=gates)
    return known[agent]


def _gates(config: pytest.Config, options: ReplayOptions) -> Gates:
    """``--rec-budget`` and ``--rec-baseline``, read once per run (each absent when not given).

    Raises:
        pytest.UsageError: either cannot be used (one line, as ``rec replay`` says it).
    """
    from cassettes._errors import InputError
    from replayer._gate import Gates

    budget_file, baseline_dir = _setting(config, "budget"), _setting(config, "baseline")
    try:
        return Gates.load(
            Path(budget_file) if budget_file else None,
            Path(baseline_dir) if baseline_dir else None,
            prices=options.prices,
        )
    except InputError as exc:
        raise pytest.UsageError(str(exc).replace("--baseline", "--rec-baseline")) from None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """``--rec-html``: the controller renders every report the evaluations left."""
    parts = _html_parts(session.config)
    if parts is None or _is_xdist_worker(session.config):
        return
    import shutil

    from replayer._reports.html import write_html
    from replayer._reports.set_report import SetReport, merge_reports

    files = sorted(parts.glob("*.json")) if parts.is_dir() else []
    reports = [SetReport.model_validate_json(file.read_bytes()) for file in files]
    write_html(merge_reports(reports), session.config.getoption("--rec-html"))
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
    """``--rec-mode``, ``--rec-streaming``, ``--rec-no-freeze-time`` and ``--rec-ignore`` as
    ``REC_MODE``, ``REC_STREAMING``, ``REC_FREEZE_TIME`` and ``REC_IGNORE`` for this test
    (``AgentEvaluator`` reads them); restored after it."""
    config = request.config
    wanted = {
        "REC_MODE": _setting(config, "mode"),
        "REC_STREAMING": _setting(config, "streaming"),
        "REC_FREEZE_TIME": "0" if _setting(config, "no-freeze-time") else None,
        "REC_IGNORE": ",".join(_setting(config, "ignore")) or None,
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


def _fixture_mode(
    request: pytest.FixtureRequest, rec_config: dict[str, Any], marker: dict[str, Any]
) -> RecordMode:
    """The ``rec`` fixture's mode, after checking ``rec_config``'s keys."""
    unknown = sorted(set(rec_config) - set(CONFIG_KEYS))
    if unknown:
        raise pytest.UsageError(
            f"{request.node.nodeid}: unknown rec_config key(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(CONFIG_KEYS)}"
        )
    # Precedence: command line > marker > rec_config fixture > ini rec_mode > "replay".
    return _parse_mode(
        request.config.getoption("--rec-mode")
        or marker.get("mode")
        or rec_config.get("mode")
        or request.config.getini("rec_mode")
        or "replay",
        f"{request.node.nodeid}: mode",
    )


def _fixture_cassette(recordings_dir: Path, recording: str) -> Path:
    """The recording file: a name in the recordings folder, or a cassette path (relative
    to it)."""
    from cassettes._file_names import CASSETTE_SUFFIX, cassette_file

    cassette = Path(recording)
    if not cassette.name.endswith(CASSETTE_SUFFIX):
        return cassette_file(recordings_dir, recording)
    if not cassette.is_absolute():
        return recordings_dir / cassette
    return cassette


def _recording_lock(cassette: Path) -> contextlib.AbstractContextManager[object]:
    """The lock one test holds while it writes ``cassette``: not the recorder's own
    finalisation lock (.rec/.<cassette>.lock), a separate one."""
    from cassettes._file_names import recording_name
    from cassettes._folders import locked

    return locked(
        cassette.with_name(recording_name(cassette) + ".record"),
        lock_dir=cassette.parent / ".rec",
    )


@pytest.fixture
def rec(
    request: pytest.FixtureRequest,
    rec_config: dict[str, Any],
    rec_recordings_dir: Path,
    rec_recording_name: str,
) -> Iterator[RecSession]:
    """Record or replay this test's google-genai / ADK model traffic (see the module docs)."""
    from cassettes._divergence import PYTEST_HINTS
    from cassettes._record_mode import RecordMode
    from recorder._traffic import DEFAULT_UPSTREAM
    from replayer._model_backend import model_backend

    marker = _marker_options(request)
    mode = _fixture_mode(request, rec_config, marker)
    recording = str(marker.get("recording") or rec_recording_name)
    cassette = _fixture_cassette(rec_recordings_dir, recording)
    upstream = marker.get("upstream") or rec_config.get("upstream") or DEFAULT_UPSTREAM
    session = RecSession(mode=mode, cassette=cassette)

    if mode is RecordMode.REPLAY and not cassette.exists():  # a FIFO: the loader names it
        pytest.fail(
            f"{cassette}: no recording for this test (replay mode fails closed). Record it "
            f"with `pytest --rec-mode=record {request.node.nodeid}`",
            pytrace=False,
        )
    writes = mode is RecordMode.RECORD or mode is RecordMode.AUTO
    lock = _recording_lock(cassette) if writes else contextlib.nullcontext()
    # The fixture reports a miss itself (below), so the log need not.
    with (
        lock,
        model_backend(
            mode,
            [cassette],
            rules=_ignore_rules(request.config),
            upstream=upstream,
            hints=PYTEST_HINTS,
        ) as source,
    ):
        session.url = source.url
        if mode is RecordMode.REPLAY:
            session.channel = source.channel
        yield session
    # A miss the test did not survive is its failure already (google-genai's error
    # carries the miss): raising it again here would make one failure "1 failed, 1 error".
    misses = source.channel.misses if mode is RecordMode.REPLAY else []
    if misses and not request.node.stash.get(_CALL_FAILED, False):
        raise misses[0]
