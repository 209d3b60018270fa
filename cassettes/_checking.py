"""Strict validation of the files rec reads: every problem in a file, each with its place and fix.

ADK's loaders stop at the first error, ignore misspelled keys, and hide a broken EvalSet
behind the legacy-format fallback (``KeyError: 'data'``, ``string indices must be
integers``). :func:`check_file` validates the whole document with the same models rec loads
it with, forbidding unknown keys (``extra="forbid"``), and turns every error into a
:class:`Problem` (file, JSON path, what is wrong, how to fix it), adding what ADK would have
done (ignored the key, or rejected the file with a legacy-format error). It knows:

- EvalSets (``*.evalset.json``, also ``*.test.json``), including what would keep a case
  from running (an empty user turn),
- the two legacy eval formats (a list of turns; a list of cases with ``data``), which are
  recognised with a note and checked,
- eval configs (``test_config.json``, ``eval_config.json``), with a check that custom
  metric functions can be imported, and
- cassettes (``*.cassette.json``), with the rules replay needs (valid base64 bodies,
  headers and SSE lines without line breaks, real status codes, unique exchange ids).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from cassettes._errors import InputError
from cassettes._evalset import RUNNABLE, EvalSet
from cassettes._evalset_quick import clean_document
from cassettes._file_names import CASSETTE_SUFFIX, CONFIG_NAMES, files_to_check
from cassettes._gc_pause import gc_paused
from cassettes._json_file import parse_json, read_file, refuse_deep_nesting
from cassettes._legacy_eval_file import (
    LEGACY_CASES,
    LEGACY_TURNS,
    LegacyCase,
    LegacyTurn,
    legacy_shape,
    legacy_unknown_key,
)
from cassettes._problems import Problem, type_name, validation_problems
from cassettes._user_code import import_callable

if TYPE_CHECKING:
    from cassettes._cassette import Exchange
    from cassettes._eval_config import EvalConfig
    from cassettes._mcp import McpRecording

__all__ = [
    "EvalSetIds",
    "FileKind",
    "Problem",
    "across_files",
    "check_document",
    "check_file",
    "check_files",
    "check_paths",
    "detect_kind",
    "evalset_ids",
]

FileKind = Literal["evalset", "legacy_turns", "legacy_cases", "eval_config", "cassette", "unknown"]

_EVALSET_KEYS = {
    spelling for key in ("eval_set_id", "eval_cases") for spelling in (key, to_camel(key))
}
_CONFIG_KEYS = {
    "criteria",
    "custom_metrics",
    "customMetrics",
    "multi_run_config",
    "multiRunConfig",
}
_CASSETTE_KEYS = {"exchanges", "format_version"}


def detect_kind(path: str | Path, document: object) -> FileKind:
    """What kind of rec/ADK file a parsed document is (by name first, then by shape)."""
    name = Path(path).name
    if name in CONFIG_NAMES:
        return "eval_config"
    if name.endswith(CASSETTE_SUFFIX):
        return "cassette"
    if isinstance(document, list):
        return legacy_shape(document)
    if isinstance(document, dict):
        keys = set(document)
        if keys & _EVALSET_KEYS:
            return "evalset"
        if keys & _CONFIG_KEYS:
            return "eval_config"
        if keys & _CASSETTE_KEYS:
            return "cassette"
    return "unknown"


def check_document(
    document: object, *, path: str | Path, kind: FileKind | None = None
) -> list[Problem]:
    """Every problem in a parsed document (notes included; see :attr:`Problem.severity`)."""
    kind = kind or detect_kind(path, document)
    if kind == "evalset":
        return _check_evalset(document, path=path)
    if kind in ("legacy_turns", "legacy_cases"):
        return _check_legacy(document, path=path)
    if kind == "eval_config":
        return _check_config(document, path=path)
    if kind == "cassette":
        return _check_cassette(document, path=path)
    return [
        Problem(
            str(path),
            "(top level)",
            "not a file rec knows (an EvalSet, a legacy eval file, an eval config or a cassette)",
            "Check the path; EvalSets have eval_set_id and eval_cases, configs have criteria",
        )
    ]


def check_file(path: str | Path) -> list[Problem]:
    """Read one file and return every problem in it (the strict check, whatever the file)."""
    return _checked_file(Path(path), quick=False)[0]


def check_files(
    files: Sequence[Path],
    *,
    allow_empty: bool = False,
    read: dict[Path, tuple[bytes, Any]] | None = None,
) -> list[Problem]:
    """Every problem in ``files`` (in file order), then what no one file shows
    (:func:`across_files`).

    Each file is read and parsed once: what the cross-file pass needs of an eval set (its
    ids) is taken from the document the file's own check parsed, and the document is let
    go before the next file is read. ``read`` holds the bytes and parsed JSON of files a
    caller read already (they are not read again): each is taken out of it as its file is
    checked, so that the document goes with its check (:func:`_checked_file`). An eval set
    the quick walk finds certainly clean (``cassettes._evalset_quick``) is not validated
    again with the models.
    """
    problems: list[Problem] = []
    found: list[EvalSetIds] = []
    for file in files:
        own, ids = _checked_file(file, quick=True, read=(read or {}).pop(file, None))
        problems.extend(own)
        if ids is not None:
            found.append(ids)
    return problems + across_files(found, allow_empty=allow_empty)


def check_paths(paths: Iterable[str | Path]) -> tuple[list[Path], list[Problem]]:
    """Check files and folders (searched for eval files, configs and cassettes).

    Returns:
        The files checked and every problem found, in file order.

    Raises:
        InputError: a path does not exist.
    """
    files = files_to_check(paths)
    return files, check_files(files)


def _checked_file(
    file: Path, *, quick: bool, read: tuple[bytes, Any] | None = None
) -> tuple[list[Problem], EvalSetIds | None]:
    """The problems of one file and, for an eval set, its ids; the file parsed once (unless
    ``read`` gives its bytes and JSON), with the cyclic collector paused (a large document
    is one acyclic tree).

    The document is let go before the collector resumes: its first collection would
    otherwise scan every object of the document (as long as the check of a large cassette
    takes to validate it), only to find nothing to collect. A caller handing ``read`` in
    keeps no reference to it.
    """
    with gc_paused():
        found = _problems_and_ids(file, quick=quick, read=read)
        del read
    return found


def _problems_and_ids(
    file: Path, *, quick: bool, read: tuple[bytes, Any] | None
) -> tuple[list[Problem], EvalSetIds | None]:
    """:func:`_checked_file`'s work, done in a frame the document dies with."""
    try:
        data, document = read or _parsed(file)
    except InputError as exc:
        return [_unreadable(file, exc)], None
    del read
    kind = detect_kind(file, document)
    ids = evalset_ids(file, document) if kind == "evalset" else None
    if kind == "evalset":
        try:
            refuse_deep_nesting(data, file)  # as replay refuses it
        except InputError as exc:
            return [_unreadable(file, exc)], ids
    del data
    if quick and ids is not None and ids.count and clean_document(document):
        return [], ids
    return check_document(document, path=file, kind=kind), ids


