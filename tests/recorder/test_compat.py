"""The one private google-genai name rec uses still exists, and a change is reported clearly."""

from __future__ import annotations

import pytest
from google.genai import _base_url

from recorder._compat import GenaiChanged, genai_default_base_urls


def test_default_base_urls_are_set_for_the_block_and_restored() -> None:
    before = (_base_url.get_base_url(False), _base_url.get_base_url(True))
    with genai_default_base_urls("http://127.0.0.1:9"):
        assert _base_url.get_base_url(False) == "http://127.0.0.1:9"
        assert _base_url.get_base_url(True) == "http://127.0.0.1:9"
    assert (_base_url.get_base_url(False), _base_url.get_base_url(True)) == before


def test_they_win_over_a_default_the_program_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_base_url, "_default_base_gemini_url", "https://example.invalid")
    with genai_default_base_urls("http://127.0.0.1:9"):
        assert _base_url.get_base_url(False) == "http://127.0.0.1:9"
    assert _base_url.get_base_url(False) == "https://example.invalid"


def test_a_google_genai_without_them_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(_base_url, "set_default_base_urls")
    with pytest.raises(GenaiChanged) as caught:
        with genai_default_base_urls("http://127.0.0.1:9"):
            pass
    assert "google.genai._base_url.set_default_base_urls" in str(caught.value)
    assert "recorder/_compat.py" in str(caught.value)
