"""The EvalSet schema as plain data, read by the quick check (no pydantic).

Generated from the pydantic models of :mod:`cassettes._evalset` by ``python tools/generate_evalset_shape.py``; do not edit.

``SHAPES`` maps a model name to ``("model", fields, check)``: each field is ``(keys, node,
required)`` (``keys``: the spellings that name it), ``check`` the name of the model
validator's quick twin or None. A node is ``(kind, ...)``: ``any``, ``str``, ``bool``,
``int``, ``bytes`` (base64 text), ``none``, ``("float", ge, le)``, ``("nullable", node)``,
``("list", node)``, ``("dict", key, value)``, ``("tuple", nodes)``, ``("literal", values)``,
``("ref", model)``, ``("tagged", discriminator, {tag: node})``.
"""

# ruff: noqa: E501
from __future__ import annotations

from typing import Any

__all__ = ["ROOT", "SHAPES"]

ROOT = "EvalSet"
SHAPES: dict[str, Any] = {
    "EvalSet": (
        "model",
        (
            (("eval_set_id",), ("str",), True),
            (("name",), ("nullable", ("str",)), False),
            (("description",), ("nullable", ("str",)), False),
            (("eval_cases",), ("list", ("ref", "EvalCase")), True),
            (("creation_timestamp",), ("float", 0, 10000000000000.0), False),
        ),
        "unique_eval_ids",
    ),
    "EvalCase": (
        "model",
        (
            (("evalId", "eval_id"), ("str",), True),
            (("conversation",), ("nullable", ("list", ("ref", "Invocation"))), False),
            (("conversationScenario", "conversation_scenario"), ("nullable", ("any",)), False),
            (("sessionInput", "session_input"), ("nullable", ("ref", "SessionInput")), False),
            (("creationTimestamp", "creation_timestamp"), ("float", 0, 10000000000000.0), False),
            (("rubrics",), ("nullable", ("list", ("any",))), False),
            (
                ("finalSessionState", "final_session_state"),
                ("nullable", ("dict", ("str",), ("any",))),
                False,
            ),
        ),
        "one_conversation",
    ),
    "Invocation": (
        "model",
        (
            (("invocationId", "invocation_id"), ("str",), False),
            (("userContent", "user_content"), ("ref", "Content"), True),
            (("finalResponse", "final_response"), ("nullable", ("ref", "Content")), False),
            (
                ("intermediateData", "intermediate_data"),
                (
                    "tagged",
                    "intermediate_shape",
                    {
                        "IntermediateData": ("ref", "IntermediateData"),
                        "InvocationEvents": ("ref", "InvocationEvents"),
                        "None": ("none",),
                    },
                ),
                False,
            ),
            (("creationTimestamp", "creation_timestamp"), ("float", 0, 10000000000000.0), False),
            (("duration",), ("nullable", ("float", 0, 1000000000.0)), False),
            (("modelDuration", "model_duration"), ("nullable", ("float", 0, 1000000000.0)), False),
            (("toolDuration", "tool_duration"), ("nullable", ("float", 0, 1000000000.0)), False),
            (("rubrics",), ("nullable", ("list", ("any",))), False),
            (("appDetails", "app_details"), ("nullable", ("any",)), False),
        ),
        "sendable_user_turn",
    ),
    "Content": (
        "model",
        (
            (("parts",), ("nullable", ("list", ("ref", "Part"))), False),
            (("role",), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "Part": (
        "model",
        (
            (
                ("mediaResolution", "media_resolution"),
                ("nullable", ("ref", "PartMediaResolution")),
                False,
            ),
            (
                ("codeExecutionResult", "code_execution_result"),
                ("nullable", ("ref", "CodeExecutionResult")),
                False,
            ),
            (("executableCode", "executable_code"), ("nullable", ("ref", "ExecutableCode")), False),
            (("fileData", "file_data"), ("nullable", ("ref", "FileData")), False),
            (("functionCall", "function_call"), ("nullable", ("ref", "FunctionCall")), False),
            (
                ("functionResponse", "function_response"),
                ("nullable", ("ref", "FunctionResponse")),
                False,
            ),
            (("inlineData", "inline_data"), ("nullable", ("ref", "Blob")), False),
            (("text",), ("nullable", ("str",)), False),
            (("thought",), ("nullable", ("bool",)), False),
            (("thoughtSignature", "thought_signature"), ("nullable", ("bytes",)), False),
            (("videoMetadata", "video_metadata"), ("nullable", ("ref", "VideoMetadata")), False),
            (("toolCall", "tool_call"), ("nullable", ("ref", "ToolCall")), False),
            (("toolResponse", "tool_response"), ("nullable", ("ref", "ToolResponse")), False),
            (("partMetadata", "part_metadata"), ("nullable", ("dict", ("str",), ("any",))), False),
            (
                ("audioTranscription", "audio_transcription"),
                ("nullable", ("ref", "Transcription")),
                False,
            ),
            (
                ("mediaProcessing", "media_processing"),
                ("nullable", ("literal", ("MEDIA_PROCESSING_UNSPECIFIED", "STATIC", "AGENTIC"))),
                False,
            ),
            (("speechMetadata", "speech_metadata"), ("nullable", ("ref", "SpeechMetadata")), False),
        ),
        None,
    ),
    "PartMediaResolution": (
        "model",
        (
            (
                ("level",),
                (
                    "nullable",
                    (
                        "literal",
                        (
                            "MEDIA_RESOLUTION_UNSPECIFIED",
                            "MEDIA_RESOLUTION_LOW",
                            "MEDIA_RESOLUTION_MEDIUM",
                            "MEDIA_RESOLUTION_HIGH",
                            "MEDIA_RESOLUTION_ULTRA_HIGH",
                        ),
                    ),
                ),
                False,
            ),
            (("numTokens", "num_tokens"), ("nullable", ("int",)), False),
        ),
        None,
    ),
    "CodeExecutionResult": (
        "model",
        (
            (
                ("outcome",),
                (
                    "nullable",
                    (
                        "literal",
                        (
                            "OUTCOME_UNSPECIFIED",
                            "OUTCOME_OK",
                            "OUTCOME_FAILED",
                            "OUTCOME_DEADLINE_EXCEEDED",
                        ),
                    ),
                ),
                False,
            ),
            (("output",), ("nullable", ("str",)), False),
            (("id",), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "ExecutableCode": (
        "model",
        (
            (("code",), ("nullable", ("str",)), False),
            (("language",), ("nullable", ("literal", ("LANGUAGE_UNSPECIFIED", "PYTHON"))), False),
            (("id",), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "FileData": (
        "model",
        (
            (("displayName", "display_name"), ("nullable", ("str",)), False),
            (("fileUri", "file_uri"), ("nullable", ("str",)), False),
            (("mimeType", "mime_type"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "FunctionCall": (
        "model",
        (
            (("id",), ("nullable", ("str",)), False),
            (("args",), ("nullable", ("dict", ("str",), ("any",))), False),
            (("name",), ("nullable", ("str",)), False),
            (("partialArgs", "partial_args"), ("nullable", ("list", ("ref", "PartialArg"))), False),
            (("willContinue", "will_continue"), ("nullable", ("bool",)), False),
        ),
        None,
    ),
    "PartialArg": (
        "model",
        (
            (("boolValue", "bool_value"), ("nullable", ("bool",)), False),
            (("jsonPath", "json_path"), ("nullable", ("str",)), False),
            (("nullValue", "null_value"), ("nullable", ("literal", ("NULL_VALUE",))), False),
            (("numberValue", "number_value"), ("nullable", ("float", None, None)), False),
            (("stringValue", "string_value"), ("nullable", ("str",)), False),
            (("willContinue", "will_continue"), ("nullable", ("bool",)), False),
        ),
        None,
    ),
    "FunctionResponse": (
        "model",
        (
            (("willContinue", "will_continue"), ("nullable", ("bool",)), False),
            (
                ("scheduling",),
                (
                    "nullable",
                    ("literal", ("SCHEDULING_UNSPECIFIED", "SILENT", "WHEN_IDLE", "INTERRUPT")),
                ),
                False,
            ),
            (("parts",), ("nullable", ("list", ("ref", "FunctionResponsePart"))), False),
            (("id",), ("nullable", ("str",)), False),
            (("name",), ("nullable", ("str",)), False),
            (("response",), ("nullable", ("dict", ("str",), ("any",))), False),
        ),
        None,
    ),
    "FunctionResponsePart": (
        "model",
        (
            (("inlineData", "inline_data"), ("nullable", ("ref", "FunctionResponseBlob")), False),
            (("fileData", "file_data"), ("nullable", ("ref", "FunctionResponseFileData")), False),
            (
                ("mediaProcessing", "media_processing"),
                ("nullable", ("literal", ("MEDIA_PROCESSING_UNSPECIFIED", "STATIC", "AGENTIC"))),
                False,
            ),
        ),
        None,
    ),
    "FunctionResponseBlob": (
        "model",
        (
            (("mimeType", "mime_type"), ("nullable", ("str",)), False),
            (("data",), ("nullable", ("bytes",)), False),
            (("displayName", "display_name"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "FunctionResponseFileData": (
        "model",
        (
            (("fileUri", "file_uri"), ("nullable", ("str",)), False),
            (("mimeType", "mime_type"), ("nullable", ("str",)), False),
            (("displayName", "display_name"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "Blob": (
        "model",
        (
            (("data",), ("nullable", ("bytes",)), False),
            (("displayName", "display_name"), ("nullable", ("str",)), False),
            (("mimeType", "mime_type"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "VideoMetadata": (
        "model",
        (
            (("endOffset", "end_offset"), ("nullable", ("str",)), False),
            (("fps",), ("nullable", ("float", None, None)), False),
            (("startOffset", "start_offset"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "ToolCall": (
        "model",
        (
            (("id",), ("nullable", ("str",)), False),
            (
                ("toolType", "tool_type"),
                (
                    "nullable",
                    (
                        "literal",
                        (
                            "TOOL_TYPE_UNSPECIFIED",
                            "GOOGLE_SEARCH_WEB",
                            "GOOGLE_SEARCH_IMAGE",
                            "URL_CONTEXT",
                            "GOOGLE_MAPS",
                            "FILE_SEARCH",
                            "MEDIA_PROCESSING",
                        ),
                    ),
                ),
                False,
            ),
            (("args",), ("nullable", ("dict", ("str",), ("any",))), False),
        ),
        None,
    ),
    "ToolResponse": (
        "model",
        (
            (("id",), ("nullable", ("str",)), False),
            (
                ("toolType", "tool_type"),
                (
                    "nullable",
                    (
                        "literal",
                        (
                            "TOOL_TYPE_UNSPECIFIED",
                            "GOOGLE_SEARCH_WEB",
                            "GOOGLE_SEARCH_IMAGE",
                            "URL_CONTEXT",
                            "GOOGLE_MAPS",
                            "FILE_SEARCH",
                            "MEDIA_PROCESSING",
                        ),
                    ),
                ),
                False,
            ),
            (("response",), ("nullable", ("dict", ("str",), ("any",))), False),
        ),
        None,
    ),
    "Transcription": (
        "model",
        (
            (("text",), ("nullable", ("str",)), False),
            (("finished",), ("nullable", ("bool",)), False),
            (("languageCode", "language_code"), ("nullable", ("str",)), False),
            (("speakerLabel", "speaker_label"), ("nullable", ("str",)), False),
            (("words",), ("nullable", ("list", ("ref", "WordInfo"))), False),
            (("startOffset", "start_offset"), ("nullable", ("str",)), False),
            (("endOffset", "end_offset"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "WordInfo": (
        "model",
        (
            (("word",), ("nullable", ("str",)), False),
            (("startOffset", "start_offset"), ("nullable", ("str",)), False),
            (("endOffset", "end_offset"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "SpeechMetadata": (
        "model",
        (
            (("speaker",), ("nullable", ("str",)), False),
            (("style",), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "IntermediateData": (
        "model",
        (
            (("toolUses", "tool_uses"), ("list", ("ref", "FunctionCall")), False),
            (("toolResponses", "tool_responses"), ("list", ("ref", "FunctionResponse")), False),
            (
                ("intermediateResponses", "intermediate_responses"),
                ("list", ("tuple", (("str",), ("list", ("ref", "Part"))))),
                False,
            ),
        ),
        None,
    ),
    "InvocationEvents": (
        "model",
        ((("invocationEvents", "invocation_events"), ("list", ("ref", "InvocationEvent")), False),),
        None,
    ),
    "InvocationEvent": (
        "model",
        (
            (("author",), ("str",), True),
            (("content",), ("nullable", ("ref", "Content")), False),
            (
                ("groundingMetadata", "grounding_metadata"),
                ("nullable", ("ref", "GroundingMetadata")),
                False,
            ),
            (
                ("usageMetadata", "usage_metadata"),
                ("nullable", ("ref", "GenerateContentResponseUsageMetadata")),
                False,
            ),
            (("modelVersion", "model_version"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "GroundingMetadata": (
        "model",
        (
            (
                ("imageSearchQueries", "image_search_queries"),
                ("nullable", ("list", ("str",))),
                False,
            ),
            (
                ("groundingChunks", "grounding_chunks"),
                ("nullable", ("list", ("ref", "GroundingChunk"))),
                False,
            ),
            (
                ("groundingSupports", "grounding_supports"),
                ("nullable", ("list", ("ref", "GroundingSupport"))),
                False,
            ),
            (
                ("retrievalMetadata", "retrieval_metadata"),
                ("nullable", ("ref", "RetrievalMetadata")),
                False,
            ),
            (
                ("searchEntryPoint", "search_entry_point"),
                ("nullable", ("ref", "SearchEntryPoint")),
                False,
            ),
            (("webSearchQueries", "web_search_queries"), ("nullable", ("list", ("str",))), False),
            (
                ("googleMapsWidgetContextToken", "google_maps_widget_context_token"),
                ("nullable", ("str",)),
                False,
            ),
            (("retrievalQueries", "retrieval_queries"), ("nullable", ("list", ("str",))), False),
            (
                ("sourceFlaggingUris", "source_flagging_uris"),
                ("nullable", ("list", ("ref", "GroundingMetadataSourceFlaggingUri"))),
                False,
            ),
        ),
        None,
    ),
    "GroundingChunk": (
        "model",
        (
            (("image",), ("nullable", ("ref", "GroundingChunkImage")), False),
            (("maps",), ("nullable", ("ref", "GroundingChunkMaps")), False),
            (
                ("retrievedContext", "retrieved_context"),
                ("nullable", ("ref", "GroundingChunkRetrievedContext")),
                False,
            ),
            (("web",), ("nullable", ("ref", "GroundingChunkWeb")), False),
        ),
        None,
    ),
    "GroundingChunkImage": (
        "model",
        (
            (("sourceUri", "source_uri"), ("nullable", ("str",)), False),
            (("imageUri", "image_uri"), ("nullable", ("str",)), False),
            (("title",), ("nullable", ("str",)), False),
            (("domain",), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "GroundingChunkMaps": (
        "model",
        (
            (
                ("placeAnswerSources", "place_answer_sources"),
                ("nullable", ("ref", "GroundingChunkMapsPlaceAnswerSources")),
                False,
            ),
            (("placeId", "place_id"), ("nullable", ("str",)), False),
            (("text",), ("nullable", ("str",)), False),
            (("title",), ("nullable", ("str",)), False),
            (("uri",), ("nullable", ("str",)), False),
            (("route",), ("nullable", ("ref", "GroundingChunkMapsRoute")), False),
        ),
        None,
    ),
    "GroundingChunkMapsPlaceAnswerSources": (
        "model",
        (
            (
                ("reviewSnippet", "review_snippet"),
                (
                    "nullable",
                    ("list", ("ref", "GroundingChunkMapsPlaceAnswerSourcesReviewSnippet")),
                ),
                False,
            ),
            (("flagContentUri", "flag_content_uri"), ("nullable", ("str",)), False),
            (
                ("reviewSnippets", "review_snippets"),
                (
                    "nullable",
                    ("list", ("ref", "GroundingChunkMapsPlaceAnswerSourcesReviewSnippet")),
                ),
                False,
            ),
        ),
        None,
    ),
    "GroundingChunkMapsPlaceAnswerSourcesReviewSnippet": (
        "model",
        (
            (
                ("authorAttribution", "author_attribution"),
                ("nullable", ("ref", "GroundingChunkMapsPlaceAnswerSourcesAuthorAttribution")),
                False,
            ),
            (("flagContentUri", "flag_content_uri"), ("nullable", ("str",)), False),
            (("googleMapsUri", "google_maps_uri"), ("nullable", ("str",)), False),
            (
                ("relativePublishTimeDescription", "relative_publish_time_description"),
                ("nullable", ("str",)),
                False,
            ),
            (("review",), ("nullable", ("str",)), False),
            (("reviewId", "review_id"), ("nullable", ("str",)), False),
            (("title",), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "GroundingChunkMapsPlaceAnswerSourcesAuthorAttribution": (
        "model",
        (
            (("displayName", "display_name"), ("nullable", ("str",)), False),
            (("photoUri", "photo_uri"), ("nullable", ("str",)), False),
            (("uri",), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "GroundingChunkMapsRoute": (
        "model",
        (
            (("distanceMeters", "distance_meters"), ("nullable", ("int",)), False),
            (("duration",), ("nullable", ("str",)), False),
            (("encodedPolyline", "encoded_polyline"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "GroundingChunkRetrievedContext": (
        "model",
        (
            (("documentName", "document_name"), ("nullable", ("str",)), False),
            (("ragChunk", "rag_chunk"), ("nullable", ("ref", "RagChunk")), False),
            (("text",), ("nullable", ("str",)), False),
            (("title",), ("nullable", ("str",)), False),
            (("uri",), ("nullable", ("str",)), False),
            (
                ("customMetadata", "custom_metadata"),
                ("nullable", ("list", ("ref", "GroundingChunkCustomMetadata"))),
                False,
            ),
            (("fileSearchStore", "file_search_store"), ("nullable", ("str",)), False),
            (("pageNumber", "page_number"), ("nullable", ("int",)), False),
            (("mediaId", "media_id"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "RagChunk": (
        "model",
        (
            (("pageSpan", "page_span"), ("nullable", ("ref", "RagChunkPageSpan")), False),
            (("text",), ("nullable", ("str",)), False),
            (("chunkId", "chunk_id"), ("nullable", ("str",)), False),
            (("fileId", "file_id"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "RagChunkPageSpan": (
        "model",
        (
            (("firstPage", "first_page"), ("nullable", ("int",)), False),
            (("lastPage", "last_page"), ("nullable", ("int",)), False),
        ),
        None,
    ),
    "GroundingChunkCustomMetadata": (
        "model",
        (
            (("key",), ("nullable", ("str",)), False),
            (("numericValue", "numeric_value"), ("nullable", ("float", None, None)), False),
            (
                ("stringListValue", "string_list_value"),
                ("nullable", ("ref", "GroundingChunkStringList")),
                False,
            ),
            (("stringValue", "string_value"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "GroundingChunkStringList": (
        "model",
        ((("values",), ("nullable", ("list", ("str",))), False),),
        None,
    ),
    "GroundingChunkWeb": (
        "model",
        (
            (("domain",), ("nullable", ("str",)), False),
            (("title",), ("nullable", ("str",)), False),
            (("uri",), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "GroundingSupport": (
        "model",
        (
            (
                ("confidenceScores", "confidence_scores"),
                ("nullable", ("list", ("float", None, None))),
                False,
            ),
            (
                ("groundingChunkIndices", "grounding_chunk_indices"),
                ("nullable", ("list", ("int",))),
                False,
            ),
            (("segment",), ("nullable", ("ref", "Segment")), False),
            (("renderedParts", "rendered_parts"), ("nullable", ("list", ("int",))), False),
        ),
        None,
    ),
    "Segment": (
        "model",
        (
            (("startIndex", "start_index"), ("nullable", ("int",)), False),
            (("endIndex", "end_index"), ("nullable", ("int",)), False),
            (("partIndex", "part_index"), ("nullable", ("int",)), False),
            (("text",), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "RetrievalMetadata": (
        "model",
        (
            (
                ("googleSearchDynamicRetrievalScore", "google_search_dynamic_retrieval_score"),
                ("nullable", ("float", None, None)),
                False,
            ),
        ),
        None,
    ),
    "SearchEntryPoint": (
        "model",
        (
            (("renderedContent", "rendered_content"), ("nullable", ("str",)), False),
            (("sdkBlob", "sdk_blob"), ("nullable", ("bytes",)), False),
        ),
        None,
    ),
    "GroundingMetadataSourceFlaggingUri": (
        "model",
        (
            (("flagContentUri", "flag_content_uri"), ("nullable", ("str",)), False),
            (("sourceId", "source_id"), ("nullable", ("str",)), False),
        ),
        None,
    ),
    "GenerateContentResponseUsageMetadata": (
        "model",
        (
            (
                ("cacheTokensDetails", "cache_tokens_details"),
                ("nullable", ("list", ("ref", "ModalityTokenCount"))),
                False,
            ),
            (
                ("cachedContentTokenCount", "cached_content_token_count"),
                ("nullable", ("int",)),
                False,
            ),
            (("candidatesTokenCount", "candidates_token_count"), ("nullable", ("int",)), False),
            (
                ("candidatesTokensDetails", "candidates_tokens_details"),
                ("nullable", ("list", ("ref", "ModalityTokenCount"))),
                False,
            ),
            (("promptTokenCount", "prompt_token_count"), ("nullable", ("int",)), False),
            (
                ("promptTokensDetails", "prompt_tokens_details"),
                ("nullable", ("list", ("ref", "ModalityTokenCount"))),
                False,
            ),
            (("thoughtsTokenCount", "thoughts_token_count"), ("nullable", ("int",)), False),
            (
                ("toolUsePromptTokenCount", "tool_use_prompt_token_count"),
                ("nullable", ("int",)),
                False,
            ),
            (
                ("toolUsePromptTokensDetails", "tool_use_prompt_tokens_details"),
                ("nullable", ("list", ("ref", "ModalityTokenCount"))),
                False,
            ),
            (("totalTokenCount", "total_token_count"), ("nullable", ("int",)), False),
            (
                ("trafficType", "traffic_type"),
                (
                    "nullable",
                    (
                        "literal",
                        (
                            "TRAFFIC_TYPE_UNSPECIFIED",
                            "ON_DEMAND",
                            "ON_DEMAND_PRIORITY",
                            "ON_DEMAND_FLEX",
                            "ON_DEMAND_OFFPEAK",
                            "PROVISIONED_THROUGHPUT",
                        ),
                    ),
                ),
                False,
            ),
        ),
        None,
    ),
    "ModalityTokenCount": (
        "model",
        (
            (
                ("modality",),
                (
                    "nullable",
                    (
                        "literal",
                        ("MODALITY_UNSPECIFIED", "TEXT", "IMAGE", "VIDEO", "AUDIO", "DOCUMENT"),
                    ),
                ),
                False,
            ),
            (("tokenCount", "token_count"), ("nullable", ("int",)), False),
        ),
        None,
    ),
    "SessionInput": (
        "model",
        (
            (("appName", "app_name"), ("str",), True),
            (("userId", "user_id"), ("str",), True),
            (("sessionId", "session_id"), ("nullable", ("str",)), False),
            (("state",), ("dict", ("str",), ("any",)), False),
        ),
        None,
    ),
}
