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

from collections.abc import Generator, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import dagster as dg
import polars as pl
from polars.io.plugins import register_io_source

from ..errors import InvalidSourceError
from ._base import Source, StoredTable, for_run
from ._duckdb_cursors import DIALECT, held_read_only, own_cursor, read_only, relation
from ._partitions import require_expr, run_partition
from ._reads import Reads

if TYPE_CHECKING:
    from ._names import Reference

_BATCH_ROWS = 100_000
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

    `read_only` (default: unless the checks keep failing rows in the file) opens the
    resource's database file read-only, so the checks neither wait on nor hold its write
    lock: steps checking the same file at once, and other readers, go on. Where this process
    already holds the file open read-write, the resource's own connection is used.
    """

    resource_key: str = "duckdb"
    table: str | None = None
    partition_expr: str | None = None
    pushdown: bool = True
    read_only: bool | None = None
    #: `table` and `partition_expr` as parsed (see `_names`), so a bad one fails here.
    reference: Reference = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from ._names import Reference

        parsed = Reference.parse("DuckDBTableSource", self.table, self.partition_expr, DIALECT)
        object.__setattr__(self, "reference", parsed)

    @property
    def required_resource_keys(self) -> frozenset[str]:
        return frozenset({self.resource_key})

    def for_asset(self, asset_key: dg.AssetKey, metadata: Mapping[str, Any]) -> DuckDBTableSource:
        from ._names import asset_table

        if self.table is not None:
            return self
        return replace(self, table=asset_table(asset_key, metadata, DIALECT))

    def for_checks(self, *, writes: bool) -> DuckDBTableSource:
        return self if self.read_only is not None else replace(self, read_only=not writes)

    def describe(self) -> str:
        table = f"'{self.table}'" if self.table else "of the asset"
        return f"DuckDB table {table} via resource '{self.resource_key}'"

    def connection(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> AbstractContextManager[Any]:
        """The resource's connection, open inside the context; one it cannot open (a missing
        folder, a file another process holds) is a `SourceConnectionError`."""
        from ._failures import connecting

        resource = getattr(context.resources, self.resource_key)
        return connecting(
            read_only(resource) if self.read_only else resource.get_connection(),
            asset=asset_key.to_user_string(),
            source=self.describe(),
            resource_key=self.resource_key,
        )

    def held_open(self, context: dg.AssetCheckExecutionContext) -> AbstractContextManager[None]:
        """The file, held open read-only for the step where its checks only read."""
        if not self.read_only:
            return nullcontext()
        return held_read_only(getattr(context.resources, self.resource_key))

    @contextmanager
    def open(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> Iterator[pl.LazyFrame]:
        with replace(self, pushdown=False).open_table(context, asset_key) as table:
            yield table.frame

    @contextmanager
    def open_table(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> Iterator[StoredTable]:
        """The rows streamed, and as SQL: evaluated there by pushdown, or (`pushdown=False`)
        only to keep the failing rows in the database all the same."""
        from ._duckdb_pushdown import pushdown
        from ._failures import query_error
        from ._names import dialect_name

        source = for_run(self, context, asset_key)
        assert isinstance(source, DuckDBTableSource) and source.reference.table is not None
        partition = run_partition(context)
        require_expr(partition, self.partition_expr, source.describe())

        def failed(error: Exception, sql: str) -> Exception:
            return query_error(
                error,
                sql,
                rules=True,
                asset=asset_key.to_user_string(),
                source=source.describe(),
                table=str(source.table),
                role=None,
                dialect=dialect_name(DIALECT),
            )

        with source.connection(context, asset_key) as connection:
            rows = relation(
                connection, source.reference.table, partition, self.reference.partition_expr
            )
            query = rows.sql(dialect=DIALECT)
            if self.pushdown:
                context.log.info(
                    f"Checking asset {asset_key.to_user_string()} from {source.describe()} by "
                    "pushdown: rules with an exact SQL form run in DuckDB, the others stream "
                    "only the columns they read."
                )
            else:
                context.log.info(
                    f"Reading asset {asset_key.to_user_string()} from {source.describe()}, "
                    f"streamed: {query}"
                )
            with scan_duckdb(connection, query) as frame:
                table = pushdown(
                    connection,
                    rows,
                    context.log.info,
                    resource_key=self.resource_key,
                    failed=failed,
                    evaluates=self.pushdown,
                )
                yield StoredTable(frame, table) if self.pushdown else StoredTable(frame, held=table)


@contextmanager
def scan_duckdb(connection: Any, query: str) -> Iterator[pl.LazyFrame]:
    """A LazyFrame over `query`, valid inside the context: each collect streams Arrow batches
    through its own cursor, its reads counted in a `Reads`. On exit the reads are stopped and
    waited for, then the cursors are closed here, not in the batch generator: polars may leave
    a generator fetching after its query has its rows (a `head`, a sample), and a DuckDB result
    closed under a running fetch, or closed on a polars thread, aborts the process."""
    require_duckdb()
    cursors: list[Any] = []
    reads = Reads()
    probe = own_cursor(connection)
    cursors.append(probe)
    schema = pl.from_arrow(probe.sql(query).limit(0).to_arrow_table()).schema  # type: ignore[union-attr]

    def fetched(
        with_columns: list[str] | None, n_rows: int | None, batch_size: int | None
    ) -> Generator[pl.DataFrame]:
        cursor = own_cursor(connection)
        cursors.append(cursor)
        relation = cursor.sql(query)
        if with_columns is not None:
            relation = relation.project(", ".join(_identifier(c) for c in with_columns))
        if n_rows is not None:
            relation = relation.limit(n_rows)
        reader = relation.to_arrow_reader(batch_size or _BATCH_ROWS)
        cursors.append(reader)
        for batch in iter(reader.read_next_batch, None):
            yield pl.DataFrame(pl.from_arrow(batch))

    def batches(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        for frame in reads.batches(fetched(with_columns, n_rows, batch_size)):
            yield frame if predicate is None else frame.filter(predicate)

    try:
        yield register_io_source(batches, schema=schema, is_pure=True)
    finally:
        reads.stop()
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


def _identifier(name: str) -> str:
    from sqlglot import exp

    return exp.column(name, quoted=True).sql(dialect=DIALECT)
