"""The exceptions rec raises, chosen by who catches them.

```
RecError                      base: catch this to catch everything rec raises
├── InputError                a file, flag or config is wrong        (CLI exit status 2)
│   └── SecretFound           a credential-shaped value was about to be written
└── RunError                  something failed during a run          (CLI exit status 1)
    ├── ReplayMiss            no recording matches a request (also an AssertionError,
    │                         so pytest reports a failed test with the diff)
    └── UpstreamError         the real API could not be reached while recording
```

Every error carries its facts as fields (`path`, `where`, `problem`, `fix`) and renders
them as ``path:where: problem. fix``. Values are redacted before they reach a message.
Errors define ``__reduce__`` so they cross pytest-xdist workers intact.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "InputError",
    "RecError",
    "ReplayMiss",
    "RunError",
    "SecretFound",
    "UpstreamError",
    "did_you_mean",
    "one_line",
]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return ``' Did you mean "x"?'`` for the closest choice, or ``''``."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not matches:
        lowered = {c.lower().replace("_", "").replace("-", ""): c for c in choices}
        key = word.lower().replace("_", "").replace("-", "")
        if key in lowered:
            matches = [lowered[key]]
    return f' Did you mean "{matches[0]}"?' if matches else ""


def one_line(text: str) -> str:
    """``text`` with line breaks and other control characters escaped (``\\n``), so that a
    message quoting a value from a file stays the one line rec promises."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in text)


class RecError(Exception):
    """Base class of every error rec raises.

    Args:
        problem: what is wrong, in one sentence without a trailing period.
        path: the file (or flag) concerned, if any.
        where: the place inside it: a line number or a JSON path such as
            ``eval_cases[2].conversation[0]``.
        fix: what the user should do about it.
    """

    def __init__(
        self,
        problem: str,
        *,
        path: str | Path | None = None,
        where: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.problem = problem
        self.path = str(path) if path is not None else None
        self.where = where
        self.fix = fix
        super().__init__(str(self))

    def __str__(self) -> str:
        location = ":".join(part for part in (self.path, self.where) if part)
        text = f"{location}: {self.problem}" if location else self.problem
        if self.fix:
            text = f"{text.rstrip('.')}. {self.fix}"
        return one_line(text)

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild,
            (type(self), self.problem, self.path, self.where, self.fix, self._extra()),
        )

    def _extra(self) -> dict[str, Any]:
        return {}


def _rebuild(
    cls: type[RecError],
    problem: str,
    path: str | None,
    where: str | None,
    fix: str | None,
    extra: dict[str, Any],
) -> RecError:
    err = cls.__new__(cls)
    for key, value in extra.items():  # before __init__: __str__ may read them
        setattr(err, key, value)
    RecError.__init__(err, problem, path=path, where=where, fix=fix)
    return err


class InputError(RecError):
    """A file, flag or configuration given to rec is wrong (CLI exit status 2)."""


class SecretFound(InputError):
    """A value that looks like a credential was about to be written to disk.

    Nothing was written. ``where`` names the place of the value; the value itself
    never appears in the message.
    """


class RunError(RecError):
    """Something failed while rec was running (CLI exit status 1)."""


class ReplayMiss(RunError, AssertionError):
    """No recording matches a request made during replay.

    The request was not forwarded anywhere. ``diff`` holds the explanation lines
    (nearest recorded request and what differs), already redacted; ``ignore`` the option
    that would leave the first differing field out of matching, in the words of the front
    end the miss happened in (``--ignore systemInstruction`` under rec's CLI), if any.
    """

    def __init__(
        self,
        problem: str,
        *,
        path: str | Path | None = None,
        where: str | None = None,
        fix: str | None = None,
        diff: list[str] | None = None,
        ignore: str | None = None,
    ) -> None:
        self.diff = list(diff or [])
        self.ignore = ignore
        super().__init__(problem, path=path, where=where, fix=fix)

    def __str__(self) -> str:
        head = super().__str__()
        if not self.diff:
            return head
        return head + "\n" + "\n".join(f"  {line}" for line in self.diff)

    def _extra(self) -> dict[str, Any]:
        return {"diff": self.diff, "ignore": self.ignore}


class UpstreamError(RunError):
    """The upstream model API could not be reached or broke off while recording."""
