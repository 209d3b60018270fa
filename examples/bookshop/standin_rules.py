"""Rules that let rec's stand-in model (``rec/standin/brain.py``) drive the bookshop assistant.

The bundled recording was made with them (``examples/record.py``); with a real key you
record against Gemini instead (examples/README.md).
"""

from __future__ import annotations

from rec.standin.brain import RuleBrain, Turn, call, say

TITLES = ("Dune", "Emma", "Solaris")


def title_of(turn: Turn) -> str:
    """The book the user talks about (``Dune`` when none is named)."""
    return next((t for t in TITLES if t.lower() in turn.user_text.lower()), "Dune")


def bookshop_brain() -> RuleBrain:
    """Search, stock and orders, one tool call per request; a greeting without tools."""
    return RuleBrain(
        [
            say("Hello! I can find books, check stock and place orders.", when="hello"),
            call(
                "search_books",
                lambda t: {"query": t.match(r"by ([A-Z][a-z]+ [A-Z][a-z]+)", title_of(t))},
                when=("do you have", "looking for", "books by"),
            ),
            call("check_stock", lambda t: {"title": title_of(t)}, when=("stock", "copies")),
            call(
                "place_order",
                lambda t: {"title": title_of(t), "quantity": int(t.match(r"(\d+)", "1") or 1)},
                when="order",
            ),
        ]
    )
