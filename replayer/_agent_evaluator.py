"""A drop-in for ``google.adk.evaluation.AgentEvaluator`` that replays instead of calling the model.

Change one import and an existing ADK test runs in CI without credentials::

    # from google.adk.evaluation.agent_evaluator import AgentEvaluator
    from rec import AgentEvaluator

    async def test_travel():
        await AgentEvaluator.evaluate("my_pkg.travel", "my_pkg/travel/tests")

The signatures are ADK 2.15's (every public method, parameter and default; an argument an
older ADK lacks is still taken). ``agent_module`` is a module name or agent folder (its
``root_agent``, ``app`` or ``get_agent_async``), or, as in ADK, an agent or workflow node
(``BaseNode``) or an ``App`` built by the caller. ``parallelism`` is how many cases run at
once (``rec replay --parallel``). Each eval file (``*.test.json`` in a folder, or the file
given; EvalSet or ADK's legacy formats) is replayed from the recording beside it
(``<name>.cassette.json``), tools return their recorded responses, and the cases are
scored with the ``test_config.json`` beside the file (ADK's defaults without one). A
failure raises ``AssertionError`` with ADK's message ("Following are all the test
failures." then "<metric> for <module> Failed. Expected <threshold>, but got <score>.").

The model source follows ``REC_MODE`` (set for each test by the pytest plugin's
``--rec-mode``), a :class:`rec.RecordMode` name: ``replay`` (default; fail closed),
``record`` (re-record the recording beside each file), ``auto`` (record what is missing),
``live``. Record and auto forward to ``GOOGLE_GEMINI_BASE_URL`` when it is set, else to
the Gemini API. ``REC_STREAMING`` (``sse`` or ``none``, set by the plugin's
``--rec-streaming``) overrides the streaming mode each case was recorded in, and
``REC_FREEZE_TIME=0`` (``--rec-no-freeze-time``) runs the cases on the real clock instead of
the recording's (see ``rec replay --streaming`` and ``--no-freeze-time``), and
``REC_IGNORE`` (comma-separated request-body paths, set by ``--rec-ignore``) leaves those
paths out of matching (``rec replay --ignore``).
Arguments ADK uses for its live eval service (``artifact_service``, ``output_file``,
``app_name``, ``eval_set_results_manager``) are accepted and ignored.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cassettes._atomic_write import write_atomic
from cassettes._divergence import AGENT_EVALUATOR_HINTS
from cassettes._errors import InputError
from cassettes._eval_config import EvalConfig, find_eval_config, parse_eval_config
from cassettes._eval_result import EvalSetResult, EvalStatus
from cassettes._evalset import EvalSet, parse_evalset
from cassettes._evalset_writer import eval_set_id_for
from cassettes._file_names import LEGACY_EVALSET_SUFFIX, cassette_beside, source_name
from cassettes._json_file import parse_json, read_file
from cassettes._matching import MatchRules, ignore_rules
from cassettes._record_mode import RecordMode
from recorder._traffic import DEFAULT_UPSTREAM
from replayer._agent_loading import LoadedAgent, sub_agent
from replayer._compat import adk_legacy_eval_set
from replayer._quiet_misses import quiet_adk_misses
from replayer._replay_run import replay_evalsets_async
from replayer._replay_target import ReplayOptions, recording_for
from replayer._reports.console import render_failures, render_summary
from replayer._reports.set_report import report_from_replay

if TYPE_CHECKING:
    from google.adk.apps import App
    from google.adk.workflow import BaseNode

HTML_PARTS_VARIABLE = "REC_HTML_PARTS"
"""Set by the pytest plugin's ``--rec-html``: the folder each evaluation's reports go to."""

__all__ = ["NUM_RUNS", "AgentEvaluator", "EvaluationFailed"]

NUM_RUNS = 2
"""ADK's default number of runs."""


def _mode() -> RecordMode:
    return RecordMode.parse(os.environ.get("REC_MODE", "replay"), source="REC_MODE")


def _streaming() -> Any:
    """``REC_STREAMING``: sse or none (ReplayOptions checks it); unset: as recorded."""
    return os.environ.get("REC_STREAMING") or None


_FALSE = ("0", "false", "no", "off")
_TRUE = ("1", "true", "yes", "on")


def _freeze_time() -> bool:
    """``REC_FREEZE_TIME``: 0/false/no/off runs on the real clock (default: frozen)."""
    value = os.environ.get("REC_FREEZE_TIME", "1").strip().lower()
    if value not in _FALSE + _TRUE:
        raise InputError(
            f"unknown value {value!r}",
            path="REC_FREEZE_TIME",
            fix="Set it to 0 (the real clock) or 1 (the recording's clock, the default)",
        )
    return value in _TRUE


