"""Mock-mode tools: answer an ADK agent's tool calls with the responses that were recorded.

In replay a tool is not executed (it may need credentials, a network, money): the
:class:`MockToolsPlugin`'s ``before_tool_callback`` returns the recorded response, which
short-circuits the tool in ADK. The response for a call is found, in this order:

1. in the eval case's invocation being replayed (the EvalSet's tool responses): the first
   unused recorded call with the same tool name and equal args;
2. in the whole recording (``*.cassette.json``): a call with the same name and args;
3. in the same invocation, the next unused recorded call of that tool in call order (the
   model asked with different args, e.g. a live model, or a hand-corrected expectation).

A call found nowhere fails the case with :class:`ToolNotRecorded` naming the tool, its args
and what was recorded for that invocation. So does a recorded call that no longer fits the
tool (a parameter renamed or made required since the recording, :func:`call_misfit`): the
real tool would refuse it, so a recorded answer to it would pass a broken agent. ADK's own
control tools (``transfer_to_agent``, ``exit_loop``, ...) always run: they change the agent
flow, not the world.

In ``auto`` mode (``rec replay --mode auto``) only the first two steps answer, and only
while the case is on its recording (:mod:`replayer._recorded_path`): any other call runs
the real tool; in ``record`` mode every tool runs.

Limitation: a mocked tool does not run, so state it would have written through
``tool_context.state`` is not written (the model requests are unaffected unless an
instruction reads that state).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from cassettes._cassette import Cassette, JsonBody
from cassettes._errors import RunError
from cassettes._evalset import Invocation, invocation_tool_calls, invocation_tool_responses
from replayer._recorded_path import RecordedPath

__all__ = [
    "CONTROL_TOOLS",
    "MockToolsPlugin",
    "RecordedToolCall",
    "ToolNotRecorded",
    "ToolResponseBook",
    "call_misfit",
    "recorded_tool_calls",
    "recording_tool_calls",
]

CONTROL_TOOLS = frozenset({"transfer_to_agent", "exit_loop", "set_model_response"})
"""ADK tools that steer the agents; they are never mocked."""


class ToolNotRecorded(RunError):
    """A tool was called in mock mode with no recorded response to give back."""


@dataclass(frozen=True)
class RecordedToolCall:
    """A tool call and the response that was recorded for it."""

    name: str
    args: dict[str, Any]
    response: dict[str, Any]

    def describe(self) -> str:
        return f"{self.name}({_args_text(self.args)})"


def _args_text(args: dict[str, Any]) -> str:
    return ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in args.items()
    )


def _pair(calls: Sequence[Any], responses: Sequence[Any]) -> list[RecordedToolCall]:
    """Pair the k-th call of a tool with the k-th response of that tool (parallel calls too)."""
    by_name: dict[str, list[Any]] = {}
    for response in responses:
        by_name.setdefault(response.name or "", []).append(response)
    paired: list[RecordedToolCall] = []
    for call in calls:
        queue = by_name.get(call.name or "", [])
        if not queue:
            continue
        response = queue.pop(0)
        paired.append(
            RecordedToolCall(call.name or "", dict(call.args or {}), dict(response.response or {}))
        )
    return paired


def recorded_tool_calls(invocation: Invocation) -> list[RecordedToolCall]:
    """The tool calls of an EvalSet invocation paired with their recorded responses."""
    return _pair(invocation_tool_calls(invocation), invocation_tool_responses(invocation))


def recording_tool_calls(cassettes: Iterable[Cassette]) -> list[RecordedToolCall]:
    """Every distinct tool call with its response found in recordings' model traffic.

    Read straight from the model requests' ``contents``: a function call in one turn and
    its response in the next (the k-th call of a tool paired with its k-th response, as in
    an EvalSet). Each request re-sends the conversation so far, so the same pair appears
    many times: each (name, args) is kept once, with the response first recorded. No
    conversation is rebuilt (that was most of a large recording's replay start-up).
    """
    found: list[RecordedToolCall] = []
    seen: set[tuple[str, str]] = set()
    for cassette in cassettes:
        for exchange in cassette.exchanges:
            body = exchange.request.body
            contents = (
                body.value.get("contents")
                if isinstance(body, JsonBody) and isinstance(body.value, dict)
                else None
            )
            if not isinstance(contents, list):
                continue
            for turn, following in zip(contents, contents[1:], strict=False):
                calls = _parts(turn, "functionCall", "function_call")
                if not calls:
                    continue
                responses = _parts(following, "functionResponse", "function_response")
                for pair in _pair_raw(calls, responses):
                    key = (pair.name, json.dumps(pair.args, sort_keys=True, default=str))
                    if key not in seen:
                        seen.add(key)
                        found.append(pair)
    return found


def _parts(content: Any, *keys: str) -> list[dict[str, Any]]:
    """The ``functionCall`` (or ``functionResponse``) objects of a request content."""
    parts = content.get("parts") if isinstance(content, dict) else None
    out = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict):
            value = next((part[k] for k in keys if k in part), None)
            if isinstance(value, dict):
                out.append(value)
    return out


def _pair_raw(
    calls: Sequence[dict[str, Any]], responses: Sequence[dict[str, Any]]
) -> list[RecordedToolCall]:
    """:func:`_pair` over the raw JSON of a request (k-th call of a name, k-th response)."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for response in responses:
        by_name.setdefault(str(response.get("name") or ""), []).append(response)
    paired = []
    for call in calls:
        name = str(call.get("name") or "")
        queue = by_name.get(name, [])
        if not queue:
            continue
        args, answer = call.get("args"), queue.pop(0).get("response")
        paired.append(
            RecordedToolCall(
                name,
                dict(args) if isinstance(args, dict) else {},
                dict(answer) if isinstance(answer, dict) else {},
            )
        )
    return paired


class ToolResponseBook:
    """The recorded tool responses of one eval case, consumed as the case replays.

    Args:
        invocations: per invocation of the case, its recorded calls in call order.
        pool: calls from the recording, used when the invocation has no match.
        label: names the case in messages.
        path: in ``auto`` mode, the case's position on its recording: a call is answered
            only with a recorded response to the same name and args while the case is on
            it; otherwise the real tool runs.
    """

    def __init__(
        self,
        invocations: Sequence[Sequence[RecordedToolCall]],
        *,
        pool: Sequence[RecordedToolCall] = (),
        label: str = "",
        path: RecordedPath | None = None,
    ) -> None:
        self.path = path
        self.invocations = [list(calls) for calls in invocations]
        self.pool = pool  # a lazy pool (see replayer._run_cassettes) is read when needed
        self.label = label
        self.turn = 0
        self._used: set[int] = set()
        self.answered = 0

    def start_invocation(self, index: int) -> None:
        """The next user turn (0-based) begins: its recorded calls become available."""
        self.turn = index
        self._used = set()

    def _current(self) -> list[RecordedToolCall]:
        return self.invocations[self.turn] if self.turn < len(self.invocations) else []

    def _take(
        self, current: Sequence[RecordedToolCall], name: str, args: dict[str, Any] | None
    ) -> RecordedToolCall | None:
        """The first unused call of ``name`` in this invocation (with equal args unless None)."""
        for position, recorded in enumerate(current):
            if position in self._used or recorded.name != name:
                continue
            if args is not None and recorded.args != args:
                continue
            self._used.add(position)
            return recorded
        return None

    def answer(self, name: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The recorded response for this call; None in ``auto`` mode when the real tool
        is to run (see the class docstring).

        Raises:
            ToolNotRecorded: nothing recorded fits; names the tool, its args and the
                calls recorded for this invocation.
        """
        if self.path is not None and self.path.left:
            return None  # what was recorded from here on belongs to the old path
        current = self._current()
        found = self._take(current, name, args)
        if found is None:
            found = next((r for r in self.pool if r.name == name and r.args == args), None)
        if found is None and self.path is None:
            found = self._take(current, name, None)
        if found is not None:
            self.answered += 1
            return dict(found.response)
        if self.path is not None:
            return None  # a call the recording never answered: the tool runs
        shown = "; ".join(c.describe() for c in current) or "no tool calls"
        raise ToolNotRecorded(
            f"tool {name}({_args_text(args)}) was called in mock mode but no response was "
            f"recorded for it; turn {self.turn + 1} recorded: {shown}",
            path=self.label or None,
            where=f"turn {self.turn + 1}",
            fix="Re-record the case, add the call's response to the eval set, or run the "
            "real tools with --live-tools",
        )


def _runs_for_real(tool: BaseTool) -> bool:
    """ADK's control tools, and an AgentTool whose inner run shares the plugins.

    Such an AgentTool runs its agent: the inner model calls replay from the recording and
    its tools are answered by this same plugin (ADK hands the caller's plugins to the
    inner Runner), so the wrapped agent is tested too. Without ``include_plugins`` the
    inner tools would run for real, so the AgentTool itself is answered instead.
    """
    if tool.name in CONTROL_TOOLS:
        return True
    from google.adk.tools.agent_tool import AgentTool

    return isinstance(tool, AgentTool) and bool(tool.include_plugins)


class MockToolsPlugin(BasePlugin):
    """An ADK plugin that returns recorded tool responses instead of running tools.

    The recorded response is the one ADK put in the session, *after* every
    ``after_tool_callback`` ran on the tool's result. So when this plugin answers a call,
    its ``after_tool_callback`` returns that response again, which ends ADK's chain: no
    other plugin's or agent's ``after_tool_callback`` reshapes it a second time. Place
    this plugin first in the Runner's list (``run_adk_case`` does).
    """

    def __init__(self, book: ToolResponseBook, *, name: str = "rec_mock_tools") -> None:
        super().__init__(name=name)
        self.book = book
        self._answered: dict[object, dict[str, Any]] = {}

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if _runs_for_real(tool):
            return None
        misfit = call_misfit(tool, tool_args)
        if misfit is not None:
            raise ToolNotRecorded(
                f"tool {tool.name} was called as {tool.name}({_args_text(dict(tool_args))}), "
                f"which does not fit the tool as it is now: {misfit}; a recorded response "
                "would pass a call the real tool cannot take",
                path=self.book.label or None,
                where=f"turn {self.book.turn + 1}",
                fix="The tool's parameters changed since the recording: re-record the case, or "
                "run the real tools with --live-tools",
            )
        response = self.book.answer(tool.name, dict(tool_args))
        if response is None:
            return None  # auto mode: the real tool runs
        self._answered[_call_key(tool_context)] = response
        return response

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        return self._answered.pop(_call_key(tool_context), None)


_ADK_INJECTED = frozenset({"tool_context", "input_stream", "self", "cls"})
"""Parameters ADK fills itself, never from the model's args."""


def call_misfit(tool: BaseTool, args: dict[str, Any]) -> str | None:
    """Why a call's ``args`` do not fit ``tool`` (its signature and what is wrong with the
    args): a required parameter is not given. None when they fit (ADK drops an argument the
    tool does not take, live as here) or the tool's parameters cannot be told.

    A Python function tool is read by its signature, as ADK calls it; any other tool by the
    parameters of its declaration (``properties``, ``required``).
    """
    func = getattr(tool, "func", None)
    if callable(func):
        return _signature_misfit(tool.name, func, args)
    return _declaration_misfit(tool, args)


def _signature_misfit(name: str, func: Any, args: dict[str, Any]) -> str | None:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    params = {
        key: p
        for key, p in signature.parameters.items()
        if key not in _ADK_INJECTED and p.kind is not p.VAR_POSITIONAL
    }
    open_ended = any(p.kind is p.VAR_KEYWORD for p in params.values())
    named = [key for key, p in params.items() if p.kind is not p.VAR_KEYWORD]
    required = [key for key in named if params[key].default is inspect.Parameter.empty]
    unknown = [] if open_ended else [key for key in args if key not in named]
    shown = ", ".join(_parameter_text(p) for p in params.values())
    return _misfit(f"{name}({shown})", unknown, [k for k in required if k not in args])


def _parameter_text(parameter: inspect.Parameter) -> str:
    """``name: type = default`` as the source spells it (a string annotation unquoted)."""
    text = parameter.name
    if parameter.kind is parameter.VAR_KEYWORD:
        text = "**" + text
    annotation = parameter.annotation
    if annotation is not parameter.empty:
        shown = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        text += f": {shown or annotation}"
    if parameter.default is not parameter.empty:
        text += f" = {parameter.default!r}"
    return text


def _declaration_misfit(tool: BaseTool, args: dict[str, Any]) -> str | None:
    from replayer._compat import adk_tool_declaration

    declaration = adk_tool_declaration(tool)
    if declaration is None:
        return None
    schema = declaration.parameters_json_schema
    if schema is None and declaration.parameters is not None:
        schema = declaration.parameters.model_dump(exclude_none=True)
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    named = list(schema["properties"])
    required = [k for k in schema.get("required") or [] if isinstance(k, str)]
    open_ended = schema.get("additionalProperties") not in (None, False)
    unknown = [] if open_ended else [key for key in args if key not in named]
    shown = ", ".join(f"{k}{'' if k in required else '?'}" for k in named)
    return _misfit(f"{tool.name}({shown})", unknown, [k for k in required if k not in args])


def _misfit(signature: str, unknown: list[str], missing: list[str]) -> str | None:
    """The misfit of a call that leaves a required parameter out (ADK refuses such a call
    rather than run the tool); an unknown argument alone is dropped by ADK, as in a live run,
    and is named only beside a missing one (a parameter renamed)."""
    if not missing:
        return None
    said = [f"no parameter {', '.join(unknown)}"] if unknown else []
    said.append(f"{', '.join(missing)} not given")
    return f"{signature} ({'; '.join(said)})"


def _call_key(tool_context: ToolContext) -> object:
    return tool_context.function_call_id or id(tool_context)
