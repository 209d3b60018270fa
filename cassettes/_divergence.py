"""Explain a replay miss: what differs between the request and the nearest recording.

Computed only on a miss (a hit never builds a diff). The diff runs deepdiff over the two
canonical bodies and renders each difference in the words of the Gemini request, e.g.::

    systemInstruction changed: "You are a helpful assistant" -> "You are a grumpy assistant"
    contents: 2 turns added (the agent sent a longer history)
    contents[2].parts[0].functionResponse.response changed: {"result": "10:00"} -> {...}
    tools[0].functionDeclarations: get_time added

Every rendered line is masked (:func:`cassettes._redaction.mask`) before it reaches the
error, and long values are cut to about 80 characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cassettes._a2a import a2a_calls, a2a_rest_canonical
from cassettes._cassette import Exchange, RecordedRequest
from cassettes._errors import ReplayMiss
from cassettes._google_error import google_error
from cassettes._json_path import render_json_path
from cassettes._matching import CanonicalRequest, MatchRules, canonical_request
from cassettes._secret_shapes import mask

__all__ = [
    "AGENT_EVALUATOR_HINTS",
    "a2a_differences",
    "CLI_HINTS",
    "MISS_HTTP_STATUS",
    "PYTEST_HINTS",
    "MissHints",
    "explain_miss",
    "miss_error_body",
    "live_close_reason",
    "miss_id_in",
    "changed_tool_calls",
    "suggested_ignore",
]

# A miss answers 404 NOT_FOUND with the Google error envelope:
# - google-genai raises errors.ClientError for any non-200 at once; its own retries are off
#   by default, and when enabled (HttpRetryOptions) retry only 408/429/500/502/503/504;
# - ADK's eval retry options (google/adk/evaluation/_retry_options_utils.py) use the same
#   list, and ADK's Gemini model only special-cases 429;
# - a 4xx says "this request is the problem", which is true, and generic retry policies
#   (HTTP clients, proxies, frameworks) retry 5xx such as 501 far more often than 404.
MISS_HTTP_STATUS = 404
"""HTTP status of the response a client gets for a request no recording matches."""


@dataclass(frozen=True)
class MissHints:
    """How a miss's fix names the options of the front end it happens in: rec's CLI
    (:data:`CLI_HINTS`), pytest (:data:`PYTEST_HINTS`) or ``AgentEvaluator``
    (:data:`AGENT_EVALUATOR_HINTS`). The front end passes its own; none is guessed."""

    rerecord: str
    """How to record what is missing, as one clause."""
    ignore: str
    """How to leave a request-body path out of matching, ``{path}`` standing for the path."""

    def ignore_option(self, path: str) -> str:
        """The option (or setting) that leaves ``path`` out of matching."""
        return self.ignore.format(path=path)


CLI_HINTS = MissHints(
    rerecord="Re-record with `rec start`, or run with --record-missing",
    ignore="--ignore {path}",
)
"""rec's CLI (``rec replay``, ``rec serve``)."""

PYTEST_HINTS = MissHints(
    rerecord="Re-record with `pytest --rec-mode=record`, or run pytest with --rec-mode=auto",
    ignore="--rec-ignore {path}",
)
"""rec's pytest plugin: the ``rec`` fixture and the eval cases it collects."""

AGENT_EVALUATOR_HINTS = MissHints(
    rerecord=PYTEST_HINTS.rerecord,
    ignore="REC_IGNORE={path} (pytest --rec-ignore {path})",
)
"""``rec.AgentEvaluator``, which reads the ignore paths from ``REC_IGNORE`` (the pytest
plugin's ``--rec-ignore`` sets it for each test)."""

_MAX_VALUE = 80
_VERSIONED_PATH = re.compile(r"^.*?/\{v\}/")


def _short(value: Any, limit: int = _MAX_VALUE) -> str:
    # Masked before it is cut: a credential cut in half would no longer look like one.
    text = mask(json.dumps(value, ensure_ascii=False, sort_keys=True))
    if len(text) <= limit:
        return text
    return text[: limit - 4] + ('..."' if isinstance(value, str) else "...")


