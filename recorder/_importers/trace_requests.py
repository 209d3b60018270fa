"""Rebuild a model call's HTTP exchange from what one ADK span says about it.

The request body is built by google-genai's own converter (the one
``AsyncModels.generate_content`` calls: ``recorder._traffic.genai_request_body``) from the
model, contents and config the span carries, so it is the body the agent sends when it
asks the same thing at replay. The answer is the recorded response in the Gemini API's
wire form (one event per streamed chunk when the call streamed).

Each schema drops parts of the request; :data:`LEGACY_GAPS` and :data:`SEMCONV_GAPS` name
them as match ignore paths, stored on the exchange (``not_compared``), so that replay
compares only what the trace proves.
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from recorder._traffic import genai_request_body

__all__ = [
    "LEGACY_GAPS",
    "SEMCONV_GAPS",
    "config_from_semconv",
    "contents_from_semconv",
    "RequestBodies",
    "response_from_legacy",
    "responses_from_semconv",
]

LEGACY_GAPS = (
    "contents[*].parts[*].thoughtSignature",
    "contents[*].parts[*].inlineData",
    "generationConfig.responseSchema",
    "generationConfig.responseJsonSchema",
)
"""What ADK's legacy ``call_llm`` span leaves out of ``gcp.vertex.agent.llm_request``:
thought signatures, inline media and the response schema."""

SEMCONV_GAPS = (
    "generationConfig",
    "toolConfig",
    "safetySettings",
    "cachedContent",
    "labels",
    "contents[*].parts[*].thoughtSignature",
    "contents[*].parts[*].thought",
    "contents[*].parts[*].inlineData",
    "contents[*].parts[*].executableCode",
    "contents[*].parts[*].codeExecutionResult",
)
"""What the GenAI semantic conventions (``gen_ai.input.messages``, ...) leave out: every
generation setting (temperature, response schema, thinking), the tool config, safety
settings, thought flags and signatures, inline media and code execution parts."""


_ANY_CONTENT = types.Content(role="user", parts=[types.Part(text=".")])


class RequestBodies:
    """Request bodies as google-genai builds them, for the model calls of one trace.

    Each call of a conversation re-sends the whole history, and the calls of one agent
    share its system instruction and tools: each content and each config is converted
    once (a conversion costs milliseconds), and a body is put together from the pieces,
    as google-genai puts it together from the same conversions.
    """

    def __init__(self) -> None:
        self._contents: dict[str, Any] = {}
        self._heads: dict[str, dict[str, Any]] = {}

    def _content(self, model: str, content: types.Content) -> Any:
        key = content.model_dump_json(exclude_none=True)
        found = self._contents.get(key)
        if found is None:
            found = self._contents[key] = genai_request_body(model, [content], None)["contents"][0]
        return found

    def build(
        self, model: str, contents: list[types.Content], config: types.GenerateContentConfig
    ) -> tuple[str, dict[str, Any]]:
        """The ``models/{model}`` path segment and the JSON body google-genai sends."""
        key = model + "\n" + config.model_dump_json(exclude_none=True)
        head = self._heads.get(key)
        if head is None:
            # google-genai refuses a call without contents: any one stands in for them.
            head = self._heads[key] = genai_request_body(model, [_ANY_CONTENT], config)
        url = head.get("_url") or {}
        wire = {"contents": [self._content(model, c) for c in contents]}
        wire.update((k, v) for k, v in head.items() if k not in ("contents", "_url"))
        # The body as the SDK's json.dumps writes it, read back: one spelling of every
        # value, and no piece shared with another body.
        value: dict[str, Any] = json.loads(json.dumps(wire))
        return str(url.get("model") or f"models/{model}"), value


def _wire(response: types.GenerateContentResponse) -> dict[str, Any]:
    dumped: dict[str, Any] = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def response_from_legacy(payload: dict[str, Any]) -> dict[str, Any]:
    """The Gemini API response for ADK's ``LlmResponse`` JSON (``llm_response``)."""
    content = payload.get("content")
    candidate = types.Candidate(
        content=types.Content.model_validate(content) if isinstance(content, dict) else None,
        finish_reason=payload.get("finish_reason"),
        grounding_metadata=payload.get("grounding_metadata"),
        citation_metadata=payload.get("citation_metadata"),
        avg_logprobs=payload.get("avg_logprobs"),
        logprobs_result=payload.get("logprobs_result"),
        finish_message=payload.get("error_message"),
    )
    return _wire(
        types.GenerateContentResponse(
            candidates=[candidate],
            usage_metadata=payload.get("usage_metadata"),
            model_version=payload.get("model_version"),
        )
    )


