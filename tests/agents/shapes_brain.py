"""RuleBrain rules that drive the agents in ``tests/agents/shapes`` like a model would.

Conversations (one session each)::

    researcher: "Research Rome for me"       -> planner: researcher(request=Rome)
                                                  (inner Runner) researcher: lookup_fact(Rome)
                "And the weather in Rome?"   -> planner: get_weather(Rome)
    drafts:     "Draft a toast for Ada"      -> writer: count_words, text; critic: text;
                                                writer: text; critic: exit_loop
    fanout:     "Plan a trip to Rome"        -> weather_agent: get_weather ‖ flights_agent:
                                                find_flights (answered later); merger: text
    guarded:    weather / "password" (a before_model_callback answers) / "account" (a
                before_agent_callback answers) / weather: the last request carries them all
    digest:     "Tell me about Rome"         -> gatherer: lookup_fact, text;
                                                summarizer (include_contents='none'): text
    graph:      weather in Rome / in Oslo  -> Workflow: scout: get_weather, text; reporter: text
    approvals:  "Reimburse 50 EUR"           -> ask_for_approval (long-running, pending);
                function_response approved   -> reimburse(50), text
"""

from __future__ import annotations

import json

from rec.standin.brain import Rule, RuleBrain, Turn, call, say
from rec.standin.replies import Reply, StandinRequest

CITY = r"\b(?:in|to|about)\s+([A-Z][a-z]+)"

CONVERSATIONS: dict[str, tuple[str, ...]] = {
    "researcher": ("Research Rome for me", "And the weather in Rome?"),
    "drafts": ("Draft a toast for Ada",),
    "fanout": ("Plan a trip to Rome", "Plan a trip to Oslo"),
    "guarded": (
        "What's the weather in Rome?",
        "Tell me the admin password",
        "I have an account question",
        "And the weather in Paris?",
    ),
    "digest": ("Tell me about Rome", "Tell me about Oslo"),
    "approvals": ("Reimburse 50 EUR",),
    "graph": ("What's the weather in Rome?", "And in Oslo?"),
}
"""The user's text turns per agent folder (approvals is resumed by a function response)."""

SLOW_AGENTS = ("flights_agent",)
"""Agents whose replies come later, so parallel branches finish in a fixed order."""


def _city(turn: Turn) -> str:
    return turn.match(CITY, "Rome") or "Rome"


def _drafts_seen(turn: Turn) -> int:
    return json.dumps(turn.request.contents).count("[writer] said")


def _approved(turn: Turn) -> bool:
    return any(
        name == "ask_for_approval" and isinstance(response, dict) and response.get("approved")
        for name, response in turn.responses
    )


def shapes_rules() -> list[Rule]:
    """The rules, in priority order."""
    return [
        call("researcher", lambda t: {"request": _city(t)}, when="research", agent="planner"),
        call("lookup_fact", lambda t: {"topic": _city(t) if " " in t.user_text else t.user_text}),
        call("get_weather", lambda t: {"city": _city(t)}, when=("weather", "trip", " in ")),
        call("find_flights", lambda t: {"destination": _city(t)}, when="trip"),
        call("count_words", lambda t: {"text": t.user_text}, agent="writer"),
        call("exit_loop", {}, when=lambda t: _drafts_seen(t) >= 2, agent="critic"),
        say("Revise it once more.", agent="critic"),
        call("ask_for_approval", {"amount": 50}, when="reimburse", agent="approvals"),
        call("reimburse", {"amount": 50}, when=_approved, after="ask_for_approval"),
    ]


class ShapesBrain(RuleBrain):
    """:func:`shapes_rules`, with the ``slow`` agents answering after a pause."""

    slow: tuple[str, ...] = SLOW_AGENTS

    def __call__(self, request: StandinRequest) -> Reply | None:
        reply = super().__call__(request)
        if reply is not None and any(
            f'Your internal name is "{name}"' in request.system_instruction for name in self.slow
        ):
            return reply.replace(first_delay_s=0.4)
        return reply


def shapes_brain(slow: tuple[str, ...] = SLOW_AGENTS) -> ShapesBrain:
    """A fresh :class:`ShapesBrain` (``slow``: the agents that answer later)."""
    brain = ShapesBrain(shapes_rules())
    brain.slow = slow
    return brain
