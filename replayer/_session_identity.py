"""The ADK session a case runs in: ``(app_name, user_id, session_id)`` as ADK's eval picks them.

Its own module, free of google-adk: ADK agents and plain google-genai programs both run a
case in one, and a program replays with no google-adk installed.
"""

from __future__ import annotations

from cassettes._evalset import EvalCase

__all__ = ["session_identity"]


def session_identity(case: EvalCase, app_name: str, run: int) -> tuple[str, str, str]:
    """(app_name, user_id, session_id) for a case, as ADK's eval picks them."""
    given = case.session_input
    app = given.app_name if given and given.app_name else app_name
    user = given.user_id if given and given.user_id else "test_user_id"
    session_id = (given.session_id if given else None) or f"rec-{case.eval_id}-{run}"
    return app, user, session_id