def _parsed(file: Path) -> tuple[bytes, Any]:
    data = read_file(file, what="file")
    return data, parse_json(data, path=file)


def _unreadable(file: Path, exc: InputError) -> Problem:
    return Problem(str(file), exc.where or "", exc.problem, exc.fix or "Check the file")


@dataclass(frozen=True)
class EvalSetIds:
    """What :func:`across_files` needs of an eval set file."""

    file: Path
    set_id: str
    count: int
    """How many eval cases the file holds."""
    cases: list[tuple[int, str]]
    """(index, eval id) of each case whose eval id is a string."""


def evalset_ids(file: Path, document: object) -> EvalSetIds | None:
    """The ids of a parsed eval set document (None when it has none to read: what cannot
    be read is the file's own check to report)."""
    if not isinstance(document, dict):
        return None
    set_id, cases = document.get("eval_set_id"), document.get("eval_cases")
    if not isinstance(set_id, str) or not isinstance(cases, list):
        return None
    ids = [
        (i, case.get("eval_id") if isinstance(case, dict) else None) for i, case in enumerate(cases)
    ]
    return EvalSetIds(file, set_id, len(cases), [(i, e) for i, e in ids if isinstance(e, str)])


def across_files(found: Iterable[EvalSetIds], *, allow_empty: bool = False) -> list[Problem]:
    """What no one file shows, from the ids of the eval sets read: an eval set with no case
    (a run of it tests nothing; a note with ``allow_empty``), and an eval case that two eval
    sets of one folder both hold under one eval set id (results, reports, ``rec merge`` and
    ``--shard`` know a case by ``eval_set_id/eval_id``). Eval sets in different folders are
    usually different agents' (a repository of templates), so a case they share is a note,
    not an error."""
    first: dict[tuple[str, str], Path] = {}
    first_here: dict[tuple[Path, str, str], Path] = {}
    problems: list[Problem] = []
    for ids in found:
        file, set_id = ids.file, ids.set_id
        if not ids.count:
            problems.append(_no_cases(file, allow_empty=allow_empty))
        for index, eval_id in ids.cases:
            other = first_here.setdefault((file.parent, set_id, eval_id), file)
            if other == file:
                other = first.setdefault((set_id, eval_id), file)
            if other != file:
                problems.append(_same_case(file, index, set_id, eval_id, other))
    return problems


