"""How many takes a recording holds, and pass@k / pass^k (pure functions, table-driven)."""

from __future__ import annotations

import pytest

from replayer._takes import pass_at_k, pass_hat_k, recorded_takes
from tests.factories import gemini_request, make_evalset, make_exchange


def _openings(text: str, count: int, *, status: int = 200) -> list[object]:
    return [
        make_exchange(i, request_body=gemini_request(text), status=status) for i in range(count)
    ]


@pytest.mark.parametrize(
    ("texts", "recorded", "expected"),
    [
        pytest.param(["Hi"], {"Hi": _openings("Hi", 5)}, {"case_0": 5}, id="five-takes"),
        pytest.param(["Hi"], {"Hi": []}, {"case_0": 1}, id="none-recorded-is-one"),
        pytest.param(
            ["Hi", "Hi"], {"Hi": _openings("Hi", 6)}, {"case_0": 3, "case_1": 3},
            id="two-cases-share-an-opening",
        ),
        pytest.param(
            ["Hi"], {"Hi": _openings("Hi", 2) + _openings("Hi", 2, status=503)}, {"case_0": 2},
            id="a-failed-try-is-no-take",
        ),
        pytest.param(
            ["Hi"],
            {"Hi": [make_exchange(0, request_body=gemini_request(["Hi", "Hello", "More"]))]},
            {"case_0": 1},
            id="a-later-turn-is-no-opening",
        ),
    ],
)  # fmt: skip
def test_recorded_takes(
    texts: list[str], recorded: dict[str, list[object]], expected: dict[str, int]
) -> None:
    cases = make_evalset(texts).eval_cases
    assert recorded_takes(cases, recorded) == expected  # type: ignore[arg-type]


def test_a_case_counts_its_sharers_in_the_whole_suite() -> None:
    """A worker process holding one of two cases that open alike still splits the takes."""
    suite = make_evalset(["Hi", "Hi"]).eval_cases
    found = {"Hi": _openings("Hi", 6)}
    assert recorded_takes(suite[:1], found, suite=suite) == {"case_0": 3}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("n", "c", "k", "at", "hat"),
    [
        pytest.param(5, 3, 5, 1.0, 0.0, id="3-of-5-k5"),
        pytest.param(5, 3, 1, 0.6, 0.6, id="3-of-5-k1"),
        pytest.param(5, 3, 2, 0.9, 0.3, id="3-of-5-k2"),
        pytest.param(5, 5, 5, 1.0, 1.0, id="stable"),
        pytest.param(5, 0, 5, 0.0, 0.0, id="failing"),
    ],
)
def test_pass_at_k_and_pass_hat_k(n: int, c: int, k: int, at: float, hat: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(at)
    assert pass_hat_k(n, c, k) == pytest.approx(hat)
