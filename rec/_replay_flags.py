"""The ``rec replay`` options that pytest has twins of, declared once for both front ends.

``rec replay --NAME`` (:func:`rec._options.replay_flag`) and pytest's ``--rec-NAME`` with
its ini setting ``rec_NAME`` (:mod:`rec.pytest_plugin`) are built from the same
:class:`ReplayFlag`: one help text, one set of choices, the value checked where the run's
options are built (:class:`replayer._replay_run.ReplayOptions`). ``{opt}`` in a help text
stands for the front end's option prefix (``--`` or ``--rec-``).

This module imports nothing but the standard library: the pytest plugin reads it at the
start of every pytest run.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MODES", "REPLAY_FLAGS", "STREAMING", "ReplayFlag", "flag"]

MODES = ("replay", "record", "auto", "live")
"""``rec.RecordMode``'s values, spelt out so that declaring an option imports nothing (a
test checks they are the enum's)."""

STREAMING = ("sse", "none")
"""``replayer.STREAMING_CHOICES``, spelt out for the same reason."""


@dataclass(frozen=True)
class ReplayFlag:
    """One option of ``rec replay`` and its pytest twin."""

    name: str
    """``NAME`` in ``--NAME`` / ``--rec-NAME`` / ``rec_NAME``."""
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    switch: bool = False
    """A flag without a value."""
    multiple: bool = False
    """Repeatable (a list in the ini file, one a line)."""
    number: bool = False
    """A whole number, at least 1."""
    path: bool = False
    """A file or folder path (relative to the ini file's folder when set in it)."""
    file_only: bool = False
    """A path that must be a file."""
    url: bool = False
    """An ``http(s)://HOST[:PORT]`` base URL, checked when the flags are parsed."""

    def text(self, prefix: str) -> str:
        """The help text for a front end whose options start with ``prefix``."""
        return self.help.format(opt=prefix)


REPLAY_FLAGS = (
    ReplayFlag(
        "mode",
        "replay (default: fail closed), record (forward everything, write the recording "
        "anew), auto (replay hits, record misses) or live (the real model, nothing recorded).",
        metavar="MODE",
        choices=MODES,
    ),
    ReplayFlag(
        "recording",
        "Cassette or folder to replay (default: <name>.cassette.json beside each eval set).",
        metavar="PATH",
        path=True,
    ),
    ReplayFlag(
        "upstream",
        "Gemini API base URL for {opt}mode record/auto (and {opt}mode live with a program) "
        "(default: Google's Gemini API).",
        metavar="URL",
        url=True,
    ),
    ReplayFlag(
        "live-tools",
        "Run the real tools instead of returning their recorded responses.",
        switch=True,
    ),
    ReplayFlag(
        "in-process",
        "Answer an ADK agent's google-genai models in-process (rec supplies their HTTP "
        "transport: no loopback round trip), from the same recordings, failing closed the "
        "same way. Replay mode only.",
        switch=True,
    ),
    ReplayFlag(
        "config",
        "Eval config (default: test_config.json beside the eval set, else ADK's defaults).",
        metavar="FILE",
        path=True,
        file_only=True,
    ),
    ReplayFlag(
        "num-runs",
        "Run each case N times (N takes, each scored on its own); a replay runs at least "
        "every take its recording holds. Default: the eval config's "
        "multi_run_config.num_runs, else 1.",
        metavar="N",
        number=True,
    ),
    ReplayFlag(
        "prices",
        "A model price table (JSON) for the reports' cost (default: the list prices rec "
        "ships, with the date they were taken).",
        metavar="FILE",
        path=True,
        file_only=True,
    ),
    ReplayFlag(
        "budget",
        "Limits on each case's (and with rec replay the suite's) tokens, calls, latency, "
        "cost and scores (JSON, or YAML with PyYAML; docs/reference/budget.md). A breach "
        "fails the case.",
        metavar="FILE",
        path=True,
        file_only=True,
    ),
    ReplayFlag(
        "baseline",
        "Compare each case and turn with a baseline: a folder `rec replay --results` wrote, "
        "or a recording folder. Growth limits in {opt}budget are measured from it.",
        metavar="DIR",
        path=True,
    ),
    ReplayFlag(
        "agent-name",
        "Evaluate this sub-agent instead of the root agent.",
        metavar="NAME",
    ),
    ReplayFlag(
        "streaming",
        "Run ADK agents with streaming (sse, as adk web's streaming toggle) or without "
        "(none). Default: each case in the mode it was recorded in.",
        choices=STREAMING,
    ),
    ReplayFlag(
        "no-freeze-time",
        "Run on the real clock. Default: while a case replays, its clock (its own, "
        "even with --parallel) reads the recording's time.",
        switch=True,
    ),
    ReplayFlag(
        "live-clock",
        "Run on the real clock, ids and randomness. Default: what an ADK agent's code read "
        "of the clock, uuid4, random and secrets while recorded is served back in order, "
        "per case, and the rest of its clock reads the recording's time.",
        switch=True,
    ),
    ReplayFlag(
        "allow-not-evaluated",
        "A metric that cannot run counts for nothing (ADK's behaviour) instead of failing.",
        switch=True,
    ),
    ReplayFlag(
        "allow-empty",
        "A run of no eval case passes (an eval set with none, or a shard that none hashed "
        "into: a CI matrix with more shards than cases). Default: it fails.",
        switch=True,
    ),
    ReplayFlag(
        "ignore",
        "Ignore this request-body path when matching, e.g. systemInstruction or "
        "generationConfig.temperature (repeatable).",
        metavar="JSON_PATH",
        multiple=True,
    ),
)
"""Every ``rec replay`` option pytest has a twin of (``--rec-NAME``)."""


def flag(name: str) -> ReplayFlag:
    """The flag called ``name``."""
    return next(f for f in REPLAY_FLAGS if f.name == name)
