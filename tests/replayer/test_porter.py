"""NLTK's Porter stemmer loaded alone is NLTK's stemmer: same stems, word for word."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nltk
from nltk.stem.porter import PorterStemmer

from replayer._scoring._porter import porter_stemmer, standalone_porter_class


def _vocabulary() -> list[str]:
    """Tens of thousands of distinct English words: NLTK's own sources and docs."""
    words: set[str] = set()
    for file in sorted(Path(nltk.__file__).parent.rglob("*.py")):
        words.update(
            w.lower() for w in re.findall(r"[A-Za-z]{2,}", file.read_text("utf-8", "replace"))
        )
    return sorted(words)


def test_standalone_stemmer_equals_nltk_on_every_word() -> None:
    standalone = standalone_porter_class()()
    real = PorterStemmer()
    assert standalone_porter_class() is not PorterStemmer  # really the private copy
    words = _vocabulary()
    assert len(words) > 10_000
    different = [
        (w, standalone.stem(w), real.stem(w)) for w in words if standalone.stem(w) != real.stem(w)
    ]
    assert different == []
    assert standalone.mode == real.mode


def test_porter_stemmer_uses_nltk_itself_once_it_is_imported() -> None:
    assert "nltk" in sys.modules
    assert type(porter_stemmer()) is PorterStemmer


def test_response_match_score_does_not_import_nltk() -> None:
    code = (
        "import sys\n"
        "from replayer._scoring.response_match import rouge1_fmeasure\n"
        "score = rouge1_fmeasure('The travellers were running quickly', 'a traveller runs')\n"
        "print(repr(score), sorted(m for m in ('nltk', 'scipy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    from replayer._scoring.response_match import rouge1_fmeasure

    expected = rouge1_fmeasure("The travellers were running quickly", "a traveller runs")
    assert done.stdout.split() == [repr(expected), "[]"]
