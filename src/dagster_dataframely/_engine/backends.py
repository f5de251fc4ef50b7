"""The evaluator's two backends behind one interface, and the one place that picks between them.

A `Backend` evaluates resolved catalogue rules (never a schema) on a table's rows and returns
one `Evaluation`: the polars backend (`evaluate`, Dataframely's own expressions, the
reference) or the SQL backend (`SQLTable`, the same rules compiled and run in the database,
each rule without an exact SQL form left to polars over only its columns; `SQLBackend`
beside the table). `backend_for`
makes the choice once, from the pushdown table a source gives (None: no database), for a
schema's rules and for a collection's filters alike (`Backend.filter_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import polars as pl

from .catalogue import Rule
from .evaluate import Evaluation, evaluate
from .read_dtypes import Cast

if TYPE_CHECKING:  # sqlglot is imported only when a pushdown runs
    from .sql.backend import SQLTable
    from .sql.filters import MemberRows


class Backend(Protocol):
    """Where a table's rules are evaluated."""

    def evaluate(
        self,
        frame: pl.LazyFrame,
        rules: Sequence[Rule],
        *,
        max_failure_samples: int,
        identify: Sequence[str] = (),
        casts: Sequence[Cast] = (),
    ) -> Evaluation:
        """`rules` evaluated on the table's rows: `frame` reads them (the cast frame, with
        `casts` and their rules among `rules`); failing rows identified by `identify` and
        up to `max_failure_samples` of each rule's sampled."""
        ...

    def filter_rows(
        self, rules: Sequence[Rule], failed: Mapping[str, int], dtypes: Mapping[str, pl.DataType]
    ) -> MemberRows | None:
        """A collection member's rows, split by its `rules` that `failed` a row, as a relation
        its database runs a collection's filters on; None where the filters run in polars."""
        ...


class PolarsBackend:
    """Dataframely's own rule expressions, streamed by polars: the reference backend."""

    def evaluate(
        self,
        frame: pl.LazyFrame,
        rules: Sequence[Rule],
        *,
        max_failure_samples: int,
        identify: Sequence[str] = (),
        casts: Sequence[Cast] = (),
    ) -> Evaluation:
        """`evaluate`; the casts are in `frame` already, their rules counted with the rest."""
        return evaluate(frame, rules, max_failure_samples=max_failure_samples, identify=identify)

    def filter_rows(
        self, rules: Sequence[Rule], failed: Mapping[str, int], dtypes: Mapping[str, pl.DataType]
    ) -> MemberRows | None:
        """None: a member read by polars has its filters evaluated by polars."""
        return None


POLARS_BACKEND = PolarsBackend()


def backend_for(table: SQLTable | None) -> Backend:
    """The backend that evaluates a table's rules and a collection's filters on it: its
    database's where a source pushes it down (`table`), else polars."""
    if table is None:
        return POLARS_BACKEND
    from .sql.pushdown import SQLBackend

    return SQLBackend(table)
