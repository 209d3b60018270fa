"""How the stand-in model answers the OpenAPI rates agent (apart, so that importing it does
not load the agent module and fetch its spec)."""

from __future__ import annotations

from rec.standin.brain import RuleBrain, call, say


def openapi_brain() -> RuleBrain:
    """Call the spec's one operation, then say the rate."""
    return RuleBrain(
        [
            call("get_rate", lambda t: {"to": t.match(r"\b(USD|GBP|JPY)\b")}, when="rate"),
            say("Here is the rate."),
        ]
    )