def _fallback_id(value: Any, name: str | None, index: int) -> bool:
    """ADK's semconv writer invents ``{name}_{index}`` (or ``{index}``) for a call
    without an id, and ADK's own ``adk-`` ids never reach the model."""
    text = str(value or "")
    return not text or text.startswith("adk-") or text in (f"{name}_{index}", str(index))


def _part(raw: Any, index: int, names: dict[str, str]) -> types.Part | None:
    if not isinstance(raw, dict):
        return None
    kind = raw.get("type")
    if kind == "text":
        return types.Part(text=str(raw.get("content") or ""))
    if kind == "tool_call":
        name = str(raw.get("name") or "")
        call_id = raw.get("id")
        if isinstance(call_id, str):
            names[call_id] = name
        args = raw.get("arguments")
        return types.Part(
            function_call=types.FunctionCall(
                id=None if _fallback_id(call_id, name, index) else call_id,
                name=name,
                args=args if isinstance(args, dict) else None,
            )
        )
    if kind == "tool_call_response":
        call_id = str(raw.get("id") or "")
        name = names.get(call_id) or call_id.removesuffix(f"_{index}")
        response = raw.get("response")
        return types.Part(
            function_response=types.FunctionResponse(
                id=None if _fallback_id(call_id, name, index) else call_id,
                name=name,
                response=response if isinstance(response, dict) else {},
            )
        )
    if kind == "file_data":
        return types.Part(
            file_data=types.FileData(file_uri=raw.get("uri"), mime_type=raw.get("mime_type"))
        )
    return None  # a blob's bytes are not in a span attribute: said by the caller


_ROLES = {"user": "user", "assistant": "model"}


def contents_from_semconv(messages: list[Any]) -> list[types.Content]:
    """``gen_ai.input.messages`` as google-genai contents."""
    names: dict[str, str] = {}
    contents: list[types.Content] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        parts = [
            part
            for index, raw in enumerate(message.get("parts") or [])
            if (part := _part(raw, index, names)) is not None
        ]
        role = _ROLES.get(str(message.get("role") or ""), "user")
        contents.append(types.Content(role=role, parts=parts))
    return contents


def _parameters_field(parameters: Any) -> dict[str, Any]:
    """A declaration's parameters under the field they came from: a google-genai
    ``Schema`` spells its types in capitals (``OBJECT``), a JSON schema does not."""
    if not isinstance(parameters, dict):
        return {}
    if str(parameters.get("type") or "").isupper():
        return {"parameters": types.Schema.model_validate(parameters)}
    return {"parameters_json_schema": parameters}


def config_from_semconv(
    system: list[Any] | None, definitions: list[Any] | None
) -> types.GenerateContentConfig:
    """A config holding what the semconv attributes keep: the system instruction and the
    tool declarations (``gen_ai.system_instructions``, ``gen_ai.tool.definitions``)."""
    texts = [p for p in system or [] if isinstance(p, dict) and p.get("type") == "text"]
    instruction: str | types.Content | None = None
    if len(texts) == 1:
        instruction = str(texts[0].get("content") or "")  # ADK joins its instructions
    elif texts:
        instruction = types.Content(
            role="user", parts=[types.Part(text=str(p.get("content") or "")) for p in texts]
        )
    declarations: list[types.FunctionDeclaration] = []
    tools: list[types.ToolUnion] = []
    for item in definitions or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function":
            declarations.append(
                types.FunctionDeclaration(
                    name=item.get("name"),
                    description=item.get("description"),
                    **_parameters_field(item.get("parameters")),
                )
            )
        elif isinstance(item.get("type"), str):
            tools.append(types.Tool.model_validate({item["type"]: {}}))
    if declarations:
        tools.insert(0, types.Tool(function_declarations=declarations))
    return types.GenerateContentConfig(system_instruction=instruction, tools=tools or None)


_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "error": "OTHER"}


def responses_from_semconv(
    messages: list[Any], *, usage: dict[str, int], model: str
) -> list[dict[str, Any]]:
    """``gen_ai.output.messages`` as Gemini API responses, one per message (ADK writes one
    per streamed chunk); the token usage goes on the last."""
    chunks: list[dict[str, Any]] = []
    for number, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        parts = [
            part
            for index, raw in enumerate(message.get("parts") or [])
            if (part := _part(raw, index, {})) is not None
        ]
        reason = str(message.get("finish_reason") or "")
        last = number == len(messages) - 1
        finish = _FINISH.get(reason, reason.upper())
        candidate = types.Candidate(
            content=types.Content(role="model", parts=parts),
            finish_reason=types.FinishReason(finish) if finish else None,
        )
        chunks.append(
            _wire(
                types.GenerateContentResponse(
                    candidates=[candidate],
                    usage_metadata=types.GenerateContentResponseUsageMetadata.model_validate(usage)
                    if last and usage
                    else None,
                    model_version=model,
                )
            )
        )
    return chunks
