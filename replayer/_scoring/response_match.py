"""``response_match_score``: ROUGE-1 F-measure with google-adk 2.13's Unicode-aware tokenizer.

A line-for-line port of ``google/adk/evaluation/final_response_match_v1.py`` (the
tokenizer) and ``rouge_score.rouge_scorer`` (the unigram F-measure), built on the same
``rouge_score`` tokenizer and NLTK Porter stemmer ADK uses for ASCII words, so the floats
are bit-identical. The difference is speed: one stemmer for the process and a cache of
tokenized ASCII words, instead of a new scorer and stemmer per invocation; and the stemmer
is loaded on the first ASCII word, without the rest of NLTK (``_porter.py``).
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from replayer._scoring._porter import porter_stemmer

if TYPE_CHECKING:
    from replayer._scoring.views import ContentView

__all__ = ["content_text", "rouge1_fmeasure", "tokenize"]


@functools.cache
def _rouge_tokenizer() -> Callable[[str], list[str]]:
    """``rouge_score.tokenizers.DefaultTokenizer(use_stemmer=True).tokenize``, built on first use.

    ``DefaultTokenizer.tokenize`` is ``rouge_score.tokenize.tokenize(text, PorterStemmer())``;
    calling that function directly avoids ``rouge_score.tokenizers``, whose import loads NLTK.
    """
    from rouge_score import tokenize as rouge_tokenize

    stemmer = porter_stemmer()
    return lambda text: rouge_tokenize.tokenize(text, stemmer)


def content_text(content: ContentView | None) -> str:
    """Text parts joined with ``\\n`` (empty parts skipped, thought parts included), as ADK."""
    if content and content.parts:
        return "\n".join([part.text for part in content.parts if part.text])
    return ""


def _is_cjk(code: int) -> bool:
    """CJK ideographs, hiragana and katakana (one block), Hangul syllables."""
    return 0x4E00 <= code <= 0x9FFF or 0x3040 <= code <= 0x30FF or 0xAC00 <= code <= 0xD7AF


def _is_non_spaced(code: int) -> bool:
    """Thai and Lao (one block), Khmer, Myanmar: scripts written without spaces."""
    return 0x0E00 <= code <= 0x0EFF or 0x1780 <= code <= 0x17FF or 0x1000 <= code <= 0x109F


@functools.lru_cache(maxsize=65536)
def _ascii_word_tokens(word: str) -> tuple[str, ...]:
    return tuple(_rouge_tokenizer()(word))


def tokenize(text: str) -> list[str]:
    """ADK 2.13's ``_UnicodeAwareTokenizer(use_stemmer=True).tokenize``."""
    text = unicodedata.normalize("NFKC", text).lower()
    if text.isascii():
        # Fast path: every character is ASCII, so none is CJK/Thai or a combining mark.
        chars = [c if c.isalnum() else " " for c in text]
    else:
        chars = []
        for char in text:
            code = ord(char)
            if _is_cjk(code):
                chars.extend((" ", char, " "))
            elif _is_non_spaced(code):
                if unicodedata.category(char).startswith("M"):
                    chars.append(char)
                else:
                    chars.extend((" ", char))
            elif char.isalnum() or unicodedata.category(char).startswith("M"):
                chars.append(char)
            else:
                chars.append(" ")
    tokens: list[str] = []
    for word in "".join(chars).split():
        if word.isascii():
            tokens.extend(_ascii_word_tokens(word))
        else:
            tokens.append(word)
    return tokens


def rouge1_fmeasure(candidate: str, reference: str) -> float:
    """ROUGE-1 F-measure of ``candidate`` against ``reference`` (both empty -> 0.0)."""
    target = Counter(tokenize(reference))
    prediction = Counter(tokenize(candidate))
    intersection = 0
    for token, count in target.items():
        intersection += min(count, prediction[token])
    precision = intersection / max(sum(prediction.values()), 1)
    recall = intersection / max(sum(target.values()), 1)
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
