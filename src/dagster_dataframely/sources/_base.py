"""A source: a LazyFrame of the run's partition of an asset, and the resources it reads."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dagster as dg
import polars as pl

from ..errors import RuleEvaluationError, SourceConnectionError, SourceReadError
from ._loading import read_errors

if TYPE_CHECKING:  # sqlglot is imported only when a pushdown runs
    from .._engine.sql.backend import SQLTable


@dataclass(frozen=True)
class StoredTable:
    """What a source opened: the rows as a LazyFrame, and, for a database that evaluates
    the rules itself (pushdown), the same rows as SQL (None: polars evaluates them)."""

    frame: pl.LazyFrame
    pushdown: SQLTable | None = None
    #: The same rows in their database where polars evaluates the rules (a DuckDB source
    #: without pushdown): failing rows are kept there all the same.
    held: SQLTable | None = None

    @property
    def database(self) -> SQLTable | None:
        """The rows in their database, whichever engine evaluates the rules (None: none)."""
        return self.pushdown if self.pushdown is not None else self.held


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

    def for_asset(self, asset_key: dg.AssetKey, metadata: Mapping[str, Any]) -> Source:
        """This source bound to `asset_key`, whose definition metadata is `metadata`: a
        database source without `table=` names the asset's table (its `dagster/table_name`,
        else its key), so that messages say which table. A name that is not one raises
        `InvalidSourceError` here, when the Definitions load."""
        return self

    def for_checks(self, *, writes: bool) -> Source:
        """This source as the checks open it: `writes` when they keep failing rows beside the
        table. A DuckDB source opens its file read-only where nothing is written."""
        return self

    def concurrent(self, context: dg.AssetCheckExecutionContext) -> bool:
        """Whether the checks of several assets may read through this source at once, from
        threads of one step: true where each read opens a connection of its own."""
        return True

    def held_open(self, context: dg.AssetCheckExecutionContext) -> AbstractContextManager[None]:
        """What a step that checks many assets through this source's resources holds open
        while it runs, so that each asset's read does not open it again (nothing, here). It
        never fails the step: what it cannot open, each asset's read opens, or fails at, on
        its own."""
        return nullcontext()

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


def for_run(
    source: Source, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
) -> Source:
    """`source` bound to `asset_key` as the run's job defines it (see `Source.for_asset`)."""
    layer = context.job_def.asset_layer
    metadata = layer.get(asset_key).metadata if layer.has(asset_key) else {}
    return source.for_asset(asset_key, metadata)


@contextmanager
def reading(asset_key: dg.AssetKey, source: Source, *, member: str | None = None) -> Iterator[None]:
    """Re-raise a read failure (a missing or truncated file, a refused query) as
    `SourceReadError` naming the asset and the source, not only the step; a collection's
    `member`, when given, is named in every source error."""
    of = "" if member is None else f" (collection member {member!r})"
    try:
        yield
    except SOURCE_ERRORS as error:
        if member is None:
            raise
        raise type(error)(f"Collection member {member!r}: {error}") from error
    except read_errors() as error:
        raise SourceReadError(
            f"Could not read asset {asset_key.to_user_string()} from {source.describe()}{of}: "
            f"{type(error).__name__}: {error}. Check that the asset was materialized (for this "
            "partition) and that the stored table is complete."
        ) from error


SourceLike = Source | Callable[..., Any]
#: What a source raises for a table it could not reach, read or evaluate rules on.
SOURCE_ERRORS = (SourceReadError, SourceConnectionError, RuleEvaluationError)


#: The longest SQL text the step log shows of one query.
_LOGGED_SQL = 2000


def logged(sql: str) -> str:
    """`sql` as the step log shows it: bounded to `_LOGGED_SQL` characters."""
    return sql if len(sql) <= _LOGGED_SQL else sql[:_LOGGED_SQL] + "…"
