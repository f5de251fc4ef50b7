"""A DB-API cursor's result as polars frames, read as Arrow where the driver can (a cursor
with `fetch_frame`/`fetch_batches`; the Databricks SQL connector's
`fetchall_arrow`/`fetchmany_arrow`, about twice as fast as its rows), else as Python rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import polars as pl


def whole_frame(cursor: Any) -> pl.DataFrame:
    """The whole result of `cursor`'s query (a rule query's few rows)."""
    fetch_frame = getattr(cursor, "fetch_frame", None)  # Arrow, not Python rows
    if fetch_frame is not None:
        frame: pl.DataFrame = fetch_frame()
        return frame
    names = [column[0] for column in cursor.description]
    fetchall_arrow = getattr(cursor, "fetchall_arrow", None)  # Databricks' connector
    if fetchall_arrow is not None:
        arrow = _from_arrow(fetchall_arrow())
        # An empty result may come without its columns: the row path's frame then.
        if arrow.width or not names:
            return arrow
    return pl.DataFrame(cursor.fetchall(), schema=names, orient="row")


def arrow_frames(cursor: Any, batch_rows: int) -> Iterable[pl.DataFrame] | None:
    """A cursor's result as polars frames read from Arrow, not Python rows: streamed batch
    by batch where it can (`fetch_batches`; `fetchmany_arrow`, `batch_rows` at a time),
    else whole (`fetch_frame`); None for a plain DB-API cursor."""
    fetch_batches = getattr(cursor, "fetch_batches", None)
    if fetch_batches is not None:
        batches: Iterable[pl.DataFrame] = fetch_batches()
        return batches
    fetchmany_arrow = getattr(cursor, "fetchmany_arrow", None)
    if fetchmany_arrow is not None:
        return _arrow_batches(fetchmany_arrow, batch_rows)
    fetch_frame = getattr(cursor, "fetch_frame", None)
    return None if fetch_frame is None else [fetch_frame()]


def _arrow_batches(
    fetchmany_arrow: Callable[[int], Any], batch_rows: int
) -> Iterator[pl.DataFrame]:
    """The frames of `fetchmany_arrow(n)` (a `pyarrow.Table` each) until one is empty."""
    while (table := fetchmany_arrow(batch_rows)).num_rows:
        yield _from_arrow(table)


def _from_arrow(table: Any) -> pl.DataFrame:
    """A `pyarrow.Table` as a polars frame."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame
