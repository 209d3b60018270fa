"""The travel agent's exchange-rate API, served by the stand-in beside the Gemini API."""

from __future__ import annotations

from rec.standin.replies import Reply, StandinRequest

__all__ = ["STANDIN_ROUTES"]


def _rates_route(request: StandinRequest) -> Reply:
    """The travel agent's exchange-rate API: ``GET /rates?from=EUR&to=USD``."""
    rates = {"USD": 1.1, "GBP": 0.85, "JPY": 160.0}
    return Reply.json(
        {
            "from": "EUR",
            "to": request.query.get("to"),
            "rate": rates.get(request.query.get("to", ""), 1.0),
        }
    )


STANDIN_ROUTES = {"/rates": _rates_route}
"""Non-Gemini endpoints the stand-in also serves (``TRAVEL_RATES_URL`` = ``<url>/rates``)."""
