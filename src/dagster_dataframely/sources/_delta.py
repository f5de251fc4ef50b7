"""A Delta table as a LazyFrame that deltalake's own engine streams in small batches.

`pl.scan_delta` hands the files to polars' parquet reader, which decodes whole row groups
(delta-rs writes them 1,048,576 rows long) and reads several ahead, so a check through it
peaks at most of what loading the table does. deltalake's DataFusion engine decodes a row
group a batch at a time: memory stays flat in the table's size. With one engine partition
the files are read one after another, in the table's file order (`pl.scan_delta`'s), so the
rows, and the samples taken from them, come in the same order on every run. The engine also
reads column-mapped tables, which `pl.scan_delta` refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import polars as pl
from polars.io.plugins import register_io_source

if TYPE_CHECKING:  # sqlglot is imported when a Delta table is read
    from sqlglot import exp

#: One engine partition: the files read in order, a batch of 32,768 rows decoded at a time
#: (8,192, DataFusion's default, costs a quarter more time for no less memory).
_SESSION = {
    "datafusion.execution.target_partitions": "1",
    "datafusion.execution.batch_size": "32768",
}
_TABLE = "t"
#: DataFusion reads standard SQL as sqlglot's own dialect writes it: double-quoted names,
#: a quote in a string doubled.
_DATAFUSION = ""


def scan_delta_batches(
    path: str,
    storage_options: Mapping[str, str] | None = None,
    *,
    where: Callable[[pl.Schema], exp.Expr | None] | None = None,
) -> pl.LazyFrame:
    """The Delta table at `path` as a LazyFrame read batch by batch. `where` gives, from
    the table's schema, a predicate that DataFusion prunes files and rows with before polars
    sees them (a partition's); polars' own filters still apply to every batch."""
    from deltalake import DeltaTable

    with _read_errors():
        table = DeltaTable(path, storage_options=dict(storage_options or {}) or None)
        schema = pl.DataFrame(_query(table, None, None, 0).read_all()).schema
    predicate_sql = where(schema) if where is not None else None

    def batches(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        _batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        columns = list(schema) if with_columns is None else with_columns
        for batch in _read(table, columns, predicate_sql, n_rows):
            frame = pl.DataFrame(batch)
            if not columns:
                frame = frame.drop(frame.columns)
            # `n_rows` counts the rows read, as a scan's does: the predicate filters after.
            yield frame if predicate is None else frame.filter(predicate)

    return register_io_source(batches, schema=schema, is_pure=True)


def _read(
    table: Any, columns: list[str], where: exp.Expr | None, limit: int | None
) -> Iterator[Any]:
    """The record batches of a query on `table`."""
    with _read_errors():
        yield from _query(table, columns, where, limit)


def _query(table: Any, columns: list[str] | None, where: exp.Expr | None, limit: int | None) -> Any:
    """`SELECT columns FROM table WHERE where LIMIT limit` (every column: None) in
    DataFusion."""
    from sqlglot import exp

    if columns is None:
        names: list[exp.Expr] = [exp.Star()]
    else:  # no column (a bare row count) still needs rows: read a constant, keep the height
        names = [exp.column(name, quoted=True) for name in columns] or [exp.Literal.number(1)]
    query = exp.select(*names).from_(exp.to_table(_TABLE))
    if where is not None:
        query = query.where(where.copy())
    if limit is not None:
        query = query.limit(limit)
    return _query_builder().register(_TABLE, table).execute(query.sql(dialect=_DATAFUSION))


def _query_builder() -> Any:
    """deltalake's DataFusion session, configured; a deltalake too old to take a session
    config fails here with the fix, not as a read error."""
    import deltalake

    try:
        return deltalake.QueryBuilder(_SESSION)
    except (AttributeError, TypeError) as error:
        raise ImportError(
            f"DeltaSource reads through deltalake's QueryBuilder with a session config, which "
            f"deltalake {deltalake.__version__} does not take: upgrade deltalake (1.6 is "
            "tested)."
        ) from error


@contextmanager
def _read_errors() -> Iterator[None]:
    """deltalake fails with its own classes, its engine with a bare `Exception` (a missing or
    corrupt file): raised as `OSError`, the read error polars' own scan raises."""
    try:
        yield
    except ImportError:
        raise
    except Exception as error:
        raise OSError(f"deltalake could not read the Delta table: {error}") from error
