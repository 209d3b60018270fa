"""Recorded figures and takes in words, for every report (console, JUnit, HTML).

One place spells a figure: ``1.2 s``, ``$0.000123``, ``cost unknown (model-x)``, so the
console, the JUnit properties and the HTML report read the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cassettes._eval_result import CaseTakes, Figures

__all__ = [
    "cost_text",
    "figure_properties",
    "figures_table",
    "seconds_text",
    "suite_takes_line",
    "takes_line",
]


def seconds_text(value: float | None) -> str:
    """Seconds to one decimal below a minute (``1.2 s``), ``-`` for none."""
    if value is None:
        return "-"
    return f"{value:.1f} s" if value >= 0.1 or value == 0 else f"{value * 1000:.0f} ms"


def cost_text(figures: Figures) -> str:
    """``$0.000123``, or ``cost unknown (model)`` when a model has no price."""
    if figures.cost_usd is None:
        models = ", ".join(figures.unpriced) or "no price"
        return f"cost unknown ({models})"
    return f"${figures.cost_usd:.6f}"


_COLUMNS = (
    ("turn", 5),
    ("calls", 6),
    ("tools", 6),
    ("prompt", 8),
    ("cand", 7),
    ("thought", 8),
    ("cached", 7),
    ("1st chunk", 10),
    ("latency", 8),
    ("cost", 11),
)
"""The figures table's columns and their widths (right-aligned)."""


def _row(label: str, figures: Figures) -> str:
    cost = "unknown" if figures.cost_usd is None else f"${figures.cost_usd:.6f}"
    cells = (
        label,
        str(figures.model_calls),
        str(figures.tool_calls),
        str(figures.prompt_tokens),
        str(figures.candidates_tokens),
        str(figures.thoughts_tokens),
        str(figures.cached_tokens),
        seconds_text(figures.first_chunk_seconds),
        seconds_text(figures.latency_seconds),
        cost,
    )
    return "".join(f"{cell:>{width}}" for cell, (_, width) in zip(cells, _COLUMNS, strict=True))


def figures_table(total: Figures, turns: Sequence[Figures] = ()) -> list[str]:
    """The recorded figures as a table: a row per turn (when several), then the total;
    a line naming the models without a price when the cost is unknown."""
    lines = ["".join(f"{name:>{width}}" for name, width in _COLUMNS)]
    if len(turns) > 1:
        lines.extend(_row(str(index), turn) for index, turn in enumerate(turns, 1))
    lines.append(_row("all", total))
    if total.cost_usd is None:
        lines.append(f"{cost_text(total)}: give its price with --prices FILE")
    if total.no_usage:
        lines.append(f"{total.no_usage} model call(s) recorded without usage: their tokens count 0")
    return lines


def takes_line(takes: CaseTakes) -> str:
    """``5 takes: 3 passed, pass@5 1.00, pass^5 0.00, flaky (takes 2, 4 failed)``."""
    failed = [t for t in range(1, takes.takes + 1) if t not in takes.passed]
    which = f" (take{'s' if len(failed) > 1 else ''} {', '.join(map(str, failed))} failed)"
    return (
        f"{takes.takes} takes: {len(takes.passed)} passed, pass@{takes.k} "
        f"{takes.pass_at_k:.2f}, pass^{takes.k} {takes.pass_hat_k:.2f}, {takes.verdict}"
        f"{which if failed else ''}; rule: {takes.rule}"
    )


def suite_takes_line(every: Sequence[CaseTakes]) -> str:
    """Means over the cases with takes, and how many are stable, flaky and failing."""
    count = len(every)
    mean_at = sum(t.pass_at_k for t in every) / count
    mean_hat = sum(t.pass_hat_k for t in every) / count
    kinds = {v: sum(t.verdict == v for t in every) for v in ("stable", "flaky", "failing")}
    return (
        f"takes: mean pass@k {mean_at:.2f}, mean pass^k {mean_hat:.2f}; "
        f"{kinds['stable']} stable, {kinds['flaky']} flaky, {kinds['failing']} failing"
    )


def figure_properties(figures: Figures) -> list[tuple[str, str]]:
    """The figures as ``(name, value)`` pairs (JUnit properties), names prefixed ``rec.``."""
    pairs = [
        ("rec.prompt_tokens", str(figures.prompt_tokens)),
        ("rec.candidates_tokens", str(figures.candidates_tokens)),
        ("rec.thoughts_tokens", str(figures.thoughts_tokens)),
        ("rec.cached_tokens", str(figures.cached_tokens)),
        ("rec.model_calls", str(figures.model_calls)),
        ("rec.tool_calls", str(figures.tool_calls)),
        (
            "rec.first_chunk_seconds",
            "none" if figures.first_chunk_seconds is None else f"{figures.first_chunk_seconds:.3f}",
        ),
        ("rec.latency_seconds", f"{figures.latency_seconds:.3f}"),
        ("rec.cost_usd", "unknown" if figures.cost_usd is None else f"{figures.cost_usd:.6f}"),
    ]
    return pairs
