"""The judge metrics ADK scores through the Vertex AI evaluation service, made replayable.

``safety_v1``, ``response_evaluation_score`` and the ``multi_turn_*`` metrics do not call a
judge model through google-genai's base URL: ADK's evaluator builds an ``agentplatform``
client (an API key, else a project and location) and posts ``:evaluateInstances`` to
``aiplatform.googleapis.com`` over httpx. That call is one of the process's own HTTP calls,
so rec records it beside the tools' calls and replay answers it from the recording (a call
with no recording is refused, never sent). This module keeps such a call identical from run
to run and names a refused one:

- :func:`stable_invocations`: the invocation ids and function-call ids ADK makes up afresh
  in every run are replaced by fixed ones before the evaluator sees them (the service reads
  them as labels only), so a replayed run sends the recorded request;
- :func:`service_environment`: what the ``agentplatform`` client needs to be built, where
  nothing reaches the wire (a placeholder project for its storage clients; in replay, a
  project recorded with its placeholder key set aside);
- :func:`missing_recording`: the reason a metric whose call replay refused could not run.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from replayer._placeholder_credentials import PLACEHOLDER_API_KEY

__all__ = [
    "PLACEHOLDER_PROJECT",
    "SERVICE_METRICS",
    "error_reasons",
    "missing_recording",
    "refusal_in",
    "service_environment",
    "stable_invocations",
    "uses_service",
]

SERVICE_METRICS = frozenset(
    {
        "safety_v1",
        "response_evaluation_score",
        "multi_turn_task_success_v1",
        "multi_turn_trajectory_quality_v1",
        "multi_turn_tool_use_quality_v1",
    }
)
"""ADK 2.13's metrics whose evaluator calls the Vertex AI evaluation service."""

PLACEHOLDER_PROJECT = "rec-placeholder-project"
"""Given to the evaluation client's storage clients, which want a project to be built even
when an API key authenticates the call (the project is never sent with a key)."""

_REFUSED = "rec: "
"""How a call rec's replay refused begins (its connection error, which the evaluation
client keeps as the metric's error)."""
_REFUSAL_FIX = ". Re-record"
"""Where a refusal's own fix begins (written for a tool's call, replaced here)."""

_lock = threading.Lock()


def uses_service(metric: str) -> bool:
    """Whether ADK scores ``metric`` through the Vertex AI evaluation service."""
    return metric in SERVICE_METRICS


def stable_invocations(invocations: Sequence[Any]) -> None:
    """Give ADK's ``invocations`` (copies, changed in place) the same ids in every run.

    Invocation ids become ``turn_0``, ``turn_1``, ...; function calls and responses lose
    their ids (``adk-<uuid>``, made up by ADK in each run and never sent to a model).
    """
    for index, invocation in enumerate(invocations):
        invocation.invocation_id = f"turn_{index}"
        contents = [invocation.user_content, invocation.final_response]
        events = getattr(invocation.intermediate_data, "invocation_events", None) or []
        contents.extend(event.content for event in events)
        for content in contents:
            for part in getattr(content, "parts", None) or []:
                if part.function_call is not None:
                    part.function_call.id = None
                if part.function_response is not None:
                    part.function_response.id = None


@contextlib.contextmanager
def service_environment() -> Iterator[None]:
    """The environment the evaluation client is built in, for the block.

    With an API key and no ``GOOGLE_CLOUD_PROJECT``, a placeholder project (see
    :data:`PLACEHOLDER_PROJECT`). With rec's placeholder key and a project and location
    (a replay of a call recorded with a project: rec read them from the recording), no
    key, so the client builds the recorded project's URL. Everything else is left as it is;
    the variables are put back when the block ends.
    """
    changes: dict[str, str | None] = {}
    key = os.environ.get("GOOGLE_API_KEY")
    project = os.environ.get("GOOGLE_CLOUD_PROJECT")
    if key == PLACEHOLDER_API_KEY and project and os.environ.get("GOOGLE_CLOUD_LOCATION"):
        changes["GOOGLE_API_KEY"] = None
    elif key and not project:
        changes["GOOGLE_CLOUD_PROJECT"] = PLACEHOLDER_PROJECT
    with _lock:
        saved = {name: os.environ.get(name) for name in changes}
        _apply(changes)
        try:
            yield
        finally:
            _apply(saved)


def _apply(values: dict[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def error_reasons(result: Any) -> list[str]:
    """The errors ADK's evaluation-service result carries (its ``error`` rubric scores)."""
    scores = list(getattr(result, "overall_rubric_scores", None) or [])
    for per in getattr(result, "per_invocation_results", None) or []:
        scores.extend(per.rubric_scores or [])
    found: list[str] = []
    for score in scores:
        if score.rubric_id == "error" and score.rationale and score.rationale not in found:
            found.append(score.rationale)
    return found


def missing_recording(metric: str, errors: Sequence[str]) -> str | None:
    """Why ``metric`` could not run when replay refused its evaluation-service call (one
    of ``errors``), naming the call and the recording it is missing from; None when no
    call was refused."""
    refused = next((e for e in errors if e.startswith(_REFUSED)), None)
    if refused is None:
        return None
    told = refused[len(_REFUSED) :].split(_REFUSAL_FIX, 1)[0].replace("the tool call ", "", 1)
    return (
        f"{metric} could not run: it calls the Vertex AI evaluation service, and its call "
        f"{told}. Record it once with credentials (`rec replay --mode record` or "
        f"`--mode auto`, or `rec score --record-judge`), or leave {metric} out of the "
        "eval config"
    )


def refusal_in(exc: BaseException) -> str | None:
    """The message of a call replay refused somewhere in ``exc``'s chain of causes (a
    metric definition read from Cloud Storage fails through several wrappers, one of them
    google-api-core's ``RetryError`` with its own ``cause``), or None."""
    seen: set[int] = set()
    found: BaseException | None = exc
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        if str(found).startswith(_REFUSED):
            return str(found)
        cause = getattr(found, "cause", None)
        found = (
            found.__cause__
            or found.__context__
            or (cause if isinstance(cause, BaseException) else None)
        )
    return None
