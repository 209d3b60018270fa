"""What ``rec start -- adk eval AGENT FILE... --config_file_path CFG`` evaluates: its scenarios.

``adk eval`` runs each ``conversation_scenario`` case with ADK's user simulator; rec's
capture plugin sees the sessions it produced, as conversations. For the recording's
EvalSet to replay the way it was run (the simulator asked again, from the recording), the
scenario cases are read from the eval set files on the command line and kept in place of
those sessions (:func:`cassettes._evalset_writer.keep_scenarios`); the eval config given
with ``--config_file_path`` becomes the recording's ``test_config.json`` when it has none.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cassettes._errors import InputError
from cassettes._evalset import EvalCase, load_evalset

__all__ = ["AdkEvalRun", "adk_eval_run"]

log = logging.getLogger(__name__)

_VALUED = {"--config_file_path", "--eval_storage_uri", "--log_level", "--app_name"}
"""``adk eval`` options that take a value (the rest are flags or ``--key=value``)."""


@dataclass(frozen=True)
class AdkEvalRun:
    """The eval set files and config of an ``adk eval`` command."""

    evalsets: list[Path] = field(default_factory=list)
    config: Path | None = None

    def config_text(self) -> str | None:
        """The eval config file's text (None: no config given, or it cannot be read)."""
        if self.config is None:
            return None
        try:
            return self.config.read_text(encoding="utf-8")
        except OSError as exc:
            log.warning("test_config.json is not copied from %s: %s", self.config, exc)
            return None

    def scenarios(self) -> list[EvalCase]:
        """The ``conversation_scenario`` cases of the eval sets, in file order.

        A file ``adk eval`` could not read either is skipped (its own error says why).
        """
        found: list[EvalCase] = []
        for path in self.evalsets:
            try:
                evalset = load_evalset(path)
            except InputError as exc:
                log.warning("the EvalSet keeps no scenario of %s: %s", path, exc)
                continue
            found.extend(c for c in evalset.eval_cases if c.conversation_scenario is not None)
        return found


def adk_eval_run(command: Sequence[str]) -> AdkEvalRun | None:
    """The eval sets and config of ``adk eval AGENT FILE[:ids]...`` (None: not that command)."""
    args = list(command)
    if len(args) < 3 or Path(args[0]).name != "adk" or args[1] != "eval":
        return None
    positional: list[str] = []
    config: Path | None = None
    rest = iter(args[2:])
    for arg in rest:
        if arg.startswith("--config_file_path="):
            config = Path(arg.split("=", 1)[1])
        elif arg == "--config_file_path":
            config = Path(next(rest, ""))
        elif arg in _VALUED:
            next(rest, None)
        elif not arg.startswith("-"):
            positional.append(arg)
    # The first positional is the agent; each eval set may carry ":id1,id2".
    files = [Path(p[: p.index(".json:") + 5] if ".json:" in p else p) for p in positional[1:]]
    return AdkEvalRun([f for f in files if f.suffix == ".json"], config)
