"""A `SparkSession` as a DB-API connection, so the SQL sources' machinery (session settings,
catalog facts, pushdown, errors) runs the checks' SQL through Spark unchanged.

Spark runs a query when its rows are asked for; they come back as Arrow (`toArrow()`, the
whole result at once), so an instant stays an instant and a decimal keeps its scale (Python
rows would turn a `TIMESTAMP` into the local clock of the driver). A failure carries Spark's
SQLSTATE (`42P01` for a missing table) as `sqlstate`, as the other drivers' errors do, and the
line of Spark's message that names the problem as `summary` (not its analysed plan or Java
stack). pyspark's own log of a failed query (the whole Java stack trace as one JSON line on
stderr) is silenced while the check's queries run, and put back as it was after each.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import uuid4

import polars as pl

from ._spark_connect import is_connect, probe

if TYPE_CHECKING:
    from .._engine.sql.dialects import Dialect
    from .._engine.sql.dialects.spark import SparkDialect
    from .._engine.sql.sessions import Current, Value

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
    stopped session, or a Spark Connect server that does not answer, fails here, as a
    connection that cannot open); the session is the user's, never stopped."""
    session = session_of(resource)
    if is_connect(session):
        _tagged(lambda: probe(session))  # an unreachable server fails in seconds, with its URL
    else:
        _tagged(lambda: session.sql("SELECT 1"))
    yield SparkConnection(session)


class SparkConnection:
    """The DB-API surface the SQL sources use: `cursor()`; no transactions. Its session's
    settings are read and set through `spark.conf` (`settings`), not SQL statements."""

    def __init__(self, session: Any) -> None:
        self.session = session

    def cursor(self) -> SparkCursor:
        return SparkCursor(self.session)

    @contextmanager
    def temporary_view(self, sql: str) -> Iterator[str]:
        """The rows of the query `sql` as a temporary view of the session, named uniquely,
        dropped when the context ends. It keeps the query's analysed plan: a path's files
        are listed and their schema read once, here (a missing or unreadable path fails
        here, with Spark's error), where each query that names the path would do both
        again."""
        name = f"dy_view_{uuid4().hex}"
        _tagged(lambda: self.session.sql(sql).createTempView(name))
        try:
            yield name
        finally:
            with suppress(Exception):  # a session the failure stopped holds no view
                _tagged(lambda: self.session.catalog.dropTempView(name))

    def settings(self, dialect: Dialect) -> SparkSettings | None:
        """The session's settings through `spark.conf`, where they are its configuration
        (`SparkDialect.session_conf`); None for another dialect's (its statements set them)."""
        from .._engine.sql.dialects.spark import SparkDialect

        if isinstance(dialect, SparkDialect) and dialect.session_conf:
            return SparkSettings(self.session, dialect)
        return None


class SparkSettings:
    """A session's settings through pyspark's `RuntimeConfig` (`spark.conf`, classic or
    Connect): one call each, where a `SET` statement is parsed, planned and run as a
    command (about 40 ms each in a warm local JVM)."""

    def __init__(self, session: Any, dialect: SparkDialect) -> None:
        self.conf, self.dialect = session.conf, dialect

    def current(self, names: list[str]) -> dict[str, Current]:
        """The values the session was given (`getAll`), and the value every other one of
        `names` it knows inherits (a setting it does not know is left out)."""
        from pyspark.errors import SparkNoSuchElementException

        given: dict[str, str] = _tagged(lambda: self.conf.getAll)
        inherited: dict[str, str] = {}
        for name in names:
            if name not in given:
                with suppress(SparkNoSuchElementException):
                    inherited[name] = _tagged(partial(self.conf.get, name))
        rows = [{"key": name, "value": value} for name, value in given.items()]
        return self.dialect.current_session(rows, inherited)

    def apply(self, settings: Mapping[str, Value | None]) -> None:
        """Set each setting, as text (`true`, `UTC`); None: unset it."""
        from .._engine.sql.sessions import text

        for name, value in settings.items():
            if value is None:
                _tagged(partial(self.conf.unset, name))
            else:
                _tagged(partial(self.conf.set, name, text(value)))


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

    def fetch_batches(self) -> Iterator[pl.DataFrame]:
        """The result as polars frames of one Arrow batch each, streamed from the JVM in
        the order partitions finish (`spark.sql.execution.arrow.maxRecordsPerBatch` rows), so
        the check process holds one batch, not the result: a rule that falls back to polars
        reads a table of any size. A Spark Connect session's result comes whole (`toArrow`).

        pyspark has no public way to stream Arrow batches: `toArrow()` collects them into
        one table. This uses the private calls `toArrow()` itself makes
        (`collectAsArrowToPython`, `_create_local_socket`), in this one place; the
        characterization test `test_a_streamed_result_equals_spark_s_own_arrow_table` pins
        that the batches are the rows `toArrow()` gives, typed as it types them."""
        if not hasattr(self._frame, "_jdf"):  # Spark Connect: no JVM of ours to stream from
            yield self.fetch_frame()
            return
        yield from _streamed(self._frame)

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


