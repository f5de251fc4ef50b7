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
from typing import Any

import polars as pl
from polars.io.plugins import register_io_source

#: One engine partition: the files read in order, a batch of 32,768 rows decoded at a time
#: (8,192, DataFusion's default, costs a quarter more time for no less memory).
_SESSION = {
    "datafusion.execution.target_partitions": "1",
    "datafusion.execution.batch_size": "32768",
}
_TABLE = "t"


def scan_delta_batches(
    path: str,
    storage_options: Mapping[str, str] | None = None,
    *,
    where: Callable[[pl.Schema], str | None] | None = None,
) -> pl.LazyFrame:
    """The Delta table at `path` as a LazyFrame read batch by batch. `where` gives, from
    the table's schema, a DataFusion SQL predicate that prunes files and rows before polars
    sees them (a partition's); polars' own filters still apply to every batch."""
    from deltalake import DeltaTable

    with _read_errors():
        table = DeltaTable(path, storage_options=dict(storage_options or {}) or None)
        schema = pl.DataFrame(_query(table, ["*"], None, 0).read_all()).schema
    sql = where(schema) if where is not None else None

    def batches(
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        _batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        columns = list(schema) if with_columns is None else with_columns
        # No column (a bare row count) still needs rows: read a constant, keep the height.
        listed = [_quote(name) for name in columns] or ["1"]
        for batch in _read(table, listed, sql, n_rows):
            frame = pl.DataFrame(batch)
            if not columns:
                frame = frame.drop(frame.columns)
            # `n_rows` counts the rows read, as a scan's does: the predicate filters after.
            yield frame if predicate is None else frame.filter(predicate)

    return register_io_source(batches, schema=schema, is_pure=True)


def _read(table: Any, columns: list[str], where: str | None, limit: int | None) -> Iterator[Any]:
    """The record batches of a query on `table`."""
    with _read_errors():
        yield from _query(table, columns, where, limit)


def _query(table: Any, columns: list[str], where: str | None, limit: int | None) -> Any:
    sql = f"SELECT {', '.join(columns)} FROM {_TABLE}"
    if where is not None:
        sql += f" WHERE {where}"
    if limit is not None:
        sql += f" LIMIT {limit}"
    return _query_builder().register(_TABLE, table).execute(sql)


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


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
