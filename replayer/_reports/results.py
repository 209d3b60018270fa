"""``--results DIR``: EvalSetResult JSON files written like ADK's eval history."""

from __future__ import annotations

from pathlib import Path

from cassettes._eval_result import EvalSetResult, dump_eval_set_result, save_eval_set_result
from replayer._reports.masking import masked_result

__all__ = ["result_json", "write_results"]


def result_json(result: EvalSetResult) -> str:
    """The EvalSetResult JSON to print (``rec score --json``), every string masked as in
    the files :func:`write_results` writes."""
    return dump_eval_set_result(masked_result(result))


def write_results(results: list[EvalSetResult], directory: str | Path) -> list[Path]:
    """Write ``<dir>/<eval_set_result_name>.evalset_result.json`` per result (ADK's naming),
    every string masked."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    return [save_eval_set_result(masked_result(result), folder) for result in results]