def _short_pair(old: Any, new: Any) -> tuple[str, str]:
    """Both values cut to size around their first difference, so the change stays visible."""
    if isinstance(old, str) and isinstance(new, str):
        old, new = mask(old), mask(new)
    if isinstance(old, str) and isinstance(new, str) and max(len(old), len(new)) > _MAX_VALUE:
        start = next(
            (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
            min(len(old), len(new)),
        )
        if start > 30:
            old, new = "..." + old[start - 20 :], "..." + new[start - 20 :]
    return _short(old), _short(new)


def _display_path(path: str) -> str:
    """``/{v}/models/m:generateContent`` -> ``models/m:generateContent`` (prefix dropped)."""
    return _VERSIONED_PATH.sub("", path) or path


def _by_name(value: Any) -> Any:
    """Function declarations keyed by name, so an added tool reads as added, not shifted."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            names = (
                [d.get("name") for d in item if isinstance(d, dict)]
                if isinstance(item, list)
                else []
            )
            if (
                key in ("functionDeclarations", "function_declarations")
                and names
                and len(names) == len(item)
                and all(isinstance(n, str) for n in names)
                and len(set(names)) == len(names)
            ):
                out[key] = {name: _by_name(d) for name, d in zip(names, item, strict=True)}
            else:
                out[key] = _by_name(item)
        return out
    if isinstance(value, list):
        return [_by_name(item) for item in value]
    return value


def _get(value: Any, path: list[Any]) -> Any:
    for part in path:
        value = value[part]
    return value


def _collapse(path: list[Any]) -> list[Any]:
    """Report inside a function call's args or response, or a system instruction, as one change."""
    for index in range(len(path) - 1):
        if (path[index], path[index + 1]) in (
            ("functionResponse", "response"),
            ("functionCall", "args"),
        ):
            return path[: index + 2]
    if path and path[0] in ("systemInstruction", "system_instruction"):
        return path[:1]
    return path


def _instruction_text(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("parts"), list):
        texts = [p.get("text") for p in value["parts"] if isinstance(p, dict)]
        strings = [t for t in texts if isinstance(t, str)]
        if strings and len(strings) == len(texts):
            return "\n".join(strings)
    return value


def _turn_summary(turn: Any) -> str:
    if not isinstance(turn, dict):
        return _short(turn, 40)
    parts = turn.get("parts")
    kinds: list[str] = []
    if not isinstance(parts, list):
        parts = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if "functionCall" in part:
            kinds.append(f"functionCall {part['functionCall'].get('name', '?')}")
        elif "functionResponse" in part:
            kinds.append(f"functionResponse {part['functionResponse'].get('name', '?')}")
        elif "text" in part:
            kinds.append(f"text {_short(part['text'], 40)}")
        else:
            kinds.append(next(iter(part), "?"))
    return f"{turn.get('role', '?')}: {', '.join(kinds) or 'no parts'}"


def _contents_summary(old: Any, new: Any) -> str | None:
    """One line when one history extends the other; None when they diverge."""
    if not (isinstance(old, list) and isinstance(new, list)) or len(old) == len(new):
        return None
    shorter, longer = (old, new) if len(old) < len(new) else (new, old)
    if longer[: len(shorter)] != shorter:
        return None
    count = len(longer) - len(shorter)
    turns = f"{count} turn{'s' if count != 1 else ''}"
    if len(new) > len(old):
        first = f"; first added: contents[{len(old)}] {_turn_summary(new[len(old)])}"
        return f"contents: {turns} added (the agent sent a longer history){first}"
    return f"contents: {turns} fewer (the agent sent a shorter history than recorded)"


def _body_differences(old: Any, new: Any) -> list[str]:
    """Readable lines for what changed from the recorded body ``old`` to the request's ``new``."""
    lines: list[str] = []
    if isinstance(old, dict) and isinstance(new, dict):
        summary = _contents_summary(old.get("contents"), new.get("contents"))
        if summary is not None:
            lines.append(summary)
            old = {k: v for k, v in old.items() if k != "contents"}
            new = {k: v for k, v in new.items() if k != "contents"}
    old, new = _by_name(old), _by_name(new)
    # Imported here: deepdiff pulls in numpy and pandas (about a second), and only a miss
    # needs it; `rec check`, `rec status` and every hit never do.
    from deepdiff import DeepDiff

    tree = DeepDiff(old, new, view="tree", verbose_level=2, threshold_to_diff_deeper=0)
    seen: set[str] = set()
    for change in (
        "type_changes",
        "values_changed",
        "dictionary_item_added",
        "dictionary_item_removed",
        "iterable_item_added",
        "iterable_item_removed",
    ):
        for level in tree.get(change, []):
            raw = list(level.path(output_format="list"))
            path = _collapse(raw)
            where = render_json_path(path) or "body"
            if where in seen:
                continue
            seen.add(where)
            if path != raw or change in ("type_changes", "values_changed"):
                before, after = _get(old, path), _get(new, path)
                if path[:1] in (["systemInstruction"], ["system_instruction"]):
                    before, after = _instruction_text(before), _instruction_text(after)
                shown = _short_pair(before, after)
                lines.append(f"{where} changed: {shown[0]} -> {shown[1]}")
            elif change.startswith("dictionary_item"):
                parent = render_json_path(path[:-1])
                verb = "added" if change.endswith("added") else "removed"
                value = level.t2 if verb == "added" else level.t1
                scalar = f" ({_short(value, 40)})" if not isinstance(value, (dict, list)) else ""
                lines.append(f"{parent + ': ' if parent else ''}{path[-1]} {verb}{scalar}")
            else:
                verb = "added" if change.endswith("added") else "removed"
                value = level.t2 if verb == "added" else level.t1
                lines.append(f"{where} {verb}: {_short(value)}")
    return lines


def a2a_differences(recorded: Any, wanted: Any, *, rest: bool = False) -> list[str]:
    """What changed from a recorded A2A call to the one sent, in A2A terms.

    ``recorded`` and ``wanted`` are parsed request bodies (JSON-RPC, or with ``rest`` the
    HTTP+JSON binding's); paths are the call's own (``message.parts[0].text changed: "…"
    -> "…"``), the ids that change every run left out.
    """
    if rest:
        return _body_differences(a2a_rest_canonical(recorded), a2a_rest_canonical(wanted))
    old_method, old = a2a_calls(recorded)
    new_method, new = a2a_calls(wanted)
    lines = [f"method changed: {old_method} -> {new_method}"] if old_method != new_method else []
    return lines + _body_differences(old, new)


def _differences(recorded: CanonicalRequest, wanted: CanonicalRequest) -> list[str]:
    lines: list[str] = []
    if recorded.method != wanted.method:
        lines.append(f"method changed: {recorded.method} -> {wanted.method}")
    if recorded.path != wanted.path:
        lines.append(
            f"path changed: {_display_path(recorded.path)} -> {_display_path(wanted.path)}"
        )
    if recorded.query != wanted.query:
        old, new = dict(recorded.query), dict(wanted.query)
        for name in sorted(old.keys() | new.keys()):
            if name not in new:
                lines.append(f"query: {name}={old[name]} removed")
            elif name not in old:
                lines.append(f"query: {name}={new[name]} added")
            elif old[name] != new[name]:
                lines.append(f"query: {name} changed: {old[name]} -> {new[name]}")
    if recorded.body_kind != wanted.body_kind:
        lines.append(f"body changed: {recorded.body_kind} -> {wanted.body_kind}")
    elif recorded.body_text != wanted.body_text:
        lines.extend(_body_differences(recorded.body, wanted.body))
    return lines


def explain_miss(
    request: RecordedRequest,
    nearest: Exchange | None,
    *,
    rules: MatchRules | None = None,
    cassette_path: str | Path | None = None,
    known_secrets: Collection[str] = (),
    max_lines: int = 12,
    hints: MissHints = CLI_HINTS,
) -> ReplayMiss:
    """The error for a request that no recording matches.

    Args:
        request: the request as the client sent it (credentials may still be in it; they
            are masked).
        nearest: the most similar recording (``MatchIndex.nearest``), or None.
        rules: the match rules in force (the diff ignores the same paths).
        cassette_path: the cassette (or directory) being replayed, named in the message.
        known_secrets: credential values to mask besides key-shaped ones.
        max_lines: differences shown before "... and N more".
        hints: the options of the front end in use, named in the fix (rec's CLI,
            pytest or ``AgentEvaluator``: :class:`MissHints`).

    Returns:
        A :class:`ReplayMiss` (not raised) whose ``diff`` lists the differences and whose
        ``ignore`` is the option that would leave the first differing field out of matching.
    """
    wanted = canonical_request(request, rules)
    shown = f"{wanted.method} {_urlpath(request.url)}"
    fix = f"{hints.rerecord}, or loosen matching with {hints.ignore_option('PATH')}"
    if nearest is None:
        return ReplayMiss(
            mask(f"no recording matches {shown}; the cassette has no recordings", known_secrets),
            path=cassette_path,
            fix=fix,
        )
    recorded = canonical_request(nearest.request, rules)
    lines = _differences(recorded, wanted) or [
        "no difference in method, path, query or body "
        "(were the match rules changed after the index was built?)"
    ]
    path = suggested_ignore(lines)  # every difference: one past max_lines may break a call
    ignore = hints.ignore_option(path) if path else None
    fix = _miss_fix(fix, hints, ignore, breaks=bool(changed_tool_calls(lines)))
    lines = _at_most(lines, max_lines)
    problem = (
        f"no recording matches {shown}; nearest is exchanges[{nearest.id}] "
        f"({nearest.request.method.upper()} {_urlpath(nearest.request.url)})"
    )
    return ReplayMiss(
        mask(problem, known_secrets),
        path=cassette_path,
        where=f"exchanges[{nearest.id}]",
        fix=fix,
        diff=[mask(line, known_secrets) for line in lines],
        ignore=ignore,
    )


def _miss_fix(fix: str, hints: MissHints, ignore: str | None, *, breaks: bool) -> str:
    """The fix a miss names: the ``--ignore`` that leaves its first difference out, or
    re-recording alone when a changed tool declaration could break a recorded call."""
    if ignore:
        return f"{fix} (here: {ignore})"
    if breaks:
        return (
            f"{hints.rerecord}: a tool's declaration changed in a way the recorded calls of it "
            "may no longer fit (its parameters, or the tool removed), so ignoring it could "
            "pass a broken call"
        )
    return fix


def _at_most(lines: list[str], max_lines: int) -> list[str]:
    """The first ``max_lines`` differences, and a line counting the rest."""
    if len(lines) <= max_lines:
        return lines
    extra = len(lines) - max_lines
    return lines[:max_lines] + [f"... and {extra} more difference{'s' if extra != 1 else ''}"]


def suggested_ignore(diff: Sequence[str]) -> str | None:
    """A request-body path that ``--ignore`` could leave out of matching, read from the
    first line of a miss's diff (None when the first difference is not in such a field:
    the path, method, query or conversation history)."""
    if not diff:
        return None
    first_key = re.match(r"^([A-Za-z_]+)(?:\[\d+\])?(?:\.[A-Za-z_]+)?", diff[0])
    if first_key and first_key.group(1) not in ("path", "method", "query", "body", "contents"):
        if first_key.group(1) == "tools" and changed_tool_calls(diff):
            return None  # ignoring the tools would hide a change the recorded calls break on
        return first_key.group(0)
    return None


_HARMLESS_TOOL_CHANGE = re.compile(
    r"^tools(\[\d+\] added: |\[\d+\]\.(functionDeclarations|function_declarations)"
    r"(: \S+ added$|\.\w+\.description changed: ))"
)
"""A difference in the tools that every recorded call still fits: a declaration's
description, or a tool added."""


def changed_tool_calls(diff: Sequence[str]) -> bool:
    """Whether a miss's diff changes the tools in a way recorded calls may not fit: a
    declaration's parameters (a parameter renamed, added, removed or retyped), a tool
    removed or renamed, or anything else about the tools but a description or a new tool."""
    return any(line.startswith("tools") and not _HARMLESS_TOOL_CHANGE.match(line) for line in diff)


def _urlpath(url: str) -> str:
    """The path of a URL (query dropped: it may carry a key)."""
    return urlsplit(url).path or "/"


_MISS_REASON = "REC_REPLAY_MISS"
"""``ErrorInfo.reason`` in the error envelope of a miss (``domain`` is ``rec``)."""


def miss_error_body(miss: ReplayMiss, *, miss_id: str | None = None) -> dict[str, Any]:
    """The Google error envelope sent to the client for a miss (with :data:`MISS_HTTP_STATUS`).

    google-genai raises it as ``errors.ClientError`` whose message is the miss explanation.
    With ``miss_id`` the envelope's ``details`` carry a ``google.rpc.ErrorInfo`` naming it,
    so whoever catches the client's error can look the miss up (:func:`miss_id_in`).
    """
    details = (
        [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": _MISS_REASON,
                "domain": "rec",
                "metadata": {"miss_id": miss_id},
            }
        ]
        if miss_id is not None
        else None
    )
    return google_error(MISS_HTTP_STATUS, str(miss), "NOT_FOUND", details=details)