def _streamed(frame: Any) -> Iterator[pl.DataFrame]:
    """`frame`'s rows batch by batch from the socket `toArrow()` reads (an Arrow IPC stream,
    then the batches' order or -1 for a failed job), each cast to the Arrow schema
    `toArrow()` gives (instants in UTC). Batches come as Spark's partitions finish (rows in a
    partition in order): pyspark's own reader holds them all to put them in partition order,
    which a table's rows do not have. A failed job raises Spark's error after its batches."""
    import pyarrow as pa
    from pyspark.serializers import read_int
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.util import _create_local_socket

    large = frame.sparkSession.conf.get("spark.sql.execution.arrow.useLargeVarTypes") == "true"
    schema = to_arrow_schema(
        frame.schema,
        error_on_duplicated_field_names_in_struct=True,
        timezone="UTC",
        prefers_large_types=large,
    )
    port, secret, server = _tagged(frame._jdf.collectAsArrowToPython)
    stream, sock = _create_local_socket((port, secret))
    try:
        try:
            for batch in pa.ipc.open_stream(stream):
                rows = pl.from_arrow(pa.Table.from_batches([batch]).cast(schema))
                assert isinstance(rows, pl.DataFrame)
                yield rows
            for _ in range(max(read_int(stream), 0)):  # the order, which rows need not keep
                read_int(stream)
        except (OSError, pa.ArrowInvalid):  # a job that failed midway cuts the stream short
            _tagged(lambda: _unwrapped(server.getResult))  # Spark's error, where it has one
            raise
        _tagged(lambda: _unwrapped(server.getResult))  # a failed job: Spark's error, raised
    finally:
        stream.close()
        sock.close()


def _unwrapped(call: Callable[[], _T]) -> _T:
    """`call()`, a Java error raised as pyspark's own (with its condition and state)."""
    from pyspark.errors.exceptions.captured import unwrap_spark_exception

    with unwrap_spark_exception():
        return call()


#: SQLSTATE "connection does not exist": the session's JVM went away during the check.
_GONE = "08003"
#: SQLSTATE "insufficient privilege": the storage refused the session's user the files.
_DENIED = "42501"
#: The Java exceptions of a file the storage refuses to the session's user.
_DENIALS = ("AccessDeniedException", "AccessControlException")
#: pyspark's loggers of a failed SQL query and a failed DataFrame call (a path read by
#: `SparkConnection.temporary_view`), in `PySparkException._log_exception`.
_QUERY_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


def _tagged(call: Callable[[], _T]) -> _T:
    """`call()` with pyspark's log of a failed query silenced; its Spark error given the
    `sqlstate` and `summary` attributes the sources read: Spark's own state, `08003` where
    the JVM is gone (the check fails as a lost connection), `42501` where the storage refused
    the files."""
    try:
        with _quiet():
            return call()
    except Exception as error:
        cause = _root_cause(error)
        with suppress(Exception):  # a PySpark error without a condition has no state
            if getattr(error, "sqlstate", None) is None:
                error.sqlstate = _state(error, cause)  # type: ignore[attr-defined]
            error.summary = _summary(error, cause)  # type: ignore[attr-defined]
        raise


def _quiet() -> AbstractContextManager[None]:
    """pyspark's query loggers disabled inside the context, as they were after it (a user's
    own logging of other queries is untouched)."""
    try:
        from pyspark.logger import PySparkLogger
    except ImportError:  # a pyspark without its structured logger logs nothing of its own
        return nullcontext()
    return _disabled([PySparkLogger.getLogger(name) for name in _QUERY_LOGGERS])


@contextmanager
def _disabled(loggers: list[Any]) -> Iterator[None]:
    """`loggers` disabled while any caller is inside, put back as they were when the last
    leaves: callers do not leave in the order they came (streamed reads interleave, the
    checks of several tables query at once), and a logger is the whole process's."""
    with _SILENCING:
        if not _SILENCED:
            _SILENCED.extend((logger, logger.disabled) for logger in loggers)
            for logger in loggers:
                logger.disabled = True
        _INSIDE[0] += 1
    try:
        yield
    finally:
        with _SILENCING:
            _INSIDE[0] -= 1
            if not _INSIDE[0]:
                for logger, was in _SILENCED:
                    logger.disabled = was
                _SILENCED.clear()


#: The silenced loggers with what they were, and how many threads are inside `_disabled`.
_SILENCING = threading.Lock()
_SILENCED: list[tuple[Any, bool]] = []
_INSIDE = [0]


def _state(error: Exception, cause: str | None) -> str | None:
    state = getattr(error, "getSqlState", None)
    found = state() if callable(state) else None
    if cause is not None and cause.split(":", 1)[0].rsplit(".", 1)[-1] in _DENIALS:
        return _DENIED  # Spark's own state for it (58030) says only "an I/O error"
    if found:
        return str(found)
    return _GONE if type(error).__name__ == "Py4JNetworkError" else None


def _root_cause(error: Exception) -> str | None:
    """`Class: message` of the innermost Java exception behind `error` (the one that says
    what the storage refused), where it is another than Spark's own; None without one."""
    java = getattr(error, "_origin", None) or getattr(error, "java_exception", None)
    if java is None:
        return None
    try:
        outer, inner = java, java.getCause()
        while inner is not None:
            outer, inner = inner, inner.getCause()
        if outer is java and type(error).__name__ != "Py4JJavaError":
            return None
        return f"{outer.getClass().getName()}: {_first_line(str(outer.getMessage()))}"
    except Exception:  # a gateway that is gone answers nothing
        return None


def _summary(error: Exception, cause: str | None) -> str:
    """The first line of Spark's message (it names the problem; the lines after it are the
    analysed plan, the query's context or the Java stack), with the root cause it hides."""
    if type(error).__name__ == "Py4JJavaError" and cause:  # "An error occurred while calling"
        return cause
    first = _first_line(str(error))
    return f"{first} (caused by {cause})" if cause else first


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0].strip()