def _ignore_rules() -> MatchRules:
    """``REC_IGNORE``: comma-separated request-body paths left out of matching."""
    paths = [p.strip() for p in os.environ.get("REC_IGNORE", "").split(",") if p.strip()]
    return ignore_rules(paths, source="REC_IGNORE")


def _upstream() -> str:
    """Where record and auto modes forward: the Gemini base URL the environment names."""
    return os.environ.get("GOOGLE_GEMINI_BASE_URL") or DEFAULT_UPSTREAM


def _failures(result: EvalSetResult, agent_module: str) -> list[str]:
    """ADK's failure lines (``AgentEvaluator._process_metrics_and_get_failures``)."""
    lines: list[str] = []
    for case in result.eval_case_results:
        if case.final_eval_status is not EvalStatus.FAILED:
            continue
        reported = False
        for metric in case.overall_eval_metric_results:
            if metric.eval_status is EvalStatus.FAILED:
                lines.append(
                    f"{metric.metric_name} for {agent_module} Failed. Expected "
                    f"{metric.threshold}, but got {metric.score}."
                )
                reported = True
            elif metric.eval_status is EvalStatus.NOT_EVALUATED:
                lines.append(
                    f"{metric.metric_name} for {agent_module} was not evaluated. No score"
                    f" was produced, so the threshold of {metric.threshold} was never"
                    " checked and this is not a score regression. See the logs for"
                    " why the metric could not run."
                )
                reported = True
        if not reported or not case.overall_eval_metric_results:
            detail = " ".join(case.failure_reasons)
            lines.append(f"{case.eval_id} for {agent_module} Failed. {detail}".rstrip())
    return lines


def _load_any(path: Path, initial_session: dict[str, Any]) -> EvalSet:
    """An EvalSet, or a legacy file converted with ADK's own migration."""
    text = read_file(path, what="eval file").decode("utf-8", "replace")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError:
        return parse_evalset(text, path=path)  # raises the precise error
    if isinstance(raw, dict):
        return parse_evalset(text, path=path)
    adk_set = adk_legacy_eval_set(path, initial_session)
    migrated = parse_evalset(adk_set.model_dump_json(exclude_none=True), path=path)
    return migrated.model_copy(update={"eval_set_id": eval_set_id_for(source_name(path))})


