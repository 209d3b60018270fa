"""The byte layout ``dump_cassette`` writes, read back without parsing the JSON.

A cassette is dumped with indent 2, and JSON strings hold no raw line break, so a line
break followed by exactly N spaces is structure: an exchange is an object at indent 4 of
the top-level ``exchanges`` array, its own keys sit at indent 6, the request's at 8, its
body's at 10, the body value's at 12, each ``contents`` turn at 14. The side index
(:mod:`cassettes._side_index`) finds exchanges by these markers and bucket keys
(:mod:`cassettes._bucket_keys`) read requests by them; both read them from here.
"""

from __future__ import annotations

EXCHANGES_OPEN = b'\n  "exchanges": [\n'
EXCHANGE_OPEN = b"    {\n"
EXCHANGE_CLOSE = b"\n    }"
ARRAY_CLOSE = b"\n  ]"

# An exchange's keys (indent 6).
ID_LINE = b'\n      "id": '
ORIGIN_LINE = b'\n      "origin": '
RECORDED_AT_LINE = b'\n      "recorded_at": '
DURATION_LINE = b'\n      "duration_ms": '
REQUEST_OPEN = b'\n      "request": {\n'
RESPONSE_LINE = b'\n      "response": '

# The request's keys (indent 8), its body's (10), the body value's (12), a turn's (14).
METHOD_LINE = b'\n        "method": '
URL_LINE = b'\n        "url": '
BODY_LINE = b'\n        "body": '
REQUEST_TAIL = b"\n        }\n      },"
"""How a request ends before its response: its last member (the body, or the headers)
closes, then the request. Found from the response's line, whose name a body's lines never
spell (a search for a closing brace alone would stop at every line of the body)."""
KIND_LINE = b'\n          "kind": '
VALUE_LINE = b'\n          "value": '
CONTENTS_LINE = b'\n            "contents": '
CONTENTS_CLOSE = b"\n            ]"
TURN_OPEN = b"\n              {"
TURN_INDENT = b"\n" + b" " * 14
DEEPER_INDENT = b"\n" + b" " * 15
