"""RuleBrain: a deterministic fake model for the stand-in Gemini server.

It reads a generate request the way a model would (``contents``, the declared
``tools[].functionDeclarations``, ``systemInstruction``) and answers from rules, well
enough to drive google-genai's automatic function calling and real ADK agents with tools
and sub-agents::

    brain = RuleBrain([
        transfer("booking_agent", when=("book", "hotel"), agent="travel_agent"),
        call("get_weather", lambda t: {"city": t.match(r"in (\\w+)")}, when="weather"),
        call("find_flights", {"origin": "Paris", "destination": "Rome", "date": "2025-05-01"},
             when="flight"),
        call("book_hotel", {"city": "Rome", "nights": 2}, when="book", after="find_flights"),
        say("Hello {agent}!", when="hello"),
    ])

How it decides, for each request (a *step*):

1. The *turn* starts at the last user text that is not another agent's "For context:".
   ``turn.responses`` are the function responses since then, ``turn.called`` the tools
   the model already called since then.
2. The first matching :func:`transfer` rule wins alone.
3. Otherwise every matching :func:`call` rule fires, together (parallel function calls).
   A call rule matches when its tool is declared, its ``when`` matches the user text, its
   ``agent`` (if given) is the agent answering, its ``after`` tools have responded in this
   turn, and (``once``, the default) it was not called in this turn yet.
4. Otherwise the first matching :func:`say` rule answers (only before any tool response
   of the turn, unless the rule has ``after``).
5. Otherwise, after tool responses, a summary of them; else an echo of the user text.

A prompt of ADK's user simulator (``conversation_scenario`` cases) is answered before any
rule, as a simulated user following the conversation plan would answer it, and the
simulator judge's prompt with a verdict (:mod:`rec.standin.simulated_user`).

Every text is prefixed ``[<agent> #<tag>]`` where ``tag`` is 8 hex digits of the SHA-256
of the system instruction, so editing an agent's instruction visibly changes its replies.
Streaming splits text into ``stream_chunks`` events. Output is a pure function of the
request: identical requests give identical responses.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rec.standin.replies import Reply, StandinRequest
from rec.standin.simulated_user import simulated_user_text, user_simulator_verdict

__all__ = ["Rule", "RuleBrain", "Turn", "call", "say", "transfer"]

_AGENT_NAME = re.compile(r'Your internal name is "([^"]+)"')
_CONTEXT_PREFIX = "For context:"


@dataclass(frozen=True)
class Turn:
    """What the brain sees of one request (given to rule conditions and arg builders)."""

    request: StandinRequest
    user_text: str
    """The last real user text (other agents' "For context:" messages skipped)."""
    agent: str | None
    """The answering ADK agent's name (from ``Your internal name is "..."``), if any."""
    system_instruction: str
    declarations: dict[str, dict[str, Any]]
    """Declared functions by name."""
    called: tuple[str, ...]
    """Tools the model called since the user text, in order."""
    responses: tuple[tuple[str, Any], ...]
    """(name, response) of every function response since the user text, in order."""

    @property
    def tag(self) -> str:
        """``#`` + 8 hex digits of the system instruction's SHA-256."""
        return "#" + hashlib.sha256(self.system_instruction.encode()).hexdigest()[:8]

    def match(self, pattern: str, default: str | None = None) -> str | None:
        """Group 1 (or the whole match) of ``pattern`` in the user text, case-insensitive."""
        found = re.search(pattern, self.user_text, re.IGNORECASE)
        if not found:
            return default
        return found.group(1) if found.groups() else found.group(0)

    def responded(self, tool: str) -> bool:
        """True when ``tool`` has a function response in this turn."""
        return any(name == tool for name, _ in self.responses)

    def enum_of(self, tool: str, parameter: str) -> list[str] | None:
        """The ``enum`` declared for a parameter (e.g. transfer_to_agent's agent names)."""
        declaration = self.declarations.get(tool) or {}
        for key in ("parameters", "parametersJsonSchema", "parameters_json_schema"):
            schema = declaration.get(key) or {}
            values = ((schema.get("properties") or {}).get(parameter) or {}).get("enum")
            if values:
                return list(values)
        return None


def _matches(when: Any, turn: Turn) -> bool:
    if when is None:
        return True
    if callable(when) and not isinstance(when, re.Pattern):
        return bool(when(turn))
    if isinstance(when, re.Pattern):
        return bool(when.search(turn.user_text))
    words = [when] if isinstance(when, str) else list(when)
    text = turn.user_text.lower()
    return any(word.lower() in text for word in words)


@dataclass(frozen=True)
class Rule:
    """One rule. Build with :func:`call`, :func:`transfer` or :func:`say`."""

    kind: Literal["call", "transfer", "say"]
    tool: str | None = None
    """The function to call (call/transfer)."""
    args: Any = None
    """Dict, or ``(turn) -> dict``, of call arguments."""
    text: Any = None
    """For say: a str (``{agent}``, ``{user_text}``, ``{tag}`` filled in) or ``(turn) -> str``."""
    when: Any = None
    """Keyword (any of several, case-insensitive), regex, or ``(turn) -> bool``."""
    agent: str | None = None
    """Only when this agent answers."""
    after: tuple[str, ...] = ()
    """Only once these tools have responded in this turn."""
    once: bool = True
    """Call rules: not when the tool was already called in this turn."""

    def applies(self, turn: Turn) -> bool:
        """Whether this rule fires for the turn (see the module docstring)."""
        if self.agent is not None and self.agent != turn.agent:
            return False
        if not all(turn.responded(tool) for tool in self.after):
            return False
        if self.kind == "say":
            if turn.responses and not self.after:
                return False
            return _matches(self.when, turn)
        assert self.tool is not None
        if self.tool not in turn.declarations:
            return False
        if self.once and self.tool in turn.called:
            return False
        if self.kind == "transfer":
            if turn.called:  # one transfer per turn, and never after other calls
                return False
            names = turn.enum_of(self.tool, "agent_name")
            target = self.build_args(turn).get("agent_name")
            if names is not None and target not in names:
                return False
        return _matches(self.when, turn)

    def build_args(self, turn: Turn) -> dict[str, Any]:
        """The call's arguments for this turn."""
        return dict(self.args(turn) if callable(self.args) else (self.args or {}))


def call(
    tool: str,
    args: Any = None,
    *,
    when: Any = None,
    agent: str | None = None,
    after: str | Iterable[str] = (),
    once: bool = True,
) -> Rule:
    """Call ``tool(**args)`` when the user text matches ``when`` (see the module docstring)."""
    after_tools = (after,) if isinstance(after, str) else tuple(after)
    return Rule("call", tool=tool, args=args, when=when, agent=agent, after=after_tools, once=once)


def transfer(agent_name: str, *, when: Any = None, agent: str | None = None) -> Rule:
    """Call ``transfer_to_agent(agent_name=...)`` when declared with that agent allowed."""
    return Rule(
        "transfer",
        tool="transfer_to_agent",
        args={"agent_name": agent_name},
        when=when,
        agent=agent,
    )


def say(
    text: Any, *, when: Any = None, agent: str | None = None, after: str | Iterable[str] = ()
) -> Rule:
    """Answer with text (``{agent}``, ``{user_text}``, ``{tag}`` are filled in)."""
    after_tools = (after,) if isinstance(after, str) else tuple(after)
    return Rule("say", text=text, when=when, agent=agent, after=after_tools)


def _read_turn(request: StandinRequest) -> Turn:
    contents = request.contents
    start, user_text = -1, ""
    for i in range(len(contents) - 1, -1, -1):
        content = contents[i]
        if content.get("role", "user") != "user":
            continue
        texts = [
            p["text"]
            for p in content.get("parts") or []
            if isinstance(p.get("text"), str) and not p.get("thought")
        ]
        if texts and not texts[0].lstrip().startswith(_CONTEXT_PREFIX):
            start, user_text = i, "\n".join(texts)
            break
    called: list[str] = []
    responses: list[tuple[str, Any]] = []
    for content in contents[start + 1 :]:
        for part in content.get("parts") or []:
            if "functionCall" in part:
                called.append(part["functionCall"].get("name", ""))
            if "functionResponse" in part:
                fr = part["functionResponse"]
                responses.append((fr.get("name", ""), fr.get("response")))
    declarations: dict[str, dict[str, Any]] = {}
    body = request.body if isinstance(request.body, dict) else {}
    for tool in body.get("tools") or []:
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            declarations[decl.get("name", "")] = decl
    system = request.system_instruction
    found = _AGENT_NAME.search(system)
    return Turn(
        request=request,
        user_text=user_text,
        agent=found.group(1) if found else None,
        system_instruction=system,
        declarations=declarations,
        called=tuple(called),
        responses=tuple(responses),
    )


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(", ", ": "), ensure_ascii=False)