class AgentEvaluator:
    """ADK's ``AgentEvaluator`` API, replaying recorded model traffic (see module docs)."""

    @staticmethod
    def find_config_for_test_file(test_file: str) -> Any:
        """The eval config :meth:`evaluate` scores ``test_file`` with: ``test_config.json``
        beside it (then ``eval_config.json``), else ADK's defaults. It is rec's config
        (rec's own keys, such as ``takes``, kept); :meth:`evaluate_eval_set` takes it as it
        takes ADK's."""
        return find_eval_config(Path(test_file))[0]

    @staticmethod
    def migrate_eval_data_to_new_schema(
        old_eval_data_file: str,
        new_eval_data_file: str,
        initial_session_file: str | None = None,
    ) -> None:
        """Convert a legacy eval file to an EvalSet file with ADK's own migration (the
        ``test_config.json`` beside the old file checks its criteria, as in ADK); the new
        file is written whole or not at all."""
        if not old_eval_data_file or not new_eval_data_file:
            raise ValueError("One of old_eval_data_file or new_eval_data_file is empty.")
        eval_set = adk_legacy_eval_set(
            Path(old_eval_data_file), _initial_session(initial_session_file)
        )
        write_atomic(Path(new_eval_data_file), eval_set.model_dump_json(indent=2))

    @staticmethod
    async def evaluate_eval_set(
        agent_module: str | BaseNode | App,
        eval_set: Any,
        criteria: dict[str, float] | None = None,
        eval_config: Any = None,
        num_runs: int = NUM_RUNS,
        agent_name: str | None = None,
        print_detailed_results: bool = True,
        artifact_service: Any = None,
        output_file: str | None = None,
        app_name: str | None = None,
        eval_set_results_manager: Any = None,
        parallelism: int | None = None,
        *,
        recording: str | None = None,
    ) -> None:
        """Replay an in-memory EvalSet (ADK's or rec's) against ``agent_module``.

        ``parallelism``: how many cases run at once (``rec replay --parallel``); unset, the
        eval config's ``parallelism``, else one at a time (ADK's live default is 4; replayed
        cases score the same either way). ``recording`` (rec only) names the cassette or
        folder to replay: an in-memory eval set has no file beside which to look.

        Raises:
            AssertionError: a case failed (ADK's message format).
            ValueError: ``num_runs`` or ``parallelism`` < 1, no eval cases, or no
                ``eval_config``/``criteria``.
            TypeError: ``agent_module`` is not a module name, ``BaseNode`` or ``App`` (or an
                ``App`` without a ``root_agent``), as in ADK.
        """
        _check_counts(num_runs, parallelism)
        if not eval_set or not eval_set.eval_cases:
            raise ValueError(
                "No eval cases were evaluated, so there is nothing to report a pass or a "
                "failure for. This happens when `eval_set` has no eval cases."
            )
        await _run(
            _Target.of(agent_module, agent_name),
            _rec_evalset(eval_set),
            config=_rec_config(criteria, eval_config),
            recording=Path(recording) if recording else None,
            num_runs=num_runs,
            parallelism=parallelism,
            print_detailed_results=print_detailed_results,
        )

    @staticmethod
    async def evaluate(
        agent_module: str | BaseNode | App,
        eval_dataset_file_path_or_dir: str,
        num_runs: int = NUM_RUNS,
        agent_name: str | None = None,
        initial_session_file: str | None = None,
        print_detailed_results: bool = True,
        artifact_service: Any = None,
        output_file: str | None = None,
        app_name: str | None = None,
        eval_set_results_manager: Any = None,
        parallelism: int | None = None,
    ) -> None:
        """Replay every eval file (``*.test.json`` under a folder, or the file) and score it.

        ``parallelism``: how many of a file's cases run at once (``rec replay --parallel``);
        unset, each file's eval config ``parallelism``, else one at a time.

        Raises:
            AssertionError: a case failed (ADK's message format).
            ValueError: ``num_runs`` or ``parallelism`` < 1, or no eval files.
            TypeError: ``agent_module`` is not a module name, ``BaseNode`` or ``App``.
        """
        _check_counts(num_runs, parallelism)
        target = Path(eval_dataset_file_path_or_dir)
        if target.is_dir():
            files = sorted(p for p in target.rglob(f"*{LEGACY_EVALSET_SUFFIX}"))
        else:
            files = [target]
        if not files:
            raise ValueError(
                f"No `*{LEGACY_EVALSET_SUFFIX}` eval files found in "
                f"{eval_dataset_file_path_or_dir}, so there is nothing to evaluate."
            )
        agent = _Target.of(agent_module, agent_name)
        initial_session = _initial_session(initial_session_file)
        for file in files:
            await _run(
                agent,
                _load_any(file, initial_session),
                config=find_eval_config(file)[0],
                recording=_recording_beside(file, _mode()),
                num_runs=num_runs,
                parallelism=parallelism,
                print_detailed_results=print_detailed_results,
            )


def _check_counts(num_runs: int, parallelism: int | None) -> None:
    """ADK's checks of ``num_runs`` and ``parallelism``, with its messages."""
    if num_runs < 1:
        raise ValueError(f"`num_runs` must be at least 1, got {num_runs}.")
    if parallelism is not None and parallelism < 1:
        raise ValueError(f"`parallelism` must be at least 1, got {parallelism}.")


def _initial_session(initial_session_file: str | None) -> dict[str, Any]:
    """The state of ADK's ``initial_session_file`` (legacy eval files only), or none."""
    if not initial_session_file:
        return {}
    session_file = Path(initial_session_file)
    found: dict[str, Any] = parse_json(
        read_file(session_file, what="initial session file"), path=session_file
    )
    return found


class _Target:
    """What ``agent_module`` names: the agent to replay, and its name in failure lines."""

    def __init__(self, agent: str | LoadedAgent, label: str, agent_name: str | None) -> None:
        self.agent = agent
        self.label = label
        self.agent_name = agent_name
        """The sub-agent a module name's loading picks (a given agent is picked already)."""

    @staticmethod
    def of(agent_module: Any, agent_name: str | None) -> _Target:
        """As ADK's ``_get_agent_for_eval``: a module name is loaded when the run starts; an
        ``App`` runs its ``root_agent`` with its plugins; any other ``BaseNode`` runs as
        it is. ``agent_name`` picks a sub-agent of the root."""
        if isinstance(agent_module, str):
            return _Target(agent_module, agent_module, agent_name)
        from google.adk.apps import App

        root: Any
        app: App | None
        if isinstance(agent_module, App):
            if agent_module.root_agent is None:
                raise TypeError(f"App {agent_module.name!r} does not have a root_agent.")
            root, app = agent_module.root_agent, agent_module
        elif isinstance(agent_module, _node_type()):
            root, app = agent_module, None
        else:
            raise TypeError(
                f"Unsupported agent_module type: {type(agent_module).__name__}. Give a "
                "module name, an agent or workflow node (BaseNode), or an App."
            )
        label: str = agent_module.name
        if agent_name:
            root = sub_agent(root, agent_name, label)
        loaded = LoadedAgent(spec=label, app_name=label, root_agent=root, app=app)
        return _Target(loaded, label, None)