def _no_cases(file: Path, *, allow_empty: bool) -> Problem:
    return Problem(
        str(file),
        "eval_cases",
        "this eval set holds no eval cases, so a run of it tests nothing",
        "Add a case (`rec start` records one), or pass --allow-empty if it is meant to be empty",
        severity="note" if allow_empty else "error",
    )


def _same_case(file: Path, index: int, set_id: str, eval_id: str, other: Path) -> Problem:
    together = other.parent == file.parent
    why = (
        "results, reports, `rec merge` and --shard know a case by its eval set id and eval id, "
        "so the two would be taken for one"
    )
    return Problem(
        str(file),
        f"eval_cases[{index}].eval_id",
        f"eval set '{set_id}' has a case '{eval_id}' in {other} too: "
        + (why if together else f"if the two are replayed in one run, {why}"),
        "Give one of the files its own eval_set_id, or the case its own eval_id"
        + ("" if together else " (nothing to do if different agents replay them)"),
        severity="error" if together else "note",
    )


# -- EvalSet -------------------------------------------------------------------------------


def _check_evalset(document: object, *, path: str | Path) -> list[Problem]:
    try:
        evalset = EvalSet.model_validate(document, extra="forbid", context=RUNNABLE)
    except ValidationError as exc:
        return validation_problems(
            exc, path=path, model=EvalSet, document=document, describe_unknown=_adk_unknown_key
        )
    problems: list[Problem] = []
    for index, case in enumerate(evalset.eval_cases):
        if case.conversation is None:
            where = f"eval_cases[{index}].{_spelling(document, index, 'conversation_scenario')}"
            problems.extend(_scenario_problems(case.conversation_scenario, str(path), where))
    return problems


_SCENARIO_KEYS = ("starting_prompt", "conversation_plan")
"""What ADK's user simulator needs of a ``conversation_scenario`` (both texts)."""


def _scenario_problems(scenario: object, path: str, where: str) -> list[Problem]:
    """Why ADK's user simulator could not play this scenario (rec replay fails the case)."""
    if not isinstance(scenario, dict):
        return [
            Problem(
                path,
                where,
                f"a conversation_scenario is an object, not {type_name(scenario)}: ADK's user "
                "simulator cannot play it, so `rec replay` fails this case",
                'Write {"starting_prompt": "...", "conversation_plan": "..."}',
            )
        ]
    problems = []
    for key in _SCENARIO_KEYS:
        value = scenario.get(key, scenario.get(to_camel(key)))
        if not isinstance(value, str) or not value.strip():
            problems.append(
                Problem(
                    path,
                    f"{where}.{key}",
                    f"the scenario has no {key} text: ADK's user simulator cannot play it, so "
                    "`rec replay` fails this case",
                    f'Add "{key}": "..." (the user\'s first message, and the plan the '
                    "simulated user follows)",
                )
            )
    return problems


def _spelling(document: object, index: int, key: str) -> str:
    """``key`` as eval case ``index`` of ``document`` spells it (snake_case or camelCase)."""
    cases = document.get("eval_cases") if isinstance(document, dict) else None
    case = cases[index] if isinstance(cases, list) and index < len(cases) else None
    camel = to_camel(key)
    return camel if isinstance(case, dict) and camel in case and key not in case else key


def _adk_unknown_key(
    model: type[BaseModel], key: str, loc: tuple[Any, ...], problem: str, fix: str
) -> tuple[str, str]:
    """What ADK does with an unknown key: rec's models keep ADK's choice per model."""
    if model.model_config.get("alias_generator") is None and key != key.lower():
        return f"{problem} (keys here are snake_case only; ADK silently ignores this one)", fix
    if model.model_config.get("extra") == "forbid":
        return f"{problem} (ADK rejects the file, reporting a legacy-format error instead)", fix
    return f"{problem} (ADK silently ignores it)", fix


# -- legacy formats ------------------------------------------------------------------------


