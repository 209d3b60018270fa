"""``--baseline DIR``: what a run is compared with, case by case and turn by turn.

DIR is either

- a results folder an earlier run wrote (``rec replay ... --results DIR``): each case's
  scores and recorded figures are read from its ``*.evalset_result.json`` files; or
- a recording folder (eval sets with their cassettes, as ``rec start`` or
  ``rec replay --mode record`` leave them): each case's figures are read from the
  conversation of the cassette that follows its user turns (its first take); a recording
  holds no scores, so only the figures are compared.

Cases are matched by eval set id and eval id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cassettes._errors import InputError
from cassettes._eval_result import CaseUsage, EvalSetResult, EvalStatus
from cassettes._evalset import Invocation
from replayer._prices import PriceTable
from replayer._usage import case_usage

__all__ = ["Baseline", "BaselineCase", "load_baseline"]


@dataclass(frozen=True)
class BaselineCase:
    """One case of the baseline: its scores (None from a recording) and figures."""

    scores: dict[str, float | None] | None
    usage: CaseUsage | None
    passed: bool | None = None


@dataclass
class Baseline:
    """The baseline's cases by ``(eval_set_id, eval_id)``, and where it was read."""

    source: Path
    cases: dict[tuple[str, str], BaselineCase] = field(default_factory=dict)

    def case(self, eval_set_id: str, eval_id: str) -> BaselineCase | None:
        """The baseline of a case, or None when the baseline has no such case."""
        return self.cases.get((eval_set_id, eval_id))


def _from_results(files: Sequence[Path], source: Path) -> Baseline:
    baseline = Baseline(source)
    for file in files:
        try:
            result = EvalSetResult.model_validate_json(file.read_bytes())
        except ValueError as exc:
            raise InputError(
                f"not an eval set result ({str(exc).splitlines()[0]})",
                path=file,
                fix="Point --baseline at a folder `rec replay --results` wrote, or at a recording",
            ) from None
        for case in result.eval_case_results:
            baseline.cases[(result.eval_set_id, case.eval_id)] = BaselineCase(
                scores={m.metric_name: m.score for m in case.overall_eval_metric_results},
                usage=case.usage,
                passed=case.final_eval_status is not EvalStatus.FAILED,
            )
    return baseline


def _texts(invocations: Sequence[Invocation]) -> list[str]:
    return [
        "\n".join(p.text for p in inv.user_content.parts or [] if p.text) for inv in invocations
    ]


def _from_recordings(folder: Path, prices: PriceTable) -> Baseline:
    from cassettes._cassette import load_cassette
    from cassettes._evalset import load_evalset
    from cassettes._extraction import extract_conversations
    from replayer._replay_target import find_evalsets, recording_for

    baseline = Baseline(folder)
    for path in find_evalsets([folder]):
        evalset = load_evalset(path)
        conversations = [
            c
            for cassette in recording_for(path)
            for c in extract_conversations(load_cassette(cassette).exchanges)
        ]
        for case in evalset.eval_cases:
            wanted = _texts(case.conversation or [])
            found = next(
                (c for c in conversations if wanted and _texts(c.invocations) == wanted), None
            )
            usage = case_usage(found.model_calls, found.invocations, prices) if found else None
            baseline.cases[(evalset.eval_set_id, case.eval_id)] = BaselineCase(None, usage)
    return baseline


def load_baseline(folder: Path, prices: PriceTable) -> Baseline:
    """The baseline in ``folder`` (see the module docstring).

    Raises:
        InputError: the folder does not exist, or holds neither results nor recordings.
    """
    if not folder.is_dir():
        raise InputError(
            "no such folder",
            path=folder,
            fix="Pass --baseline a folder `rec replay --results` wrote, or a recording folder",
        )
    results = sorted(folder.rglob("*.evalset_result.json"))
    if results:
        return _from_results(results, folder)
    return _from_recordings(folder, prices)
