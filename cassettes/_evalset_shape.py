"""The EvalSet schema as plain data, read by the quick check (no pydantic).

Generated from the pydantic models of :mod:`cassettes._evalset` by ``python tools/generate_evalset_shape.py``; do not edit.

``SHAPES`` maps a model name to ``["model", fields, check]``: each field is ``[keys, node,
required]`` (``keys``: the spellings that name it), ``check`` the name of the model
validator's quick twin or null. A node is ``[kind, ...]``: ``any``, ``str``, ``bool``,
``int``, ``bytes`` (base64 text), ``none``, ``["float", ge, le]``, ``["nullable", node]``,
``["list", node]``, ``["dict", key, value]``, ``["tuple", nodes]``, ``["literal", values]``,
``["ref", model]``, ``["tagged", discriminator, {tag: node}]``.

The data is JSON text, not Python literals: one string constant compiles in no time where
a few hundred nested tuples cost tens of milliseconds whenever no ``.pyc`` is cached
(``PYTHONDONTWRITEBYTECODE``, read-only installs).
"""

# ruff: noqa: E501
from __future__ import annotations

import json
from typing import Any

__all__ = ["ROOT", "SHAPES"]

ROOT = "EvalSet"
SHAPES: dict[str, Any] = json.loads(
    r"""
{
  "EvalSet": ["model", [
    [["eval_set_id"], ["id"], true],
    [["name"], ["nullable", ["str"]], false],
    [["description"], ["nullable", ["str"]], false],
    [["eval_cases"], ["list", ["ref", "EvalCase"]], true],
    [["creation_timestamp"], ["float", 0, 10000000000000.0], false]
  ], "unique_eval_ids"],
  "EvalCase": ["model", [
    [["evalId", "eval_id"], ["id"], true],
    [["conversation"], ["nullable", ["list", ["ref", "Invocation"]]], false],
    [["conversationScenario", "conversation_scenario"], ["nullable", ["any"]], false],
    [["sessionInput", "session_input"], ["nullable", ["ref", "SessionInput"]], false],
    [["creationTimestamp", "creation_timestamp"], ["float", 0, 10000000000000.0], false],
    [["rubrics"], ["nullable", ["list", ["any"]]], false],
    [["finalSessionState", "final_session_state"], ["nullable", ["dict", ["str"], ["any"]]], false]
  ], "one_conversation"],
  "Invocation": ["model", [
    [["invocationId", "invocation_id"], ["str"], false],
    [["userContent", "user_content"], ["ref", "Content"], true],
    [["finalResponse", "final_response"], ["nullable", ["ref", "Content"]], false],
    [["intermediateData", "intermediate_data"], ["tagged", "intermediate_shape", {"IntermediateData": ["ref", "IntermediateData"], "InvocationEvents": ["ref", "InvocationEvents"], "None": ["none"]}], false],
    [["creationTimestamp", "creation_timestamp"], ["float", 0, 10000000000000.0], false],
    [["duration"], ["nullable", ["float", 0, 1000000000.0]], false],
    [["modelDuration", "model_duration"], ["nullable", ["float", 0, 1000000000.0]], false],
    [["toolDuration", "tool_duration"], ["nullable", ["float", 0, 1000000000.0]], false],
    [["rubrics"], ["nullable", ["list", ["any"]]], false],
    [["appDetails", "app_details"], ["nullable", ["any"]], false]
  ], "sendable_user_turn"],
  "Content": ["model", [
    [["parts"], ["nullable", ["list", ["ref", "Part"]]], false],
    [["role"], ["nullable", ["str"]], false]
  ], null],
  "Part": ["model", [
    [["mediaResolution", "media_resolution"], ["nullable", ["ref", "PartMediaResolution"]], false],
    [["codeExecutionResult", "code_execution_result"], ["nullable", ["ref", "CodeExecutionResult"]], false],
    [["executableCode", "executable_code"], ["nullable", ["ref", "ExecutableCode"]], false],
    [["fileData", "file_data"], ["nullable", ["ref", "FileData"]], false],
    [["functionCall", "function_call"], ["nullable", ["ref", "FunctionCall"]], false],
    [["functionResponse", "function_response"], ["nullable", ["ref", "FunctionResponse"]], false],
    [["inlineData", "inline_data"], ["nullable", ["ref", "Blob"]], false],
    [["text"], ["nullable", ["str"]], false],
    [["thought"], ["nullable", ["bool"]], false],
    [["thoughtSignature", "thought_signature"], ["nullable", ["bytes"]], false],
    [["videoMetadata", "video_metadata"], ["nullable", ["ref", "VideoMetadata"]], false],
    [["toolCall", "tool_call"], ["nullable", ["ref", "ToolCall"]], false],
    [["toolResponse", "tool_response"], ["nullable", ["ref", "ToolResponse"]], false],
    [["partMetadata", "part_metadata"], ["nullable", ["dict", ["str"], ["any"]]], false],
    [["audioTranscription", "audio_transcription"], ["nullable", ["ref", "Transcription"]], false],
    [["mediaProcessing", "media_processing"], ["nullable", ["literal", ["MEDIA_PROCESSING_UNSPECIFIED", "STATIC", "AGENTIC"]]], false],
    [["speechMetadata", "speech_metadata"], ["nullable", ["ref", "SpeechMetadata"]], false]
  ], null],
  "PartMediaResolution": ["model", [
    [["level"], ["nullable", ["literal", ["MEDIA_RESOLUTION_UNSPECIFIED", "MEDIA_RESOLUTION_LOW", "MEDIA_RESOLUTION_MEDIUM", "MEDIA_RESOLUTION_HIGH", "MEDIA_RESOLUTION_ULTRA_HIGH"]]], false],
    [["numTokens", "num_tokens"], ["nullable", ["int"]], false]
  ], null],
  "CodeExecutionResult": ["model", [
    [["outcome"], ["nullable", ["literal", ["OUTCOME_UNSPECIFIED", "OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"]]], false],
    [["output"], ["nullable", ["str"]], false],
    [["id"], ["nullable", ["str"]], false]
  ], null],
  "ExecutableCode": ["model", [
    [["code"], ["nullable", ["str"]], false],
    [["language"], ["nullable", ["literal", ["LANGUAGE_UNSPECIFIED", "PYTHON"]]], false],
    [["id"], ["nullable", ["str"]], false]
  ], null],
  "FileData": ["model", [
    [["displayName", "display_name"], ["nullable", ["str"]], false],
    [["fileUri", "file_uri"], ["nullable", ["str"]], false],
    [["mimeType", "mime_type"], ["nullable", ["str"]], false]
  ], null],
  "FunctionCall": ["model", [
    [["id"], ["nullable", ["str"]], false],
    [["args"], ["nullable", ["dict", ["str"], ["any"]]], false],
    [["name"], ["nullable", ["str"]], false],
    [["partialArgs", "partial_args"], ["nullable", ["list", ["ref", "PartialArg"]]], false],
    [["willContinue", "will_continue"], ["nullable", ["bool"]], false]
  ], null],
  "PartialArg": ["model", [
    [["boolValue", "bool_value"], ["nullable", ["bool"]], false],
    [["jsonPath", "json_path"], ["nullable", ["str"]], false],
    [["nullValue", "null_value"], ["nullable", ["literal", ["NULL_VALUE"]]], false],
    [["numberValue", "number_value"], ["nullable", ["float", null, null]], false],
    [["stringValue", "string_value"], ["nullable", ["str"]], false],
    [["willContinue", "will_continue"], ["nullable", ["bool"]], false]
  ], null],
  "FunctionResponse": ["model", [
    [["willContinue", "will_continue"], ["nullable", ["bool"]], false],
    [["scheduling"], ["nullable", ["literal", ["SCHEDULING_UNSPECIFIED", "SILENT", "WHEN_IDLE", "INTERRUPT"]]], false],
    [["parts"], ["nullable", ["list", ["ref", "FunctionResponsePart"]]], false],
    [["id"], ["nullable", ["str"]], false],
    [["name"], ["nullable", ["str"]], false],
    [["response"], ["nullable", ["dict", ["str"], ["any"]]], false]
  ], null],
  "FunctionResponsePart": ["model", [
    [["inlineData", "inline_data"], ["nullable", ["ref", "FunctionResponseBlob"]], false],
    [["fileData", "file_data"], ["nullable", ["ref", "FunctionResponseFileData"]], false],
    [["mediaProcessing", "media_processing"], ["nullable", ["literal", ["MEDIA_PROCESSING_UNSPECIFIED", "STATIC", "AGENTIC"]]], false]
  ], null],
  "FunctionResponseBlob": ["model", [
    [["mimeType", "mime_type"], ["nullable", ["str"]], false],
    [["data"], ["nullable", ["bytes"]], false],
    [["displayName", "display_name"], ["nullable", ["str"]], false]
  ], null],
  "FunctionResponseFileData": ["model", [
    [["fileUri", "file_uri"], ["nullable", ["str"]], false],
    [["mimeType", "mime_type"], ["nullable", ["str"]], false],
    [["displayName", "display_name"], ["nullable", ["str"]], false]
  ], null],
  "Blob": ["model", [
    [["data"], ["nullable", ["bytes"]], false],
    [["displayName", "display_name"], ["nullable", ["str"]], false],
    [["mimeType", "mime_type"], ["nullable", ["str"]], false]
  ], null],
  "VideoMetadata": ["model", [
    [["endOffset", "end_offset"], ["nullable", ["str"]], false],
    [["fps"], ["nullable", ["float", null, null]], false],
    [["startOffset", "start_offset"], ["nullable", ["str"]], false]
  ], null],
  "ToolCall": ["model", [
    [["id"], ["nullable", ["str"]], false],
    [["toolType", "tool_type"], ["nullable", ["literal", ["TOOL_TYPE_UNSPECIFIED", "GOOGLE_SEARCH_WEB", "GOOGLE_SEARCH_IMAGE", "URL_CONTEXT", "GOOGLE_MAPS", "FILE_SEARCH", "MEDIA_PROCESSING"]]], false],
    [["args"], ["nullable", ["dict", ["str"], ["any"]]], false]
  ], null],
  "ToolResponse": ["model", [
    [["id"], ["nullable", ["str"]], false],
    [["toolType", "tool_type"], ["nullable", ["literal", ["TOOL_TYPE_UNSPECIFIED", "GOOGLE_SEARCH_WEB", "GOOGLE_SEARCH_IMAGE", "URL_CONTEXT", "GOOGLE_MAPS", "FILE_SEARCH", "MEDIA_PROCESSING"]]], false],
    [["response"], ["nullable", ["dict", ["str"], ["any"]]], false]
  ], null],
  "Transcription": ["model", [
    [["text"], ["nullable", ["str"]], false],
    [["finished"], ["nullable", ["bool"]], false],
    [["languageCode", "language_code"], ["nullable", ["str"]], false],
    [["speakerLabel", "speaker_label"], ["nullable", ["str"]], false],
    [["words"], ["nullable", ["list", ["ref", "WordInfo"]]], false],
    [["startOffset", "start_offset"], ["nullable", ["str"]], false],
    [["endOffset", "end_offset"], ["nullable", ["str"]], false]
  ], null],
  "WordInfo": ["model", [
    [["word"], ["nullable", ["str"]], false],
    [["startOffset", "start_offset"], ["nullable", ["str"]], false],
    [["endOffset", "end_offset"], ["nullable", ["str"]], false]
  ], null],
  "SpeechMetadata": ["model", [
    [["speaker"], ["nullable", ["str"]], false],
    [["style"], ["nullable", ["str"]], false]
  ], null],
  "IntermediateData": ["model", [
    [["toolUses", "tool_uses"], ["list", ["ref", "FunctionCall"]], false],
    [["toolResponses", "tool_responses"], ["list", ["ref", "FunctionResponse"]], false],
    [["intermediateResponses", "intermediate_responses"], ["list", ["tuple", [["str"], ["list", ["ref", "Part"]]]]], false]
  ], null],
  "InvocationEvents": ["model", [
    [["invocationEvents", "invocation_events"], ["list", ["ref", "InvocationEvent"]], false]
  ], null],
  "InvocationEvent": ["model", [
    [["author"], ["str"], true],
    [["content"], ["nullable", ["ref", "Content"]], false],
    [["groundingMetadata", "grounding_metadata"], ["nullable", ["ref", "GroundingMetadata"]], false],
    [["usageMetadata", "usage_metadata"], ["nullable", ["ref", "GenerateContentResponseUsageMetadata"]], false],
    [["modelVersion", "model_version"], ["nullable", ["str"]], false]
  ], null],
  "GroundingMetadata": ["model", [
    [["imageSearchQueries", "image_search_queries"], ["nullable", ["list", ["str"]]], false],
    [["groundingChunks", "grounding_chunks"], ["nullable", ["list", ["ref", "GroundingChunk"]]], false],
    [["groundingSupports", "grounding_supports"], ["nullable", ["list", ["ref", "GroundingSupport"]]], false],
    [["retrievalMetadata", "retrieval_metadata"], ["nullable", ["ref", "RetrievalMetadata"]], false],
    [["searchEntryPoint", "search_entry_point"], ["nullable", ["ref", "SearchEntryPoint"]], false],
    [["webSearchQueries", "web_search_queries"], ["nullable", ["list", ["str"]]], false],
    [["googleMapsWidgetContextToken", "google_maps_widget_context_token"], ["nullable", ["str"]], false],
    [["retrievalQueries", "retrieval_queries"], ["nullable", ["list", ["str"]]], false],
    [["sourceFlaggingUris", "source_flagging_uris"], ["nullable", ["list", ["ref", "GroundingMetadataSourceFlaggingUri"]]], false]
  ], null],
  "GroundingChunk": ["model", [
    [["image"], ["nullable", ["ref", "GroundingChunkImage"]], false],
    [["maps"], ["nullable", ["ref", "GroundingChunkMaps"]], false],
    [["retrievedContext", "retrieved_context"], ["nullable", ["ref", "GroundingChunkRetrievedContext"]], false],
    [["web"], ["nullable", ["ref", "GroundingChunkWeb"]], false]
  ], null],
  "GroundingChunkImage": ["model", [
    [["sourceUri", "source_uri"], ["nullable", ["str"]], false],
    [["imageUri", "image_uri"], ["nullable", ["str"]], false],
    [["title"], ["nullable", ["str"]], false],
    [["domain"], ["nullable", ["str"]], false]
  ], null],
  "GroundingChunkMaps": ["model", [
    [["placeAnswerSources", "place_answer_sources"], ["nullable", ["ref", "GroundingChunkMapsPlaceAnswerSources"]], false],
    [["placeId", "place_id"], ["nullable", ["str"]], false],
    [["text"], ["nullable", ["str"]], false],
    [["title"], ["nullable", ["str"]], false],
    [["uri"], ["nullable", ["str"]], false],
    [["route"], ["nullable", ["ref", "GroundingChunkMapsRoute"]], false]
  ], null],
  "GroundingChunkMapsPlaceAnswerSources": ["model", [
    [["reviewSnippet", "review_snippet"], ["nullable", ["list", ["ref", "GroundingChunkMapsPlaceAnswerSourcesReviewSnippet"]]], false],
    [["flagContentUri", "flag_content_uri"], ["nullable", ["str"]], false],
    [["reviewSnippets", "review_snippets"], ["nullable", ["list", ["ref", "GroundingChunkMapsPlaceAnswerSourcesReviewSnippet"]]], false]
  ], null],
  "GroundingChunkMapsPlaceAnswerSourcesReviewSnippet": ["model", [
    [["authorAttribution", "author_attribution"], ["nullable", ["ref", "GroundingChunkMapsPlaceAnswerSourcesAuthorAttribution"]], false],
    [["flagContentUri", "flag_content_uri"], ["nullable", ["str"]], false],
    [["googleMapsUri", "google_maps_uri"], ["nullable", ["str"]], false],
    [["relativePublishTimeDescription", "relative_publish_time_description"], ["nullable", ["str"]], false],
    [["review"], ["nullable", ["str"]], false],
    [["reviewId", "review_id"], ["nullable", ["str"]], false],
    [["title"], ["nullable", ["str"]], false]
  ], null],
  "GroundingChunkMapsPlaceAnswerSourcesAuthorAttribution": ["model", [
    [["displayName", "display_name"], ["nullable", ["str"]], false],
    [["photoUri", "photo_uri"], ["nullable", ["str"]], false],
    [["uri"], ["nullable", ["str"]], false]
  ], null],
  "GroundingChunkMapsRoute": ["model", [
    [["distanceMeters", "distance_meters"], ["nullable", ["int"]], false],
    [["duration"], ["nullable", ["str"]], false],
    [["encodedPolyline", "encoded_polyline"], ["nullable", ["str"]], false]
  ], null],
  "GroundingChunkRetrievedContext": ["model", [
    [["documentName", "document_name"], ["nullable", ["str"]], false],
    [["ragChunk", "rag_chunk"], ["nullable", ["ref", "RagChunk"]], false],
    [["text"], ["nullable", ["str"]], false],
    [["title"], ["nullable", ["str"]], false],
    [["uri"], ["nullable", ["str"]], false],
    [["customMetadata", "custom_metadata"], ["nullable", ["list", ["ref", "GroundingChunkCustomMetadata"]]], false],
    [["fileSearchStore", "file_search_store"], ["nullable", ["str"]], false],
    [["pageNumber", "page_number"], ["nullable", ["int"]], false],
    [["mediaId", "media_id"], ["nullable", ["str"]], false]
  ], null],
  "RagChunk": ["model", [
    [["pageSpan", "page_span"], ["nullable", ["ref", "RagChunkPageSpan"]], false],
    [["text"], ["nullable", ["str"]], false],
    [["chunkId", "chunk_id"], ["nullable", ["str"]], false],
    [["fileId", "file_id"], ["nullable", ["str"]], false]
  ], null],
  "RagChunkPageSpan": ["model", [
    [["firstPage", "first_page"], ["nullable", ["int"]], false],
    [["lastPage", "last_page"], ["nullable", ["int"]], false]
  ], null],
  "GroundingChunkCustomMetadata": ["model", [
    [["key"], ["nullable", ["str"]], false],
    [["numericValue", "numeric_value"], ["nullable", ["float", null, null]], false],
    [["stringListValue", "string_list_value"], ["nullable", ["ref", "GroundingChunkStringList"]], false],
    [["stringValue", "string_value"], ["nullable", ["str"]], false]
  ], null],
  "GroundingChunkStringList": ["model", [
    [["values"], ["nullable", ["list", ["str"]]], false]
  ], null],
  "GroundingChunkWeb": ["model", [
    [["domain"], ["nullable", ["str"]], false],
    [["title"], ["nullable", ["str"]], false],
    [["uri"], ["nullable", ["str"]], false]
  ], null],
  "GroundingSupport": ["model", [
    [["confidenceScores", "confidence_scores"], ["nullable", ["list", ["float", null, null]]], false],
    [["groundingChunkIndices", "grounding_chunk_indices"], ["nullable", ["list", ["int"]]], false],
    [["segment"], ["nullable", ["ref", "Segment"]], false],
    [["renderedParts", "rendered_parts"], ["nullable", ["list", ["int"]]], false]
  ], null],
  "Segment": ["model", [
    [["startIndex", "start_index"], ["nullable", ["int"]], false],
    [["endIndex", "end_index"], ["nullable", ["int"]], false],
    [["partIndex", "part_index"], ["nullable", ["int"]], false],
    [["text"], ["nullable", ["str"]], false]
  ], null],
  "RetrievalMetadata": ["model", [
    [["googleSearchDynamicRetrievalScore", "google_search_dynamic_retrieval_score"], ["nullable", ["float", null, null]], false]
  ], null],
  "SearchEntryPoint": ["model", [
    [["renderedContent", "rendered_content"], ["nullable", ["str"]], false],
    [["sdkBlob", "sdk_blob"], ["nullable", ["bytes"]], false]
  ], null],
  "GroundingMetadataSourceFlaggingUri": ["model", [
    [["flagContentUri", "flag_content_uri"], ["nullable", ["str"]], false],
    [["sourceId", "source_id"], ["nullable", ["str"]], false]
  ], null],
  "GenerateContentResponseUsageMetadata": ["model", [
    [["cacheTokensDetails", "cache_tokens_details"], ["nullable", ["list", ["ref", "ModalityTokenCount"]]], false],
    [["cachedContentTokenCount", "cached_content_token_count"], ["nullable", ["int"]], false],
    [["candidatesTokenCount", "candidates_token_count"], ["nullable", ["int"]], false],
    [["candidatesTokensDetails", "candidates_tokens_details"], ["nullable", ["list", ["ref", "ModalityTokenCount"]]], false],
    [["promptTokenCount", "prompt_token_count"], ["nullable", ["int"]], false],
    [["promptTokensDetails", "prompt_tokens_details"], ["nullable", ["list", ["ref", "ModalityTokenCount"]]], false],
    [["thoughtsTokenCount", "thoughts_token_count"], ["nullable", ["int"]], false],
    [["toolUsePromptTokenCount", "tool_use_prompt_token_count"], ["nullable", ["int"]], false],
    [["toolUsePromptTokensDetails", "tool_use_prompt_tokens_details"], ["nullable", ["list", ["ref", "ModalityTokenCount"]]], false],
    [["totalTokenCount", "total_token_count"], ["nullable", ["int"]], false],
    [["trafficType", "traffic_type"], ["nullable", ["literal", ["TRAFFIC_TYPE_UNSPECIFIED", "ON_DEMAND", "ON_DEMAND_PRIORITY", "ON_DEMAND_FLEX", "ON_DEMAND_OFFPEAK", "PROVISIONED_THROUGHPUT"]]], false]
  ], null],
  "ModalityTokenCount": ["model", [
    [["modality"], ["nullable", ["literal", ["MODALITY_UNSPECIFIED", "TEXT", "IMAGE", "VIDEO", "AUDIO", "DOCUMENT"]]], false],
    [["tokenCount", "token_count"], ["nullable", ["int"]], false]
  ], null],
  "SessionInput": ["model", [
    [["appName", "app_name"], ["str"], true],
    [["userId", "user_id"], ["str"], true],
    [["sessionId", "session_id"], ["nullable", ["str"]], false],
    [["state"], ["dict", ["str"], ["any"]], false]
  ], null]
}
"""
)
