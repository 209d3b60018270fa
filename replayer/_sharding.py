"""Split a suite across CI jobs (``rec replay --shard I/N``) and merge the jobs' results.

A case belongs to shard ``1 + sha256("<eval_set_id>/<eval_id>") mod N``: it depends on
nothing but the case's own ids, so every job computes the same split without talking to
the others, and adding or removing cases never moves another case to another shard.
Each job writes its EvalSetResults (``--results DIR``); :func:`merge_results` puts the
shards of each eval set back together for one report, one JUnit file and one
EvalSetResult per eval set (``rec merge``).

Example (a GitHub Actions matrix, see the README)::

    rec replay agents/travel evals/ --shard ${{ matrix.shard }}/4 --results results/
    rec merge results-*/ --junit junit.xml --results merged/
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cassettes._errors import InputError
from cassettes._eval_result import EvalSetResult, MultiRunCaseSummary
from cassettes._json_file import read_file

__all__ = ["Shard", "load_results", "merge_results"]


@dataclass(frozen=True)
class Shard:
    """One of ``total`` shards (``index`` counts from 1, as CI matrices do)."""

    index: int
    total: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` -> ``Shard(2, 4)``.

        Raises:
            InputError: not ``I/N`` with 1 <= I <= N.
        """
        index, slash, total = text.partition("/")
        if slash and index.strip().isdigit() and total.strip().isdigit():
            shard = cls(int(index), int(total))
            if 1 <= shard.index <= shard.total:
                return shard
        raise InputError(
            f"{text!r} is not a shard",
            path="--shard",
            fix="Give I/N with 1 <= I <= N, e.g. --shard 1/4 in the first of four CI jobs",
        )

    def contains(self, eval_set_id: str, eval_id: str) -> bool:
        """Whether this shard runs the case ``eval_id`` of eval set ``eval_set_id``."""
        digest = hashlib.sha256(f"{eval_set_id}/{eval_id}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.total == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


def load_results(paths: Sequence[str | Path]) -> list[EvalSetResult]:
    """The EvalSetResults in ``paths`` (``*.evalset_result.json`` files, or folders of them).

    Raises:
        InputError: a path is missing, holds no result, or a file is not an EvalSetResult.
    """
    from pydantic import ValidationError

    files: list[Path] = []
    for given in map(Path, paths):
        if given.is_dir():
            found = sorted(given.rglob("*.evalset_result.json"))
            if not found:
                raise InputError(
                    "no *.evalset_result.json in this folder",
                    path=given,
                    fix="Pass the folders the shards wrote with `rec replay --results DIR`",
                )
            files.extend(found)
        else:
            files.append(given)
    results = []
    for file in files:
        data = read_file(file, what="EvalSetResult")
        try:
            results.append(EvalSetResult.model_validate_json(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise InputError(
                f"not an EvalSetResult ({first['msg']})",
                path=file,
                where=".".join(str(part) for part in first["loc"]) or "(top level)",
                fix="Pass the files `rec replay --results DIR` wrote",
            ) from None
    return results


def _copied(summaries: list[MultiRunCaseSummary] | None) -> list[MultiRunCaseSummary] | None:
    return None if summaries is None else list(summaries)


def merge_results(results: Sequence[EvalSetResult]) -> list[EvalSetResult]:
    """One EvalSetResult per eval set: the shards' cases together, in the order given.

    Raises:
        InputError: two shards both ran a case (the same case in two results), which
            means the shards overlap (different ``N``, or a result passed twice).
    """
    merged: dict[str, EvalSetResult] = {}
    for result in results:
        base = merged.get(result.eval_set_id)
        if base is None:
            merged[result.eval_set_id] = result.model_copy(
                update={
                    "eval_case_results": list(result.eval_case_results),
                    "multi_run_case_summaries": _copied(result.multi_run_case_summaries),
                }
            )
            continue
        seen = {case.eval_id for case in base.eval_case_results}
        for case in result.eval_case_results:
            if case.eval_id in seen:
                raise InputError(
                    f"case {case.eval_id!r} of eval set {result.eval_set_id!r} is in two results",
                    path=result.eval_set_result_name or result.eval_set_result_id,
                    fix="Merge the results of one sharded run (the same --shard I/N total), "
                    "each once",
                )
            base.eval_case_results.append(case)
        if result.multi_run_case_summaries is not None:
            base.multi_run_case_summaries = [
                *(base.multi_run_case_summaries or []),
                *result.multi_run_case_summaries,
            ]
        base.creation_timestamp = max(base.creation_timestamp, result.creation_timestamp)
    return list(merged.values())
