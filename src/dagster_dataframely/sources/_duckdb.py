"""`DuckDBTableSource`: a DuckDB table read through a resource; its rules evaluated in DuckDB
(pushdown, see `_duckdb_pushdown`), or the table streamed in record batches.

Each query of the evaluator opens its own cursor on the resource's connection and reads the
table (projected, the partition filtered in SQL) as Arrow record batches, so memory stays
bounded as with a parquet scan and several queries may run at once (`pl.collect_all`); one
DuckDB relation would refuse a second pending query (`relation.pl(lazy=True)` does that).
The cursors hand strings over as Arrow string views, polars' own layout, so a batch becomes a
frame without copying its strings (a quarter of the read's CPU time otherwise).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl
from polars.io.plugins import register_io_source

from ..errors import InvalidSourceError
from ._base import Source, StoredTable
from ._partitions import require_expr, run_partition

#: The metadata key dagster-dbt and Dagster's database IO managers set to the table's name.
TABLE_NAME = "dagster/table_name"
_BATCH_ROWS = 100_000
#: Session settings of the source's own cursors (the resource's connection keeps its own).
_CURSOR_SETTINGS = ("produce_arrow_string_view = true", "arrow_output_version = '1.4'")
#: The first DuckDB with `to_arrow_reader` and these settings per session.
_OLDEST_DUCKDB = (1, 5)


@dataclass(frozen=True)
class DuckDBTableSource(Source):
    """The asset's DuckDB table, read through a resource whose `get_connection()` yields a
    DuckDB connection (`dagster_duckdb.DuckDBResource`).

    `table` defaults to the asset's `dagster/table_name` metadata (dagster-dbt sets it), else
    the asset key's parts joined by dots. `partition_expr` is the column (or SQL expression)
    that selects the run's partition. With `pushdown` (the default) the rules, and the casts
    of `read_dtypes="cast"`, run in DuckDB as SQL, and only those without an exact SQL form
    read rows out; `pushdown=False` streams the table into polars for every rule.
    """

    resource_key: str = "duckdb"
    table: str | None = None
    partition_expr: str | None = None
    pushdown: bool = True

    @property
    def required_resource_keys(self) -> frozenset[str]:
        return frozenset({self.resource_key})

    def describe(self) -> str:
        table = f"'{self.table}'" if self.table else "(dagster/table_name)"
        return f"DuckDB table {table} via resource '{self.resource_key}'"

    @contextmanager
    def open(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> Iterator[pl.LazyFrame]:
        table = self.table or table_name(context, asset_key)
        partition = run_partition(context)
        require_expr(partition, self.partition_expr, self.describe())
        relation = _quoted(table)
        query = f"SELECT * FROM {relation}"
        with getattr(context.resources, self.resource_key).get_connection() as connection:
            if partition is not None and self.partition_expr is not None:
                zoned = _is_zoned(connection, relation, self.partition_expr)
                query += f" WHERE {partition.sql(self.partition_expr, zoned=zoned)}"
            context.log.info(
                f"Reading asset {asset_key.to_user_string()} from DuckDB table {table} "
                f"(resource '{self.resource_key}'), streamed: {query}"
            )
            with scan_duckdb(connection, query) as frame:
                yield frame

    @contextmanager
    def open_table(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> Iterator[StoredTable]:
        if not self.pushdown:
            with self.open(context, asset_key) as frame:
                yield StoredTable(frame)
            return
        from ._duckdb_pushdown import DIALECT, pushdown, relation

        table = self.table or table_name(context, asset_key)
        partition = run_partition(context)
        require_expr(partition, self.partition_expr, self.describe())
        with getattr(context.resources, self.resource_key).get_connection() as connection:
            rows = relation(connection, table, partition, self.partition_expr)
            context.log.info(
                f"Checking asset {asset_key.to_user_string()} from DuckDB table {table} "
                f"(resource '{self.resource_key}') by pushdown: rules with an exact SQL form run "
                "in DuckDB, the others stream only the columns they read."
            )
            with scan_duckdb(connection, rows.sql(DIALECT)) as frame:
                yield StoredTable(
                    frame,
                    pushdown(connection, rows, context.log.info, resource_key=self.resource_key),
                )


def table_name(context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey) -> str:
    """The asset's `dagster/table_name` metadata, else its key parts joined by dots."""
    layer = context.job_def.asset_layer
    metadata = layer.get(asset_key).metadata if layer.has(asset_key) else {}
    name = metadata.get(TABLE_NAME)
    if name is None:
        return ".".join(asset_key.path)
    return str(getattr(name, "value", name))