_LIVE_MISS = re.compile(r"^rec replay miss (\S+):")


def live_close_reason(miss_id: str) -> str:
    """The close reason of a Live socket that left its recording (at most 123 bytes, as a
    WebSocket close reason must be); google-genai raises it as an ``APIError`` whose
    ``details`` is this text (:func:`miss_id_in` reads the id back)."""
    return f"rec replay miss {miss_id}: the Live session left its recording (see rec's report)"


def miss_id_in(envelope: object) -> str | None:
    """The miss id in a Google error envelope (as google-genai's ``APIError.details`` holds it),
    or in a Live socket's close reason (:func:`live_close_reason`).

    None when the envelope is not one of rec's misses.
    """
    if isinstance(envelope, str):
        found_live = _LIVE_MISS.match(envelope)
        return found_live.group(1) if found_live else None
    if isinstance(envelope, list) and len(envelope) == 1:  # some clients wrap it in a list
        envelope = envelope[0]
    error = envelope.get("error") if isinstance(envelope, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    for detail in details if isinstance(details, list) else []:
        if not isinstance(detail, dict) or detail.get("reason") != _MISS_REASON:
            continue
        metadata = detail.get("metadata")
        found = metadata.get("miss_id") if isinstance(metadata, dict) else None
        if isinstance(found, str):
            return found
    return None