def _node_type() -> type:
    """ADK's ``BaseNode`` (ADK 2: agents and workflow nodes), else ``BaseAgent`` (ADK 1)."""
    try:
        from google.adk.workflow import BaseNode
    except ImportError:  # ADK 1 has no workflow nodes
        from google.adk.agents import BaseAgent

        return BaseAgent
    return BaseNode


def _rec_evalset(eval_set: Any) -> EvalSet:
    """rec's EvalSet for ADK's (or rec's own): validated, no file involved."""
    if isinstance(eval_set, EvalSet):
        return eval_set
    name = getattr(eval_set, "eval_set_id", None) or "eval_set"
    return parse_evalset(eval_set.model_dump_json(exclude_none=True), path=f"<{name}>")


def _rec_config(criteria: dict[str, float] | None, eval_config: Any) -> EvalConfig:
    """rec's EvalConfig for ADK's ``criteria`` or ``eval_config`` (rec's own is kept)."""
    if criteria:
        return parse_eval_config(json.dumps({"criteria": criteria}), path="<criteria>")
    if isinstance(eval_config, EvalConfig):
        return eval_config
    if eval_config is None:
        raise ValueError("`eval_config` is required.")
    dump = getattr(eval_config, "model_dump", None)
    data = dump(exclude_none=True, by_alias=False) if dump else eval_config
    return parse_eval_config(json.dumps(data), path="<eval_config>")


def _recording_beside(file: Path, mode: RecordMode) -> Path:
    """The cassette beside ``file``; in record and auto modes it may not exist yet."""
    found = recording_for(file, create=mode in (RecordMode.RECORD, RecordMode.AUTO))
    if found:
        return found[0]
    raise InputError(
        "no recording beside this eval file",
        path=file,
        fix=f"Record it (`rec start`, or run the test with --rec-mode=auto) so that "
        f"{cassette_beside(file).name} sits beside it",
    )


async def _run(
    target: _Target,
    evalset: EvalSet,
    *,
    config: EvalConfig,
    recording: Path | None,
    num_runs: int,
    parallelism: int | None,
    print_detailed_results: bool = True,
) -> None:
    options = ReplayOptions(
        mode=_mode(),
        upstream=_upstream(),
        recording=recording,
        config=config,
        num_runs=num_runs,
        parallel=parallelism or config.parallelism or 1,
        agent_name=target.agent_name,
        streaming=_streaming(),
        freeze_time=_freeze_time(),
        hints=AGENT_EVALUATOR_HINTS,
        rules=_ignore_rules(),
    )
    with quiet_adk_misses():
        replays = await replay_evalsets_async(target.agent, [evalset], options)
    _keep_for_html(replays)
    if print_detailed_results:  # as ADK: the results; a failure's detail is in its message
        for replayed in replays:
            print(render_summary(replayed.result))  # noqa: T201 - ADK's API prints here too
    failures = [line for r in replays for line in _failures(r.result, target.label)]
    if failures:
        detail = "".join(render_failures(r.result) for r in replays)
        raise EvaluationFailed(
            _failure_heading(print_detailed_results) + "\n" + "\n".join(failures) + "\n\n" + detail
        )


def _failure_heading(print_detailed_results: bool) -> str:
    """ADK's first line of the failure message."""
    heading = "Following are all the test failures."
    if not print_detailed_results:
        heading += (
            " If you looking to get more details on the failures, then please re-run this "
            "test with `print_detailed_results` set to `True`."
        )
    return heading


class EvaluationFailed(AssertionError):
    """ADK's assertion: its message (``Following are all the test failures.`` and a line per
    failed metric), then each failed case as ``rec replay`` prints it (the reason, a miss's
    diff, expected against actual). The pytest plugin reports it as it reads, without the
    traceback through asyncio and rec (``rec_short_report``)."""

    rec_short_report = True


def _keep_for_html(replays: list[Any]) -> None:
    """Under ``pytest --rec-html``, leave each eval set's report where the plugin reads them
    (one file per report: xdist workers write side by side, the controller renders)."""
    folder = os.environ.get(HTML_PARTS_VARIABLE)
    if not folder:
        return
    for number, replayed in enumerate(replays):
        name = f"{uuid.uuid4().hex}-{os.getpid()}-{number}.json"
        write_atomic(Path(folder) / name, report_from_replay(replayed).model_dump_json())
