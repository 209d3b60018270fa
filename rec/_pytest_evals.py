"""Eval sets as pytest items: one item per eval case, replayed as ``rec replay`` replays it.

The pytest plugin (:mod:`rec.pytest_plugin`) hands a walked ``*.evalset.json`` to
:class:`EvalSetFile` when an agent is configured for it; each of its eval cases becomes an
:class:`EvalCaseItem` with the node id ``evals/x.evalset.json::case_id``. An item replays
its one case (the cassette beside the eval set, ``test_config.json`` beside it) with the
options ``rec replay`` has, given as ``--rec-NAME`` (:mod:`rec._replay_flags`), so that
``-k``, ``--lf``, ``-n`` (pytest-xdist), pytest-split, ``--junitxml`` and ``--rec-html``
work per case. A failure reads as ``rec replay`` prints it: the reason first (a miss with
its diff), then per failing invocation expected against actual.

Loaded only when a run collects eval sets: it imports rec's packages.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cassettes._atomic_write import write_atomic
from cassettes._errors import InputError, RecError
from cassettes._evalset import load_evalset
from cassettes._file_names import recording_name
from cassettes._folders import locked
from cassettes._record_mode import RecordMode
from replayer._gate import Gates, gate_replays
from replayer._quiet_misses import quiet_adk_misses
from replayer._replay_run import replay_evalsets
from replayer._replay_target import EvalSetReplay, ReplayOptions, recording_for
from replayer._reports.console import render_failures
from replayer._reports.set_report import report_from_replay

__all__ = ["EvalCaseFailed", "EvalCaseItem", "EvalSetFile", "RunSettings"]


@dataclass(frozen=True)
class RunSettings:
    """How the collected eval cases run: the agent and the ``--rec-NAME`` options."""

    agent: str
    options: ReplayOptions
    html_parts: Path | None = None
    """Where each case leaves its report for ``--rec-html`` (None: no report)."""
    gates: Gates = Gates()
    """``--rec-budget`` (each case is held to its limits; the suite's are not read) and
    ``--rec-baseline`` (what the growth limits are measured from)."""


class EvalCaseFailed(Exception):
    """An eval case failed: ``str()`` is what pytest shows (no traceback)."""


class EvalSetFile(pytest.File):
    """A ``*.evalset.json`` walked by pytest: its eval cases are the items."""

    settings: RunSettings

    @classmethod
    def for_file(
        cls, parent: pytest.Collector, file_path: Path, settings: RunSettings
    ) -> EvalSetFile:
        node = cls.from_parent(parent, path=file_path)
        node.settings = settings
        return node

    def collect(self) -> Iterable[EvalCaseItem]:
        try:
            evalset = load_evalset(self.path)
        except InputError as exc:
            raise self.CollectError(str(exc)) from None
        if not evalset.eval_cases and not self.settings.options.allow_empty:
            raise self.CollectError(
                f"{self.path}:eval_cases: this eval set holds no eval cases, so it would test "
                "nothing. Add a case (`rec start` records one), or pass --rec-allow-empty if "
                "it is meant to be empty"
            )
        # Every case, a user simulator's (conversation_scenario) too: rec replay runs it.
        for case in evalset.eval_cases:
            yield EvalCaseItem.from_parent(self, name=case.eval_id, eval_id=case.eval_id)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, self.CollectError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class EvalCaseItem(pytest.Item):
    """One eval case of an eval set, replayed and scored (see the module docs)."""

    def __init__(self, *, eval_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.eval_id = eval_id

    @property
    def settings(self) -> RunSettings:
        parent = self.parent
        assert isinstance(parent, EvalSetFile)
        return parent.settings

    def runtest(self) -> None:
        settings = self.settings
        options = settings.options
        if options.mode is RecordMode.RECORD:
            raise EvalCaseFailed(
                f"{self.path}: --rec-mode record writes an eval set's recording anew, and "
                "this item runs one case of it. Record the eval set with `rec replay AGENT "
                f"{self.path} --mode record`, or record what is missing with --rec-mode auto"
            )
        run = dataclasses.replace(options, cases=(self.eval_id,), workers=1)
        try:
            with _one_writer(self.path, run), quiet_adk_misses():
                [replayed] = replay_evalsets(settings.agent, [self.path], run)
        except RecError as exc:
            raise EvalCaseFailed(str(exc)) from None
        if settings.html_parts is not None:
            _keep_report(settings.html_parts, replayed, self.session.items.index(self))
        if settings.gates.given:
            gate_replays([replayed], settings.gates)
        result = replayed.result
        if not result.passed:
            width = self.config.get_terminal_writer().fullwidth
            raise EvalCaseFailed(render_failures(result, width=width).rstrip("\n"))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, EvalCaseFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"eval case {self.eval_id}"


@contextmanager
def _one_writer(evalset: Path, options: ReplayOptions) -> Iterator[None]:
    """In auto mode, one process at a time adds to a recording (``pytest -n`` workers)."""
    found = recording_for(evalset, options.recording, create=True)
    if options.mode is not RecordMode.AUTO or len(found) != 1:
        yield  # replay only reads; auto mode with several recordings is refused by the run
        return
    cassette = found[0]
    name = recording_name(cassette)
    with locked(cassette.with_name(name + ".record"), lock_dir=cassette.parent / ".rec"):
        yield


def _keep_report(folder: Path, replayed: EvalSetReplay, position: int) -> None:
    """Leave the case's report where the plugin's ``--rec-html`` reads it (one file each:
    xdist workers write side by side, the controller renders them in collection order)."""
    name = f"case-{position:06d}-{uuid.uuid4().hex}-{os.getpid()}.json"
    write_atomic(folder / name, report_from_replay(replayed).model_dump_json())
