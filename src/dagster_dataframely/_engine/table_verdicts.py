"""Rules whose verdict is one value for the whole table, which an empty table can fail.

Dataframely counts failing rows, so an empty table passes every rule, `pl.len() > 0` too.
Pandera fails a frame whose check returns one `False`, rows or none. A translated Pandera
schema names its checks' rules here; the evaluator then also asks them of an empty table.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_ATTR = "__dagster_dataframely_judges_table__"
#: How many evaluations are asking such rules of an empty table right now (process-wide: the
#: rules run in polars' threads, which a context variable would not reach).
_asking = 0


def judging_table(schema: Any, rules: frozenset[str]) -> None:
    """Declare `rules` of the schema class `schema` verdicts on the whole table."""
    setattr(schema, _ATTR, rules)


def judges_table(schema: Any) -> frozenset[str]:
    """The rules of `schema` declared verdicts on the whole table (none for Dataframely's)."""
    return frozenset(getattr(schema, _ATTR, frozenset()))


@contextmanager
def asking_empty_table() -> Iterator[None]:
    """While open, a table verdict on an empty table is one value (`verdict_on_empty`).
    Elsewhere, such as in `Schema.filter`, it is no value: polars before 1.37 refuses a
    one-row column beside an empty frame."""
    global _asking
    _asking += 1
    try:
        yield
    finally:
        _asking -= 1


def verdict_on_empty() -> bool:
    """Whether an evaluation is asking the table verdicts of an empty table now."""
    return _asking > 0
