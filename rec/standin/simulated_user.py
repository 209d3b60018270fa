"""The stand-in plays ADK's simulated user, and judges it: answers to the user simulator's prompts.

ADK's ``LlmBackedUserSimulator`` (``conversation_scenario`` eval cases) sends its model one
user text: its instructions ("You are a Simulated User designed to test an AI Agent"), the
conversation plan (under ``# Conversation Plan``), then the conversation so far as
``author: text`` paragraphs (under ``# Conversation History``). The
stand-in answers with the next step of the plan, and with the stop signal ADK waits for
(``</finished>``) once every step has been said::

    plan: "Ask for the weather in Tokyo.
           Then ask for the weather in Rome."

    history with 1 user turn (the starting prompt)  -> "Ask for the weather in Tokyo."
    history with 2 user turns                        -> "Then ask for the weather in Rome."
    history with 3 user turns                        -> "</finished>"

The plan's steps are its non-empty lines (list markers such as ``1.`` or ``-`` dropped),
or its sentences when it is one line. ``per_turn_user_simulator_quality_v1``'s judge
prompt ("evaluating the quality of a User Simulator") gets a verdict of valid. Both
answers depend only on the prompt, like every answer of the stand-in's brain.
"""

from __future__ import annotations

import json
import re

__all__ = ["STOP_SIGNAL", "simulated_user_text", "user_simulator_verdict"]

STOP_SIGNAL = "</finished>"
"""What ADK's simulator says to end the conversation (its ``_STOP_SIGNAL``)."""

_SIMULATOR_MARK = "You are a Simulated User designed to test an AI Agent"
_JUDGE_MARK = "evaluating the quality of a User Simulator"
_HISTORY_START = re.compile(r"^user: ", re.MULTILINE)
_HEADED = re.compile(
    r"^#+\s*Conversation Plan\s*$(?P<plan>.*?)^#+\s*Conversation History\s*$(?P<history>.*)",
    re.MULTILINE | re.DOTALL | re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def simulated_user_text(prompt: str) -> str | None:
    """The simulated user's next message for an ADK user-simulator prompt (None: not one)."""
    if not prompt.lstrip().startswith(_SIMULATOR_MARK):
        return None
    plan, history = _plan_and_history(prompt)
    said = len(_HISTORY_START.findall(history))
    steps = _plan_steps(plan)
    # The starting prompt was the first user turn; step k comes after k + 1 user turns.
    step = max(said - 1, 0)
    return steps[step] if step < len(steps) else STOP_SIGNAL


def user_simulator_verdict(prompt: str) -> str | None:
    """The judge's answer to a ``per_turn_user_simulator_quality_v1`` prompt (None: not one)."""
    if _JUDGE_MARK not in prompt[:500]:
        return None
    verdict = {"reasoning": "The response follows the conversation plan.", "is_valid": "valid"}
    return json.dumps(verdict)


def _plan_and_history(prompt: str) -> tuple[str, str]:
    """The conversation plan and the history in a simulator prompt.

    ADK's templates put them under ``# Conversation Plan`` and ``# Conversation History``
    headings; without those (custom instructions), the history starts at the first
    ``user:`` paragraph and the plan is the block before it.
    """
    headed = _HEADED.search(prompt)
    if headed is not None:
        return headed.group("plan"), headed.group("history")
    first = _HISTORY_START.search(prompt)
    if first is None:
        return "", ""
    blocks = [b.strip() for b in re.split(r"\n[ \t]*\n[ \t]*\n", prompt[: first.start()])]
    blocks = [b for b in blocks if b]
    return (blocks[-1] if blocks else ""), prompt[first.start() :]


def _plan_steps(plan: str) -> list[str]:
    """The conversation plan's steps (its lines, or its sentences when it is one line)."""
    lines = [_LIST_MARKER.sub("", line).strip() for line in plan.splitlines()]
    lines = [line for line in lines if line]
    if len(lines) > 1:
        return lines
    return [s.strip() for s in _SENTENCE_END.split(plan) if s.strip()]
