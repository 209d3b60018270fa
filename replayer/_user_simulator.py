"""ADK's user simulator for a ``conversation_scenario`` case, built as ``adk eval`` builds it.

ADK's ``UserSimulatorProvider`` is given the eval config's ``user_simulator_config`` (ADK's
own ``EvalConfig`` parses it, so its ``type`` discriminator and legacy default apply) and
provides the simulator for the case: ``LlmBackedUserSimulator`` for a scenario, which
sends the starting prompt, then asks its model for each next user message until it says
``</finished>`` or ``max_allowed_invocations`` is reached. Its model is created by ADK's
``LLMRegistry`` and calls google-genai like the agent's, so rec's proxy answers it from
the recording (and records it in record and auto modes).
"""

from __future__ import annotations

import warnings
from typing import Any

from cassettes._errors import InputError
from cassettes._evalset import EvalCase

__all__ = ["user_simulator_for"]


def user_simulator_for(case: EvalCase, config: dict[str, Any] | None) -> Any:
    """The ADK ``UserSimulator`` that plays the user of ``case`` (a scenario case).

    Raises:
        InputError: the scenario or the ``user_simulator_config`` is not one ADK accepts.
    """
    from google.adk.evaluation.eval_case import EvalCase as AdkEvalCase
    from google.adk.evaluation.eval_config import EvalConfig as AdkEvalConfig
    from google.adk.evaluation.simulation.user_simulator_provider import UserSimulatorProvider
    from pydantic import ValidationError

    try:
        simulator_config = (
            AdkEvalConfig.model_validate({"user_simulator_config": config}).user_simulator_config
            if config
            else None
        )
    except ValidationError as exc:
        raise InputError(
            f"ADK rejects this user_simulator_config: {exc.errors()[0]['msg']}",
            path="eval config",
            where="user_simulator_config",
            fix='Write {"model": ..., "max_allowed_invocations": ..., "custom_instructions": '
            "...} as ADK documents it",
        ) from None
    try:
        adk_case = AdkEvalCase.model_validate(case.model_dump(exclude_none=True, by_alias=False))
    except ValidationError as exc:
        raise InputError(
            f"ADK rejects this conversation_scenario: {exc.errors()[0]['msg']}",
            path=f"eval case {case.eval_id}",
            where="conversation_scenario",
            fix="Give it a starting_prompt and a conversation_plan (and optionally a user_persona)",
        ) from None
    with warnings.catch_warnings():
        # ADK marks the simulator experimental on every use; `adk eval` shows no such line.
        warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]", category=UserWarning)
        return UserSimulatorProvider(user_simulator_config=simulator_config).provide(adk_case)
