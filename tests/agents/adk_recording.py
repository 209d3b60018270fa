"""Record any ADK agent against a fresh stand-in, through rec's in-process recorder; run
ADK's own eval service on it against a fresh stand-in (the parity oracle); and the
stand-in's answers for the capital agents."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import rec
from rec.standin.replies import FAKE_API_KEY, Reply, Responder, StandinRequest
from rec.standin.server import StandinGemini
from tests.factories import usage_reply

__all__ = [
    "CAPITAL_AGENT",
    "USAGE",
    "WaveringCapitals",
    "adk_eval",
    "capital_answers",
    "drive_adk",
    "record_adk",
]

CAPITAL_AGENT = Path(__file__).resolve().parent / "capital"
"""One LlmAgent with no tools: one model call per turn."""

USAGE = {
    "promptTokenCount": 100,
    "candidatesTokenCount": 7,
    "thoughtsTokenCount": 3,
    "cachedContentTokenCount": 40,
    "totalTokenCount": 110,
}
"""The usage a stand-in reply reports (thoughts and cached tokens included)."""


def capital_answers(usage: dict[str, int]) -> Responder:
    """The stand-in's answers for the capital agents (``capital``, ``capital_lookup``):
    Paris for France, Rome for Italy, Italy first looked up with ``lookup_capital`` where
    the request offers that tool; every reply reports ``usage``."""

    def answer(request: StandinRequest) -> Reply:
        said = json.dumps(request.contents)
        offered = "lookup_capital" in json.dumps(request.body)
        if "Italy" in said and offered and "functionResponse" not in said:
            call = {"name": "lookup_capital", "args": {"country": "Italy"}}
            return usage_reply({"functionCall": call}, usage=usage)
        return usage_reply({"text": "Rome." if "Italy" in said else "Paris."}, usage=usage)

    return answer


class WaveringCapitals:
    """The stand-in's answers for the ``capital`` agent, right three times of five for
    France (Paris, London, Paris, London, Paris, ...) and always for Italy (Rome); every
    reply reports :data:`USAGE`."""

    def __init__(self) -> None:
        self._france = itertools.cycle(["The capital is Paris.", "The capital is London."])

    def __call__(self, request: StandinRequest) -> Reply:
        if "France" in json.dumps(request.contents):
            return usage_reply({"text": next(self._france)}, usage=USAGE)
        return usage_reply({"text": "The capital is Rome."}, usage=USAGE)


async def drive_adk(
    agent: Any,
    app_name: str,
    conversations: Sequence[Sequence[str]],
    run_config: Any,
    capture: Path | None,
) -> None:
    """Run each conversation as one session of a Runner over ``agent`` (with rec's ADK
    capture plugin writing to ``capture`` when given)."""
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from recorder._adk_plugin import RecCapturePlugin

    sessions = InMemorySessionService()
    plugins = [RecCapturePlugin(path=capture)] if capture is not None else []
    app = App.model_construct(name=app_name, root_agent=agent, plugins=plugins)
    runner = Runner(app=app, session_service=sessions)
    try:
        for number, turns in enumerate(conversations):
            config = run_config[number] if isinstance(run_config, (list, tuple)) else run_config
            session = await sessions.create_session(app_name=app_name, user_id="user")
            for text in turns:
                message = types.Content(role="user", parts=[types.Part(text=text)])
                async for _ in runner.run_async(
                    user_id="user", session_id=session.id, new_message=message, run_config=config
                ):
                    pass
    finally:
        # Closing the runner closes the capture plugin, which stops capturing the tools'
        # HTTP traffic in this process (left open, it captured every later test's calls).
        await runner.close()


def record_adk(
    folder: Path,
    agent: Any,
    conversations: Sequence[Sequence[str]],
    *,
    responder: Responder,
    app_name: str,
    name: str = "recording",
    run_config: Any = None,
    clock: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
    capture: bool = False,
) -> Path:
    """Run ``agent`` (an ADK root agent) through the recording proxy; return the EvalSet path.

    The stand-in answers with ``responder`` and is stopped afterwards; each conversation is
    one session, its texts the user turns; ``run_config`` (or a list, one per conversation)
    is passed to ``Runner.run_async``; the agent runs inside ``clock()`` (e.g. a
    ``time_machine.travel``). With ``capture`` rec's ADK capture plugin rides along, so the
    EvalSet is ADK's exact sessions.
    """
    from cassettes._evalset_writer import adk_capture_path

    with StandinGemini(responder) as api, pytest.MonkeyPatch.context() as env:
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        with rec.record(folder, name=name, upstream=api.url, app_name=app_name):
            with clock():
                path = adk_capture_path(folder, name) if capture else None
                asyncio.run(drive_adk(agent, app_name, conversations, run_config, path))
    return folder / f"{name}.evalset.json"


def adk_eval(
    agent: Any,
    evalset: Path,
    config: Path,
    *,
    responder: Responder,
    app_name: str,
    num_runs: int = 1,
    results: Path | None = None,
) -> list[Any]:
    """ADK's own eval of ``evalset`` on ``adk eval``'s road (``LocalEvalService``): ``agent``
    (an ADK root agent) runs each case ``num_runs`` times against a fresh stand-in answering
    with ``responder``, and ADK scores and judges the runs for the eval config ``config``
    (its criteria and ``multi_run_config``). ADK's ``EvalCaseResult`` of each run; with
    ``results``, ADK also saves its EvalSetResult under that folder."""
    with StandinGemini(responder) as api, pytest.MonkeyPatch.context() as env:
        env.setenv("GOOGLE_API_KEY", FAKE_API_KEY)
        env.setenv("GOOGLE_GEMINI_BASE_URL", api.url)
        run = _adk_eval(agent, app_name, evalset, config, num_runs=num_runs, results=results)
        return asyncio.run(run)


async def _adk_eval(
    agent: Any,
    app_name: str,
    evalset: Path,
    config: Path,
    *,
    num_runs: int,
    results: Path | None,
) -> list[Any]:
    from google.adk.evaluation.base_eval_service import (
        EvaluateConfig,
        EvaluateRequest,
        InferenceConfig,
        InferenceRequest,
    )
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
    from google.adk.evaluation.eval_set import EvalSet
    from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
    from google.adk.evaluation.local_eval_service import LocalEvalService
    from google.adk.evaluation.local_eval_set_results_manager import (
        LocalEvalSetResultsManager,
    )

    eval_set = EvalSet.model_validate_json(evalset.read_text())
    sets = InMemoryEvalSetsManager()
    sets.create_eval_set(app_name=app_name, eval_set_id=eval_set.eval_set_id)
    for case in eval_set.eval_cases:
        sets.add_eval_case(app_name=app_name, eval_set_id=eval_set.eval_set_id, eval_case=case)
    saved = LocalEvalSetResultsManager(agents_dir=str(results)) if results is not None else None
    service = LocalEvalService(
        root_agent=agent, eval_sets_manager=sets, eval_set_results_manager=saved
    )
    request = InferenceRequest(
        app_name=app_name,
        eval_set_id=eval_set.eval_set_id,
        inference_config=InferenceConfig(num_runs=num_runs),
    )
    inferences = [r async for r in service.perform_inference(request)]
    adk_config = EvalConfig.model_validate_json(config.read_text())
    evaluate = EvaluateRequest(
        inference_results=inferences,
        evaluate_config=EvaluateConfig(
            eval_metrics=get_eval_metrics_from_config(adk_config),
            multi_run_config=adk_config.multi_run_config,
        ),
    )
    return [r async for r in service.evaluate(evaluate)]