@contextmanager
def scan_duckdb(connection: Any, query: str) -> Iterator[pl.LazyFrame]:
    """A LazyFrame over `query`, valid inside the context: each collect streams Arrow batches
    through its own cursor. The cursors are closed here, on exit, not in the batch generator:
    a query that stops early (`head`) leaves its generator to be dropped on a polars thread,
    where closing a DuckDB result aborts the process."""
    require_duckdb()
    cursors: list[Any] = []
    probe = connection.cursor()
    cursors.append(probe)
    _export_string_views(probe)
    schema = pl.from_arrow(probe.sql(query).limit(0).to_arrow_table()).schema  # type: ignore[union-attr]

    def batches(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        cursor = connection.cursor()
        cursors.append(cursor)
        _export_string_views(cursor)
        relation = cursor.sql(query)
        if with_columns is not None:
            relation = relation.project(", ".join(_identifier(c) for c in with_columns))
        if n_rows is not None:
            relation = relation.limit(n_rows)
        reader = relation.to_arrow_reader(batch_size or _BATCH_ROWS)
        cursors.append(reader)
        for batch in iter(reader.read_next_batch, None):
            frame = pl.DataFrame(pl.from_arrow(batch))
            yield frame if predicate is None else frame.filter(predicate)

    try:
        yield register_io_source(batches, schema=schema, is_pure=True)
    finally:
        for opened in reversed(cursors):
            opened.close()


def require_duckdb() -> None:
    """Refuse a DuckDB older than the source reads with, before its own error misleads."""
    import duckdb

    found = duckdb.__version__
    if tuple(int(part) for part in found.split(".")[:2]) < _OLDEST_DUCKDB:
        oldest = ".".join(map(str, _OLDEST_DUCKDB))
        raise InvalidSourceError(
            f"DuckDBTableSource reads with DuckDB >= {oldest}, and this environment has duckdb "
            f"{found}: upgrade it (pip install 'duckdb>={oldest},<2')."
        )


def _is_zoned(connection: Any, relation: str, expr: str) -> bool:
    """Whether `expr` on `relation` is a `TIMESTAMP WITH TIME ZONE` (the query is bound, not
    run)."""
    cursor = connection.cursor()
    try:
        kind = cursor.sql(f"SELECT ({expr}) FROM {relation}").types[0]
    finally:
        cursor.close()
    return str(kind) == "TIMESTAMP WITH TIME ZONE"


def _export_string_views(cursor: Any) -> None:
    """Make `cursor` (this source's own) export strings as Arrow string views."""
    for setting in _CURSOR_SETTINGS:
        cursor.execute(f"SET SESSION {setting}")


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _quoted(table: str) -> str:
    """`db.schema.table` with each part quoted (names from metadata are not SQL)."""
    return ".".join(_identifier(part) for part in _parts(table))


def _parts(table: str) -> list[str]:
    """The parts of `db.schema.table`, unquoted."""
    parts = [part.strip('"') for part in table.split(".")]
    if not all(parts) or len(parts) > 3:
        raise InvalidSourceError(
            f"{table!r} is not a DuckDB table name: write 'table', 'schema.table' or "
            "'database.schema.table'."
        )
    return parts
