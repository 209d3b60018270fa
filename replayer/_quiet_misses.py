"""Keep the log records of an expected replay miss off pytest's report.

A model call that misses the recording gets a 404 from the replay server; ADK logs that
error at ERROR with its traceback before the run stops. Under pytest (the eval cases the
plugin collects, ``AgentEvaluator``) the case fails with the miss and its diff already,
so the captured log would only repeat it, at length. Other records are kept.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from cassettes._divergence import miss_id_in
from cassettes._errors import ReplayMiss

__all__ = ["quiet_adk_misses"]


class _NotAMiss(logging.Filter):
    """Drops the log records of a model call that failed with a replay miss (ADK logs the
    404 with its traceback): the case fails with the miss and its diff already."""

    def filter(self, record: logging.LogRecord) -> bool:
        errors = [record.exc_info[1]] if record.exc_info and record.exc_info[1] else []
        args = record.args if isinstance(record.args, tuple) else ()
        errors += [a for a in args if isinstance(a, BaseException)]
        return not any(_is_miss(error) for error in errors)


def _is_miss(error: BaseException) -> bool:
    """Whether ``error`` is, or was caused by, a replay miss (rec's own error, or the
    google-genai error whose envelope carries a miss id)."""
    seen: list[BaseException] = []
    cursor: BaseException | None = error
    while cursor is not None and not any(cursor is s for s in seen):
        seen.append(cursor)
        if isinstance(cursor, ReplayMiss) or miss_id_in(getattr(cursor, "details", None)):
            return True
        cursor = cursor.__cause__ or cursor.__context__
    return False


@contextmanager
def quiet_adk_misses() -> Iterator[None]:
    """Keep the log records of an expected replay miss out of pytest's captured log and
    live log (filters on the root logger's handlers, where pytest's are)."""
    handlers = list(logging.getLogger().handlers)
    quiet = _NotAMiss()
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(quiet)
