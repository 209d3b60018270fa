"""The one walk over a document's strings, and the one reading of a URL's credentials."""

from __future__ import annotations

import pytest

from cassettes._json_path import WILDCARD
from cassettes._secret_shapes import split_url
from cassettes._secret_walk import JsonPath, map_strings, stream_texts


def test_the_walk_visits_keys_before_values_in_document_order_with_their_paths() -> None:
    seen: list[tuple[JsonPath, str, bool]] = []

    def visit(path: JsonPath, text: str, is_key: bool) -> str:
        seen.append((path, text, is_key))
        return text.upper()

    document = {"a": ["x", {"b": "y"}], "n": 1, "t": ("z",)}
    assert map_strings(document, visit) == {"A": ["X", {"B": "Y"}], "N": 1, "T": ["Z"]}
    assert seen == [
        (("a",), "a", True),
        (("a", 0), "x", False),
        (("a", 1, "b"), "b", True),
        (("a", 1, "b"), "y", False),
        (("n",), "n", True),
        (("t",), "t", True),
        (("t", 0), "z", False),
    ]


def test_the_walk_without_paths_rewrites_the_same_strings() -> None:
    document = {"a": ["x", {"b": "y"}]}
    paths: set[JsonPath] = set()

    def visit(path: JsonPath, text: str, _is_key: bool) -> str:
        paths.add(path)
        return text * 2

    assert map_strings(document, visit, None) == {"aa": ["xx", {"bb": "yy"}]}
    assert paths == {()}


def test_stream_texts_join_a_string_split_over_events_and_their_raw_lines() -> None:
    body = {
        "kind": "sse",
        "events": [
            {"data": {"delta": {"text": "AIza"}}, "lines": None},
            {"data": None, "lines": ["event: delta", 'data: {"delta": {"text": "Sy-rest"}}']},
        ],
    }
    joined = dict(stream_texts(body))
    assert joined[("events", WILDCARD, "data", "delta", "text")] == "AIzaSy-rest"
    assert joined[("events", WILDCARD, "lines")] == 'event: delta{"delta": {"text": "Sy-rest"}}'


@pytest.mark.parametrize(
    ("url", "kwargs", "stored", "userinfo", "password", "params"),
    [
        pytest.param(
            "https://u:pass-0123456789@h.example/p?key=k-0123456789&alt=sse",
            {},
            "https://h.example/p?alt=sse",
            "u:pass-0123456789",
            "pass-0123456789",
            {"k-0123456789"},
            id="userinfo-and-key-dropped",
        ),
        pytest.param(
            "https://h.example/p?access_token=t-0123456789&x=1&token=",
            {"marker": "<redacted>"},
            "https://h.example/p?access_token=<redacted>&x=1&token=",
            "",
            "",
            {"t-0123456789"},
            id="marker-kept-in-place",
        ),
        pytest.param(
            "https://h.example/p?tenant=acme&x=1",
            {"drop": frozenset({"tenant"})},
            "https://h.example/p?x=1",
            "",
            "",
            set(),
            id="rule-named-parameter-dropped-not-a-credential",
        ),
        pytest.param(
            "https://h.example/p?pageToken=abcdefghij",
            {},
            "https://h.example/p?pageToken=abcdefghij",
            "",
            "",
            set(),
            id="cursor-is-not-a-credential",
        ),
    ],
)
def test_split_url_reads_and_strips_a_urls_credentials(
    url: str,
    kwargs: dict[str, object],
    stored: str,
    userinfo: str,
    password: str,
    params: set[str],
) -> None:
    split = split_url(url, **kwargs)  # type: ignore[arg-type]
    assert split.stored == stored
    assert (split.userinfo, split.password, set(split.params)) == (userinfo, password, params)
