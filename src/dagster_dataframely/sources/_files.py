"""`ParquetSource` and `DeltaSource`: a path, glob or object-store URL scanned lazily by polars."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import dagster as dg
import polars as pl

from .._engine.display import shorten
from ..errors import SourceReadError
from ._base import Source
from ._delta import scan_delta_batches
from ._partitions import Partition, require_expr, run_partition


@dataclass(frozen=True)
class _ScannedSource(Source):
    path: str
    partition_expr: str | None = None
    storage_options: Mapping[str, str] = field(default_factory=dict)

    kind = ""

    def describe(self) -> str:
        return f"{self.kind} '{self.path}'"

    def scan(self, partition: Partition | None = None) -> pl.LazyFrame:
        """The table; `partition`, the run's, may prune what is read (`open` filters it)."""
        raise NotImplementedError

    @contextmanager
    def open(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> Iterator[pl.LazyFrame]:
        partition = run_partition(context)
        require_expr(partition, self.partition_expr, self.describe())
        frame = self.scan(partition)
        if partition is not None and self.partition_expr is not None:
            dtype = self._partition_dtype(frame.collect_schema(), asset_key)
            frame = frame.filter(partition.polars(self.partition_expr, dtype))
        context.log.info(
            f"Reading asset {asset_key.to_user_string()} from {self.describe()}, scanned lazily."
        )
        yield frame

    def _partition_dtype(self, schema: pl.Schema, asset_key: dg.AssetKey) -> pl.DataType:
        """The dtype of the `partition_expr` column; `SourceReadError` when the table lacks it."""
        column = str(self.partition_expr)
        if column not in schema:
            raise SourceReadError(
                f"Could not read asset {asset_key.to_user_string()} from {self.describe()}: its "
                f"partition_expr {column!r} is not a column of the table, whose columns are "
                f"{shorten(', '.join(schema), 500)}. Give the column that holds the partition "
                "(its name, as the table spells it)."
            )
        return schema[column]

    def _options(self) -> dict[str, Any] | None:
        return dict(self.storage_options) or None


@dataclass(frozen=True)
class ParquetSource(_ScannedSource):
    """Parquet files at `path` (a file, a directory, a glob, or an `s3://`/`gs://`/`az://`
    URL with `storage_options`), read with `pl.scan_parquet`. `partition_expr` is the column
    holding the run's partition."""

    kind = "parquet"

    def scan(self, partition: Partition | None = None) -> pl.LazyFrame:
        return pl.scan_parquet(self.path, storage_options=self._options())


@dataclass(frozen=True)
class DeltaSource(_ScannedSource):
    """The Delta table at `path` (local or object storage with `storage_options`), read with
    deltalake's own engine in batches of 32,768 rows (needs the `deltalake` package), so memory
    does not grow with the table. `partition_expr` is the column holding the run's partition;
    a Delta partition column prunes files."""

    kind = "Delta table"

    def scan(self, partition: Partition | None = None) -> pl.LazyFrame:
        column = self.partition_expr
        return scan_delta_batches(
            self.path,
            self._options(),
            where=None
            if partition is None or column is None
            # No pruning for a column the table lacks: `open` says so.
            else lambda schema: (
                partition.datafusion(column, schema[column]) if column in schema else None
            ),
        )
