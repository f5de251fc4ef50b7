"""The SQL backend: a table's rules and a collection's filters on it, run in its database.

`SQLTable` holds the table and its queries; this puts it behind the engine's `Backend`
interface, beside the polars backend, so callers hand both the same resolved rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from ..catalogue import Rule
from ..evaluate import Evaluation
from ..read_dtypes import Cast
from .backend import SQLTable

if TYPE_CHECKING:  # a collection's filters only: imported when one is evaluated
    from .filters import MemberRows


@dataclass(frozen=True)
class SQLBackend:
    """The rules of `table` counted in its database (`SQLTable.evaluate`)."""

    table: SQLTable

    def evaluate(
        self,
        frame: pl.LazyFrame,
        rules: Sequence[Rule],
        *,
        max_failure_samples: int,
        identify: Sequence[str] = (),
        casts: Sequence[Cast] = (),
        maxima: Sequence[str] = (),
    ) -> Evaluation:
        """`SQLTable.evaluate`: each rule with an exact SQL form in the database, the others
        by polars on `frame` (the same rows, projected into SQL)."""
        return self.table.evaluate(
            frame,
            rules,
            max_failure_samples=max_failure_samples,
            identify=identify,
            casts=casts,
            maxima=maxima,
        )

    def filter_rows(
        self, rules: Sequence[Rule], failed: Mapping[str, int], dtypes: Mapping[str, pl.DataType]
    ) -> MemberRows | None:
        """The member's rows split by its `rules` that `failed` a row (`member_rows`); None
        where the filters run in polars: a table of an unknown database (no filter may join
        it), or a failed rule without an exact SQL form."""
        if self.table.database is None:
            return None
        from .filters import member_rows

        return member_rows(self.table, rules, failed, dtypes)
