"""Model list prices, and the cost of a turn's recorded tokens.

rec ships a price table (``prices.json`` beside this module: Gemini, OpenAI and Anthropic
list prices per million tokens, with the date they were taken); ``--prices FILE`` gives
another one in the same shape. A model is found by its exact name, else by the longest
name in the table it extends with a version suffix (``gemini-2.0-flash-001``,
``gpt-4o-2024-08-06``, ``claude-sonnet-4-5-20250929``). A model found nowhere has no
price: its cost is unknown, never 0.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cassettes._errors import InputError

__all__ = ["PriceTable", "load_prices", "shipped_prices"]

_SHIPPED = Path(__file__).with_name("prices.json")
_VERSION = re.compile(r"^(\d{3}|\d{8}|\d{4}-\d{2}-\d{2}|latest|preview(-[\w-]+)?|exp(-[\w-]+)?)$")
"""What may follow a table name for a model to count as a version of it."""


class _Price(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: float = Field(ge=0)
    """US dollars per million prompt tokens (not read from a cache)."""
    cached: float | None = Field(default=None, ge=0)
    """Per million cached prompt tokens (default: the prompt price)."""
    output: float = Field(ge=0)
    """Per million answer and thought tokens."""


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    taken: str
    """The date the prices were read (YYYY-MM-DD)."""
    note: str = ""
    models: dict[str, _Price]


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name, and where they came from."""

    taken: str
    source: str
    prices: Mapping[str, _Price]

    def price_of(self, model: str) -> _Price | None:
        """The price of ``model`` (see the module docstring), or None."""
        name = model.rsplit("/", 1)[-1].lower()
        found = self.prices.get(name)
        if found is not None:
            return found
        best = ""
        for known in self.prices:
            rest = name[len(known) + 1 :]
            if name.startswith(known + "-") and _VERSION.match(rest) and len(known) > len(best):
                best = known
        return self.prices.get(best) if best else None

    def cost(self, model: str, tokens: Mapping[str, int]) -> float | None:
        """The list-price cost in US dollars of one call's tokens; None without a price."""
        price = self.price_of(model)
        if price is None:
            return None
        cached = min(tokens["cached"], tokens["prompt"])
        cached_price = price.prompt if price.cached is None else price.cached
        dollars = (
            (tokens["prompt"] - cached) * price.prompt
            + cached * cached_price
            + (tokens["candidates"] + tokens["thoughts"]) * price.output
        )
        return dollars / 1_000_000


def _parse(text: str, source: str) -> PriceTable:
    try:
        parsed = _PriceFile.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON ({exc.msg})",
            path=source,
            where=f"line {exc.lineno}",
            fix="Write the price table as JSON (see docs/reference/budget.md)",
        ) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(
            first["msg"],
            path=source,
            where=where,
            fix='Give {"taken": "YYYY-MM-DD", "models": {"NAME": {"prompt": P, "cached": C, '
            '"output": O}}} in US dollars per million tokens',
        ) from None
    models = {name.lower(): price for name, price in parsed.models.items()}
    return PriceTable(taken=parsed.taken, source=source, prices=models)


@functools.lru_cache(maxsize=1)
def shipped_prices() -> PriceTable:
    """The price table rec ships."""
    return _parse(_SHIPPED.read_text(encoding="utf-8"), "rec's price table")


def load_prices(path: str | Path | None) -> PriceTable:
    """The price table at ``path`` (``--prices``), or rec's own for None.

    Raises:
        InputError: the file cannot be read or is not a price table.
    """
    if path is None:
        return shipped_prices()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"cannot read the price table ({exc.strerror})",
            path=path,
            fix="Pass an existing JSON file to --prices",
        ) from None
    return _parse(text, str(path))