@dataclass
class RuleBrain:
    """A deterministic fake model: a responder for :class:`standin.StandinGemini`.

    Args:
        rules: the rules, in priority order.
        stream_chunks: how many events a streamed text is split into.
        thought_signatures: attach a ``thoughtSignature`` (standard base64 with ``+``/``/``)
            to function-call parts, as thinking models do.
    """

    rules: Sequence[Rule] = field(default_factory=list)
    stream_chunks: int = 3
    thought_signatures: bool = False

    def __call__(self, request: StandinRequest) -> Reply | None:
        if request.rpc not in ("generateContent", "streamGenerateContent"):
            return None
        turn = _read_turn(request)
        chunks = self.stream_chunks if request.stream else 1
        as_user = simulated_user_text(turn.user_text) or user_simulator_verdict(turn.user_text)
        if as_user is not None and not turn.system_instruction:
            return Reply.text(as_user, chunks=chunks)
        transfers = [r for r in self.rules if r.kind == "transfer" and r.applies(turn)]
        if transfers:
            return self._calls(turn, transfers[:1])
        calls = [r for r in self.rules if r.kind == "call" and r.applies(turn)]
        if calls:
            return self._calls(turn, calls)
        for rule in self.rules:
            if rule.kind == "say" and rule.applies(turn):
                text = (
                    rule.text(turn)
                    if callable(rule.text)
                    else str(rule.text).format(
                        agent=turn.agent or "model", user_text=turn.user_text, tag=turn.tag
                    )
                )
                return Reply.text(f"{self.prefix(turn)} {text}", chunks=chunks)
        return Reply.text(self.default_text(turn), chunks=chunks)

    @staticmethod
    def prefix(turn: Turn) -> str:
        """``[<agent> #<tag>]``: who answers, and a hash of its instruction."""
        return f"[{turn.agent or 'model'} {turn.tag}]"

    def default_text(self, turn: Turn) -> str:
        """A summary of the turn's tool responses, or an echo of the user text."""
        if turn.responses:
            done = "; ".join(f"{name} -> {_compact(resp)}" for name, resp in turn.responses)
            return f"{self.prefix(turn)} Done. {done}"
        return f"{self.prefix(turn)} You said: {turn.user_text}"

    def _calls(self, turn: Turn, rules: list[Rule]) -> Reply:
        parts = []
        for rule in rules:
            part: dict[str, Any] = {
                "functionCall": {"name": rule.tool, "args": rule.build_args(turn)}
            }
            if self.thought_signatures:
                raw = b"\xfb\xff\xbf" + (rule.tool or "").encode()
                part["thoughtSignature"] = base64.b64encode(raw).decode()
            parts.append(part)
        return Reply.parts(*parts)
