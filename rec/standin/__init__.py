"""A stand-in Gemini API: a scripted fake model on 127.0.0.1 that speaks the real wire protocol.

rec's own tests use it as "the real API", and it is just as useful for yours: point a
google-genai client or an ADK agent at :class:`StandinGemini` and script what it answers,
either with canned :class:`Reply` objects (:class:`ScriptedResponder`) or with a
deterministic rule-based model (:class:`RuleBrain`). Nothing here imports rec's other
packages, so it behaves like the service it stands in for.

Example::

    from google import genai
    from rec.standin import FAKE_API_KEY, Reply, ScriptedResponder, StandinGemini

    with StandinGemini(ScriptedResponder([Reply.text("hi")])) as api:
        client = genai.Client(api_key=FAKE_API_KEY, http_options={"base_url": api.url})
        assert client.models.generate_content(model="gemini-2.0-flash", contents="x").text == "hi"
"""

from __future__ import annotations

from rec.standin.brain import Rule, RuleBrain, Turn, call, say, transfer
from rec.standin.replies import (
    FAKE_API_KEY,
    GENERATE_RPCS,
    Reply,
    Responder,
    ScriptedResponder,
    StandinRequest,
    builtin_reply,
    error_envelope,
    finish_chunks,
    merge_chunks,
    parse_model_path,
    split_text,
)
from rec.standin.server import StandinGemini

__all__ = [
    "FAKE_API_KEY",
    "GENERATE_RPCS",
    "Reply",
    "Responder",
    "Rule",
    "RuleBrain",
    "ScriptedResponder",
    "StandinGemini",
    "StandinRequest",
    "Turn",
    "builtin_reply",
    "call",
    "error_envelope",
    "finish_chunks",
    "merge_chunks",
    "parse_model_path",
    "say",
    "split_text",
    "transfer",
]
