"""A source: a LazyFrame of the run's partition of an asset, and the resources it reads."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dagster as dg
import polars as pl

from ..errors import SourceReadError
from ._loading import read_errors

if TYPE_CHECKING:  # sqlglot is imported only when a pushdown runs
    from .._engine.sql.backend import SQLTable


@dataclass(frozen=True)
class StoredTable:
    """What a source opened: the rows as a LazyFrame, and, for a database that evaluates
    the rules itself (pushdown), the same rows as SQL (None: polars evaluates them)."""

    frame: pl.LazyFrame
    pushdown: SQLTable | None = None


class Source(ABC):
    """Where the sidecar reads an asset's stored table from.

    A source has one job: hand the checks a `pl.LazyFrame` over the run's partition of the
    asset, open while the rules are evaluated, and declare the resource keys it reads through
    (the check requires them, so the run's resources and their config reach it).
    """

    @property
    def required_resource_keys(self) -> frozenset[str]:
        """The resource keys the check must require for this source to read."""
        return frozenset()

    @abstractmethod
    def describe(self) -> str:
        """What the source reads, for messages: `DuckDB table 'main.orders' via 'duckdb'`."""

    @abstractmethod
    def open(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> AbstractContextManager[pl.LazyFrame]:
        """The run's partition of `asset_key`, as a LazyFrame valid inside the context."""

    @contextmanager
    def open_table(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> Iterator[StoredTable]:
        """`open`, and where a database source can evaluate the rules in SQL, that too."""
        with self.open(context, asset_key) as frame:
            yield StoredTable(frame)


@contextmanager
def reading(asset_key: dg.AssetKey, source: Source) -> Iterator[None]:
    """Re-raise a read failure (a missing or truncated file, a refused query) as
    `SourceReadError` naming the asset and the source, not only the step."""
    try:
        yield
    except read_errors() as error:
        raise SourceReadError(
            f"Could not read asset {asset_key.to_user_string()} from {source.describe()}: "
            f"{type(error).__name__}: {error}. Check that the asset was materialized (for this "
            "partition) and that the stored table is complete."
        ) from error


SourceLike = Source | Callable[..., Any]


#: The longest SQL text the step log shows of one query.
_LOGGED_SQL = 2000


def logged(sql: str) -> str:
    """`sql` as the step log shows it: bounded to `_LOGGED_SQL` characters."""
    return sql if len(sql) <= _LOGGED_SQL else sql[:_LOGGED_SQL] + "…"
