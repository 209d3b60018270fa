"""The private names of google-adk the replayer uses.

rec reaches behind ADK's public API only where ADK offers nothing public and parity with
``adk eval`` needs ADK's own code. Each access is a function here, checked by
``tests/replayer/test_compat.py``; when an ADK release renames or drops a name, the
function raises :class:`AdkChanged` naming the name, the installed version and the one
rec was built against, instead of an ``AttributeError`` deep inside a run.

(google-genai's private default base URLs and ADK's MCP session manager are reached from
the recorder, ``recorder/_traffic/_compat.py``, which defines :class:`AdkChanged`.
google-genai's ``BaseApiClient``, whose private static methods build a client's TLS
contexts, is reached here for replay: :func:`genai_api_client`.)
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import re
import sys
from pathlib import Path
from typing import Any

from recorder._traffic import AdkChanged

__all__ = [
    "KNOWN_ADK",
    "AdkChanged",
    "adk_legacy_eval_set",
    "adk_efficiency_evaluator",
    "adk_efficiency_metrics",
    "adk_multi_run_aggregator",
    "adk_normalize_live_transcriptions",
    "adk_retry_plugin",
    "adk_tool_declaration",
    "genai_api_client",
    "genai_uses_httpx",
    "installed_adk_version",
    "set_adk_custom_function_path",
]

KNOWN_ADK = "2.15"
"""The google-adk release these accesses were written against."""


@functools.cache
def installed_adk_version() -> str | None:
    """The installed google-adk's version (None: none installed), read from
    ``google/adk/version.py`` on ``sys.path``: importing google-adk, or
    ``importlib.metadata``, would cost ``rec score`` more than its whole start."""
    for folder in sys.path:
        path = os.path.join(folder or ".", "google", "adk", "version.py")
        try:
            with open(path, encoding="utf-8") as handle:
                found = re.search(r"__version__\s*=\s*[\"']([^\"']+)", handle.read())
        except OSError:
            continue
        return found[1] if found else None
    return None


def _adk_version() -> str:
    found = installed_adk_version()
    if found is not None:
        return found
    try:
        return str(importlib.import_module("google.adk.version").__version__)
    except (ImportError, AttributeError):
        return "unknown"


def _changed(name: str, used_for: str) -> AdkChanged:
    return AdkChanged(
        f"google-adk {_adk_version()} has no {name} (rec uses it for {used_for}; "
        f"written against google-adk {KNOWN_ADK})",
        path="google-adk",
        fix=f"Install google-adk {KNOWN_ADK}.x, the release rec is tested against",
    )


def adk_retry_plugin() -> Any:
    """ADK eval's ``EnsureRetryOptionsPlugin`` (retries on 408/429/5xx), for live runs.

    Private: ``google.adk.evaluation._retry_options_utils.EnsureRetryOptionsPlugin``.
    """
    name = "google.adk.evaluation._retry_options_utils.EnsureRetryOptionsPlugin"
    try:
        module = importlib.import_module("google.adk.evaluation._retry_options_utils")
        plugin = module.EnsureRetryOptionsPlugin
    except (ImportError, AttributeError):
        raise _changed(name, "live runs retrying as `adk eval` does") from None
    return plugin(name="ensure_retry_options")


def adk_legacy_eval_set(path: Path, initial_session: dict[str, Any]) -> Any:
    """ADK's ``EvalSet`` for a legacy eval file, converted by ADK's own migration.

    Private: ``AgentEvaluator._get_eval_set_from_old_format``.
    """
    name = "google.adk.evaluation.agent_evaluator.AgentEvaluator._get_eval_set_from_old_format"
    from google.adk.evaluation.agent_evaluator import AgentEvaluator

    migrate = getattr(AgentEvaluator, "_get_eval_set_from_old_format", None)
    if migrate is None:
        raise _changed(name, "reading legacy eval files as AgentEvaluator does")
    config = AgentEvaluator.find_config_for_test_file(str(path))
    return migrate(str(path), config, initial_session)


def set_adk_custom_function_path(metric: Any, path: str | None) -> None:
    """Tell ADK's metric registry where a custom metric's function is.

    ADK's ``get_eval_metrics_from_config`` sets the private attribute
    ``EvalMetric._config_custom_function_path``, which the registry reads; an
    ``EvalMetric`` built by hand must set it the same way.
    """
    name = "google.adk.evaluation.eval_metrics.EvalMetric._config_custom_function_path"
    private = getattr(type(metric), "__private_attributes__", {})
    if "_config_custom_function_path" not in private:
        raise _changed(name, "custom metrics scored by ADK's own evaluator")
    metric._config_custom_function_path = path


_AGGREGATOR = "google.adk.evaluation._eval_case_result_multi_run_aggregator"


def adk_multi_run_aggregator() -> Any | None:
    """ADK's multi-run aggregator (google-adk 2.15 and later), or None for an older ADK.

    Private: ``google.adk.evaluation._eval_case_result_multi_run_aggregator``, whose
    ``summarize_eval_case_results`` is what ``adk eval`` and ADK's local eval service judge
    a case's runs with, and ``check_pass_k_criteria_against_num_runs`` its check before any
    run.
    """
    try:
        module = importlib.import_module(_AGGREGATOR)
    except ImportError:
        return None
    for attr in ("summarize_eval_case_results", "check_pass_k_criteria_against_num_runs"):
        if not callable(getattr(module, attr, None)):
            raise _changed(f"{_AGGREGATOR}.{attr}", "multi_run_config judged as adk eval does")
    return module


def adk_efficiency_metrics() -> tuple[str, ...]:
    """The informational efficiency metrics ADK adds to every eval (google-adk 2.15 and
    later), in ADK's order, or () for an older or missing google-adk.

    Read from ``google.adk.evaluation.eval_config.append_default_efficiency_metrics``
    given no metrics: what it appends is what ``adk eval`` and ADK's local eval service
    score beside the configured metrics.
    """
    try:
        module = importlib.import_module("google.adk.evaluation.eval_config")
    except ImportError:
        return ()
    append = getattr(module, "append_default_efficiency_metrics", None)
    if append is None:
        return ()
    return tuple(str(metric.metric_name) for metric in append([]))


_EFFICIENCY = "google.adk.evaluation._efficiency_evaluators"
_EFFICIENCY_EVALUATORS = {
    "tool_call_count_v1": "_ToolCallCountV1Evaluator",
    "inference_call_count_v1": "_InferenceCallCountV1Evaluator",
    "token_usage_v1": "_TokenUsageV1Evaluator",
    "invocation_duration_v1": "_InvocationDurationV1Evaluator",
}
"""The classes ADK's metric registry maps its efficiency metrics to."""


