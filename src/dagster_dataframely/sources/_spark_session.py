"""A `SparkSession` as a DB-API connection, so the SQL sources' machinery (session settings,
catalog facts, pushdown, errors) runs the checks' SQL through Spark unchanged.

Spark runs a query when its rows are asked for; they come back as Arrow (`toArrow()`, the
whole result at once), so an instant stays an instant and a decimal keeps its scale (Python
rows would turn a `TIMESTAMP` into the local clock of the driver). A failure carries Spark's
SQLSTATE (`42P01` for a missing table) as `sqlstate`, as the other drivers' errors do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

import polars as pl

_T = TypeVar("_T")


def session_of(resource: Any) -> Any:
    """The SparkSession `resource` stands for: a session (anything with `sql()`),
    dagster-pyspark's resource (its `spark_session`), or a function that returns one (which
    may start it, inside the connection's error handling)."""
    if hasattr(resource, "sql"):
        return resource
    if hasattr(resource, "spark_session"):
        return resource.spark_session
    if callable(resource):
        return session_of(resource())
    raise TypeError(
        f"{type(resource).__name__} is not a SparkSession: give a SparkSession, "
        "dagster-pyspark's PySparkResource, or a function that returns a session"
    )


@contextmanager
def spark_connection(resource: Any) -> Iterator[SparkConnection]:
    """`resource`'s session as a connection, once it answers a query (analysed, not run: a
    stopped session fails here, as a connection that cannot open); the session is the
    user's, never stopped."""
    session = session_of(resource)
    session.sql("SELECT 1")
    yield SparkConnection(session)


class SparkConnection:
    """The DB-API surface the SQL sources use: `cursor()`; no transactions."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def cursor(self) -> SparkCursor:
        return SparkCursor(self.session)


class SparkCursor:
    """One query's result: `description` from its schema, rows fetched as Arrow
    (`fetch_frame`, which the SQL sources prefer to `fetchall`)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.description: list[tuple[Any, ...]] | None = None
        self._frame: Any = None
        self._rows: pl.DataFrame | None = None
        self._offset = 0

    def execute(self, sql: str) -> None:
        self._frame = _tagged(lambda: self.session.sql(sql))
        self._rows, self._offset = None, 0
        self.description = [
            (
                field.name,
                field.dataType.simpleString(),
                None,
                None,
                getattr(field.dataType, "precision", None),
                getattr(field.dataType, "scale", None),
                field.nullable,
            )
            for field in self._frame.schema.fields
        ]

    def fetch_frame(self) -> pl.DataFrame:
        """The rest of the result as a polars frame (from Arrow, not Python rows)."""
        rows = self._fetched()
        rest = rows.slice(self._offset)
        self._offset = rows.height
        return rest

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.fetch_frame().rows()

    def close(self) -> None:
        self._frame = self._rows = None

    def _fetched(self) -> pl.DataFrame:
        if self._rows is None:
            rows = pl.from_arrow(_tagged(self._frame.toArrow))
            assert isinstance(rows, pl.DataFrame)
            self._rows = rows
        return self._rows


#: SQLSTATE "connection does not exist": the session's JVM went away during the check.
_GONE = "08003"


def _tagged(call: Callable[[], _T]) -> _T:
    """`call()`, its Spark error given the `sqlstate` attribute the sources read: Spark's
    own, or `08003` where the JVM is gone, so the check fails as a lost connection."""
    try:
        return call()
    except Exception as error:
        if getattr(error, "sqlstate", None) is None:
            with suppress(Exception):  # a PySpark error without a condition has no state
                error.sqlstate = _state(error)  # type: ignore[attr-defined]
        raise


def _state(error: Exception) -> str | None:
    state = getattr(error, "getSqlState", None)
    found = state() if callable(state) else None
    if found:
        return str(found)
    return _GONE if type(error).__name__ == "Py4JNetworkError" else None