def _check_legacy(document: object, *, path: str | Path) -> list[Problem]:
    """Check a legacy eval file (flat list of turns or list of cases), noting its format."""
    file = str(path)
    if not isinstance(document, list):
        return [Problem(file, "(top level)", "a legacy eval file is a list", "Write a list")]
    cases = legacy_shape(document) == "legacy_cases"
    shape = "a list of cases with data" if cases else "a flat list of turns"
    problems = [
        Problem(
            file,
            "(top level)",
            f"legacy ADK eval format ({shape}); ADK still loads it",
            "Convert it to an EvalSet with `rec import FILE`",
            "note",
        )
    ]
    if not document:
        problems.append(
            Problem(file, "(top level)", "the list of turns is empty", 'Add {"query": ...}')
        )
    try:
        if cases:
            LEGACY_CASES.validate_python(document, extra="forbid")
        else:
            LEGACY_TURNS.validate_python(document, extra="forbid")
    except ValidationError as exc:
        model = list[LegacyCase] if cases else list[LegacyTurn]
        problems += validation_problems(
            exc, path=path, model=model, document=document, describe_unknown=legacy_unknown_key
        )
    for index, case in enumerate(document if cases else []):
        if isinstance(case, dict) and "initial_state" in case:
            problems.append(
                Problem(
                    file,
                    f"[{index}].initial_state",
                    "ADK does not read initial_state (it silently ignores it), so this state "
                    "never reaches the agent",
                    "Run `rec import FILE`: it moves initial_state into the EvalSet's "
                    "session_input.state (or move it into initial_session.state by hand)",
                )
            )
    return problems


# -- eval config ---------------------------------------------------------------------------


def _check_config(document: object, *, path: str | Path) -> list[Problem]:
    # Imported here, as the cassette models below: a check loads only the models it uses.
    from cassettes._eval_config import EvalConfig, config_problems

    problems: list[Problem] = []
    try:
        config = EvalConfig.model_validate(document)
    except ValidationError as exc:
        problems = config_problems(exc, path=path, document=document)
    else:
        problems = _criteria_problems(config, path=str(path))
    taken = {p.where for p in problems}
    for where, dotted in _custom_functions(document):
        if where in taken:
            continue
        problem = _import_problem(dotted, Path(path).parent)
        if problem:
            problems.append(
                Problem(
                    str(path),
                    where,
                    problem,
                    "Check the module is importable from here and the name",
                )
            )
    return problems


_SCORES_0_TO_1 = frozenset(
    {
        "tool_trajectory_avg_score",
        "response_match_score",
        "final_response_match_v2",
        "safety_v1",
        "hallucinations_v1",
        "rubric_based_final_response_quality_v1",
        "rubric_based_tool_use_quality_v1",
        "final_session_state_match",
        "tool_trajectory_f1",
        "tool_trajectory_rules_score",
    }
)
"""Metrics whose score is 0 to 1: a threshold outside that always passes or never does."""


def _criteria_problems(config: EvalConfig, *, path: str) -> list[Problem]:
    """Criteria that validate but cannot mean what they say: a silent pass, a sure fail,
    or an LLM judge asked for no samples."""
    problems: list[Problem] = []
    custom = set(config.custom_metrics or {})
    for spec in config.metrics():
        where = f"criteria.{spec.name}"
        if spec.name in _SCORES_0_TO_1 and spec.name not in custom:
            if not 0 <= spec.threshold <= 1:
                verdict = "every case passes" if spec.threshold < 0 else "no case can pass"
                problems.append(
                    Problem(
                        path,
                        where,
                        f"the threshold {spec.threshold:g} is outside the metric's scores "
                        f"(0 to 1), so {verdict}",
                        "Write a threshold from 0 to 1, e.g. 0.8",
                    )
                )
        options = getattr(spec.criterion, "judge_model_options", None)
        samples = getattr(options, "num_samples", None)
        if samples is not None and not 1 <= samples <= 100:
            problems.append(
                Problem(
                    path,
                    f"{where}.judge_model_options.num_samples",
                    f"num_samples {samples} asks the judge "
                    + (
                        "for no verdict, so the metric cannot run"
                        if samples < 1
                        else "for more "
                        "verdicts than any judge needs (each one a model call per invocation)"
                    ),
                    "Write a number of samples from 1 to 100 (ADK's default is 5)",
                )
            )
    return problems


def _custom_functions(document: object) -> list[tuple[str, str]]:
    """(JSON path, ``module.function``) of every custom metric, as the file spells them."""
    found: list[tuple[str, str]] = []
    if not isinstance(document, dict):
        return found
    top = "custom_metrics" if "custom_metrics" in document else "customMetrics"
    custom = document.get(top)
    for name, entry in (custom or {}).items() if isinstance(custom, dict) else []:
        if not isinstance(entry, dict):
            continue
        key = "code_config" if "code_config" in entry else "codeConfig"
        code = entry.get(key)
        dotted = code.get("name") if isinstance(code, dict) else None
        if isinstance(dotted, str) and "." in dotted:
            found.append((f"{top}.{name}.{key}.name", dotted))
    return found


