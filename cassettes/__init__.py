"""rec's formats and the pure decisions made over them (the ground floor).

The cassette (recorded HTTP exchanges and MCP sessions), ADK's eval files (EvalSet, eval
config, EvalSetResult, legacy files), request canonicalisation and matching, miss
explanations, redaction and masking, the extraction of conversations from model traffic,
strict checking, atomic file writes and the error tree. No sockets, no event loop: every
function takes values and returns values.

Internal: every module is private. Users import from :mod:`rec`.
"""
