"""Rules whose verdict is one value for the whole table, which an empty table can fail.

Dataframely counts failing rows, so an empty table passes every rule, `pl.len() > 0` too.
Pandera fails a frame whose check returns one `False`, rows or none. A translated Pandera
schema names its checks' rules here; the evaluator then also asks them of an empty table.
"""

from __future__ import annotations

from typing import Any

_ATTR = "__dagster_dataframely_judges_table__"


def judging_table(schema: Any, rules: frozenset[str]) -> None:
    """Declare `rules` of the schema class `schema` verdicts on the whole table."""
    setattr(schema, _ATTR, rules)


def judges_table(schema: Any) -> frozenset[str]:
    """The rules of `schema` declared verdicts on the whole table (none for Dataframely's)."""
    return frozenset(getattr(schema, _ATTR, frozenset()))