def _import_problem(dotted: str, folder: Path) -> str | None:
    """Why ``module.function`` cannot be imported and called, or None when it can."""
    try:
        import_callable(dotted, near=folder / CONFIG_NAMES[0])
    except ImportError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - the user's module raised while importing
        return f'importing "{dotted}" raised {type(exc).__name__}: {exc}'
    return None


# -- cassette ------------------------------------------------------------------------------


def _check_cassette(document: object, *, path: str | Path) -> list[Problem]:
    from cassettes._cassette import FROM_FILE, Cassette, cassette_problem, pydantic_error_location

    if isinstance(document, dict) and document.get("format_version") not in (None, 1):
        return [
            Problem(
                str(path),
                "format_version",
                f"cassette format_version {document.get('format_version')!r} is not supported",
                "Upgrade rec, or re-record the cassette with this version",
            )
        ]
    try:
        cassette = Cassette.model_validate(document, context=FROM_FILE)
    except ValidationError as exc:
        return [
            Problem(
                str(path), pydantic_error_location(tuple(error["loc"])), *cassette_problem(error)
            )
            for error in exc.errors()
        ]
    problems = _conversation_problems(cassette.exchanges, path=str(path))
    if cassette.mcp is not None:
        problems += _mcp_problems(cassette.mcp, path=str(path))
    if cassette.live is not None:
        from cassettes._live_media import media_problems

        problems += [
            Problem(str(path), error.where or "live", error.problem, error.fix or "")
            for error in media_problems(cassette.live, path)
        ]
    return problems


def _conversation_problems(exchanges: list[Exchange], *, path: str) -> list[Problem]:
    """Every exchange whose model call does not read as Gemini content: ``rec show``, the
    EvalSet of a recording and ``rec import`` read them with google-genai's types (as ADK
    does) through :func:`~cassettes._extraction.extract_conversations`."""
    from cassettes._extraction import extract_conversations

    problems: list[Problem] = []
    remaining = list(exchanges)
    offset = 0
    while remaining:
        try:
            extract_conversations(remaining)
        except InputError as exc:
            where = exc.where or "exchanges"
            problems.append(Problem(path, _shifted(where, offset), exc.problem, exc.fix or ""))
            index = _index(where)
            if index is None:
                break
            offset += index + 1
            remaining = remaining[index + 1 :]
            continue
        break
    return problems


def _index(where: str) -> int | None:
    return int(where[len("exchanges[") : -1]) if where.startswith("exchanges[") else None


def _shifted(where: str, offset: int) -> str:
    index = _index(where)
    return where if index is None else f"exchanges[{index + offset}]"


_MCP_RESULTS = {
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/read": "ReadResourceResult",
}
"""The MCP SDK type each recorded result is read as by ``rec replay``
(``replayer/_mcp_replay.py``), which hands it to ADK's toolset."""


def _mcp_problems(mcp: McpRecording, *, path: str) -> list[Problem]:
    """Recorded MCP answers that replay could not hand to the agent as the SDK's types."""
    try:
        from mcp import types
    except ImportError:  # no MCP SDK: replay cannot run MCP toolsets either, and says so
        return []
    problems: list[Problem] = []
    for t, toolset in enumerate(mcp.toolsets):
        for s, session in enumerate(toolset.sessions):
            where = f"mcp.toolsets[{t}].sessions[{s}]"
            hello = session.server
            opened = {  # as the replayed session answers initialize
                "protocolVersion": hello.protocol_version if hello else None,
                "capabilities": (hello.capabilities if hello else None) or {},
                "serverInfo": (hello.server_info if hello else None) or {"name": "", "version": ""},
                "instructions": hello.instructions if hello else None,
            }
            checks = [(f"{where}.server", types.InitializeResult, opened)]
            for c, call in enumerate(session.calls):
                name = _MCP_RESULTS.get(call.method)
                if name is not None and call.error is None:
                    checks.append((f"{where}.calls[{c}].result", getattr(types, name), call.result))
            for place, model, value in checks:
                try:
                    model.model_validate(value)
                except ValidationError as exc:
                    error = exc.errors()[0]
                    at = ".".join(str(part) for part in error["loc"])
                    problems.append(
                        Problem(
                            path,
                            place,
                            f"not an MCP {model.__name__} ({at + ': ' if at else ''}"
                            f"{error['msg']}), so `rec replay` cannot give it to the agent",
                            "Fix it to the MCP wire shape, or re-record the session",
                        )
                    )
    return problems