def adk_efficiency_evaluator(metric: Any) -> Any:
    """ADK's evaluator for one of its efficiency metrics (``metric``: ADK's ``EvalMetric``).

    Private: the classes of ``google.adk.evaluation._efficiency_evaluators``, the ones ADK's
    metric registry gives for these names, built directly because importing the registry
    (every judge ADK has) costs seconds. A release that moved them gets the registry's.
    """
    try:
        module = importlib.import_module(_EFFICIENCY)
        evaluator = getattr(module, _EFFICIENCY_EVALUATORS[metric.metric_name])
    except (ImportError, AttributeError, KeyError):
        from google.adk.evaluation.metric_evaluator_registry import (
            DEFAULT_METRIC_EVALUATOR_REGISTRY,
        )

        return DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(metric)
    return evaluator(eval_metric=metric)


def adk_normalize_live_transcriptions(events: list[Any]) -> list[Any]:
    """ADK's own step for Live runs: audio replies become their transcriptions' text.

    Private: ``EvaluationGenerator._normalize_live_transcriptions``; a google-adk without
    it leaves the events as they are (older releases did no such step).
    """
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    normalize = getattr(EvaluationGenerator, "_normalize_live_transcriptions", None)
    return list(events) if normalize is None else list(normalize(events))


def adk_tool_declaration(tool: Any) -> Any:
    """The ``FunctionDeclaration`` ADK sends the model for ``tool`` (None: it sends none).

    Private: ``BaseTool._get_declaration``; a tool without it, or one whose declaration
    cannot be built, gives None (mock mode then does not check the call's args).
    """
    declare = getattr(tool, "_get_declaration", None)
    if declare is None:
        return None
    try:
        return declare()
    except Exception:  # noqa: BLE001 - a tool that cannot declare itself is not judged
        return None


def stop_forkserver() -> bool:
    """Stop multiprocessing's fork server if it runs (True if it did). Private fields: the
    standard library has no public way to stop it."""
    import os
    import signal
    from multiprocessing import forkserver

    server: Any = forkserver._forkserver
    pid = server._forkserver_pid
    if pid is None:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    server._stop()
    return True


def stop_resource_tracker() -> None:
    """Close multiprocessing's resource tracker and wait for it (a private method)."""
    from multiprocessing import resource_tracker

    tracker: Any = resource_tracker._resource_tracker
    tracker._stop()


def genai_uses_httpx(options: Any) -> bool:
    """True iff google-genai builds a client with ``options`` on httpx, not httpx2 (private:
    ``google.genai._api_client._get_http_client_backend``; google-genai 3 prefers httpx2
    where it is installed). A release without the choice uses httpx."""
    try:
        backend = importlib.import_module("google.genai._api_client")._get_http_client_backend
    except (ImportError, AttributeError):
        return True
    try:
        try:
            chosen = backend(options)
        except TypeError:  # google-genai 2 reads the environment only
            chosen = backend()
    except ImportError:
        return False
    return bool(chosen == "httpx")


def genai_api_client() -> Any:
    """google-genai's ``BaseApiClient`` (private: ``google.genai._api_client``), or None
    where a release has no such class: replay then leaves its clients as they are built
    (``replayer._model_clients.shared_tls_for_clients``)."""
    try:
        return importlib.import_module("google.genai._api_client").BaseApiClient
    except (ImportError, AttributeError):
        return None
