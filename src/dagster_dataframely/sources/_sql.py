"""`SQLTableSource`: a table in any database sqlglot knows, read through a DB-API connection.

The rules with an exact SQL form in the dialect run in the database (one aggregate query and
bounded samples, see `_engine.sql`); the others, and the column-schema check, read a projected
`SELECT` whose rows are fetched in batches into polars. A dialect the compiler has no rules
for (sqlglot knows it, this package does not know its float and string semantics) is read
that way for every rule. The column dtypes come from the cursor's description, read by
sqlglot's type parser, so a `smallint` is an `Int16` as Dataframely declares it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import uuid4

import dagster as dg
import polars as pl
from polars.io.plugins import register_io_source

from ..errors import InvalidSourceError
from ._base import SOURCE_ERRORS, Source, StoredTable, for_run, logged
from ._cursor_frames import arrow_frames, whole_frame
from ._failures import CONNECTION_FIX, closed, connecting, query_error, role_of
from ._partitions import require_expr, run_partition
from ._reads import Reads

if TYPE_CHECKING:  # sqlglot is imported only when the source opens
    from sqlglot import exp

    from .._engine.sql.dialects import Dialect
    from .._engine.sql.sessions import Value
    from .._engine.sql.staging import Session
    from ._names import Reference

_BATCH_ROWS = 50_000


def known_dialects() -> list[str]:
    from sqlglot.dialects.dialect import Dialects

    return sorted(dialect.value for dialect in Dialects if dialect.value)


@dataclass(frozen=True, kw_only=True)
class SQLTableSource(Source):
    """A database table, checked where it lives, through the resource under `resource_key`.

    The resource gives a DB-API connection: a `get_connection()` context manager
    (`SnowflakeResource`, `DuckDBResource`, a PostgreSQL resource of your own), a `connect()`
    method, or it is a connection (has `cursor()`). `dialect` is sqlglot's name of the
    database's SQL (`postgres`, `snowflake`, `bigquery`, ...). `table` defaults to the asset's
    `dagster/table_name`; `partition_expr` selects the run's partition, as Dagster's database
    IO managers do.
    """

    resource_key: str
    dialect: str
    table: str | None = None
    partition_expr: str | None = None
    #: `table` and `partition_expr` as parsed (see `_names`), so a bad one fails here.
    reference: Reference = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from ._names import Reference

        known = known_dialects()
        if self.dialect not in known:
            raise InvalidSourceError(
                f"SQLTableSource(dialect={self.dialect!r}): sqlglot knows no such SQL dialect. "
                f"Give one of {', '.join(known)}."
            )
        parsed = Reference.parse("SQLTableSource", self.table, self.partition_expr, self.dialect)
        object.__setattr__(self, "reference", parsed)

    def for_asset(self, asset_key: dg.AssetKey, metadata: Mapping[str, Any]) -> SQLTableSource:
        from ._names import asset_table

        if self.table is not None:
            return self
        return replace(self, table=asset_table(asset_key, metadata, self.dialect))

    @property
    def required_resource_keys(self) -> frozenset[str]:
        return frozenset({self.resource_key})

    def describe(self) -> str:
        table = f"'{self.table}'" if self.table else "of the asset"
        return f"{self.dialect} table {table} via resource '{self.resource_key}'"

    def concurrent(self, context: dg.AssetCheckExecutionContext) -> bool:
        """A resource that opens a connection per read serves reads at once; one that is a
        connection (has `cursor()`) serves one read at a time."""
        resource = getattr(context.resources, self.resource_key)
        return hasattr(resource, "get_connection") or not hasattr(resource, "cursor")

    def connection(self, resource: Any) -> AbstractContextManager[Any]:
        """The DB-API connection the run's resource gives, open inside the context."""
        return connection_of(resource, self.resource_key)

    def resolved(self, database: _Database) -> AbstractContextManager[exp.Table]:
        """The table the check's queries read, while the context is open: the one named."""
        assert self.reference.table is not None
        return nullcontext(self.reference.table)

    #: What to check when the connection cannot be opened.
    connection_fix: ClassVar[str] = CONNECTION_FIX
    #: The source's own fixes of a table the database refuses (SQLSTATE -> fix, `{table}`
    #: and `{role}` filled in), over the ones every database shares (`_failures`).
    read_fixes: ClassVar[Mapping[str, str]] = {}

    @contextmanager
    def open(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> Iterator[pl.LazyFrame]:
        with self.open_table(context, asset_key) as table:
            yield table.frame

    @contextmanager
    def open_table(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> Iterator[StoredTable]:
        from .._engine.sql.backend import SQLTable
        from .._engine.sql.catalog import read_facts
        from .._engine.sql.dialects import DIALECTS
        from ._sql_query import relation

        source = for_run(self, context, asset_key)
        assert isinstance(source, SQLTableSource) and source.reference.table is not None
        partition = run_partition(context)
        require_expr(partition, self.partition_expr, source.describe())
        resource = getattr(context.resources, self.resource_key)
        with ExitStack() as stack:
            connection = stack.enter_context(
                connecting(
                    self.connection(resource),
                    asset=asset_key.to_user_string(),
                    source=source.describe(),
                    resource_key=self.resource_key,
                    fix=self.connection_fix,
                )
            )
            database = _Database(connection, source, asset_key, context.log.info)
            stack.enter_context(database.pinned())
            # Before the connection is restored and closed: no read polars left fetching.
            stack.callback(database.reads.stop)
            rows = relation(
                database.dtypes,
                stack.enter_context(source.resolved(database)),
                self.dialect,
                partition,
                self.reference.partition_expr,
            )
            frame = database.scan(rows)
            if self.dialect not in DIALECTS:
                context.log.info(
                    f"Checking asset {asset_key.to_user_string()} from {source.describe()}: the "
                    f"rules have no SQL form for dialect {self.dialect!r} here; every rule "
                    "reads the table's columns into polars."
                )
                yield StoredTable(frame)
                return
            context.log.info(
                f"Checking asset {asset_key.to_user_string()} from {source.describe()} by "
                f"pushdown: rules with an exact SQL form run in {self.dialect}, the others "
                "read only the columns they need."
            )
            # Tables read through one resource are in one database: a filter may join them.
            same = ("SQLTableSource", self.resource_key, self.dialect)
            pushed = SQLTable.of(
                rows,
                dialect=self.dialect,
                run=database.run,
                database=same,
                session=database.session,
                log=context.log.info,
                facts=read_facts(rows, DIALECTS[self.dialect], database.run, context.log.info),
            )
            yield StoredTable(frame, pushed)


@contextmanager
def connection_of(resource: Any, resource_key: str) -> Iterator[Any]:
    """The DB-API connection `resource` gives, open inside the context: a SQLAlchemy
    connection (an engine's `connect()`) hands over the driver's own."""
    refused = InvalidSourceError(
        f"Resource '{resource_key}' ({type(resource).__name__}) gives no database "
        "connection: SQLTableSource reads through a resource with a get_connection() "
        "context manager, a connect() method (a SQLAlchemy engine too), or a DB-API "
        "connection (cursor())."
    )
    if hasattr(resource, "get_connection"):
        with resource.get_connection() as connection:
            yield _dbapi(connection, refused)
    elif hasattr(resource, "cursor"):
        yield resource
    elif hasattr(resource, "connect"):
        connection = resource.connect()
        try:
            yield _dbapi(connection, refused)
        finally:
            connection.close()
    else:
        raise refused


def _dbapi(connection: Any, refused: InvalidSourceError) -> Any:
    if hasattr(connection, "cursor"):
        return connection
    driver = getattr(connection, "connection", None)  # sqlalchemy.Connection.connection
    if driver is None or not hasattr(driver, "cursor"):
        raise refused
    return driver


@dataclass(frozen=True)
class _Database:
    """Queries on one connection: each on its own cursor, logged, its errors named."""

    connection: Any
    source: SQLTableSource
    asset_key: dg.AssetKey
    log: Callable[[str], None]
    #: The batch reads of its scans, which `reads.stop()` ends before the connection closes.
    reads: Reads = field(default_factory=Reads, compare=False, repr=False)
    #: The settings pinned on the connection while the check runs (see `pinned`).
    pins: dict[str, Value] = field(default_factory=dict)

    @contextmanager
    def cursor(self, sql: str, *, streaming: bool = False, rules: bool = False) -> Iterator[Any]:
        """A cursor that ran `sql`; `rules` when it evaluates pushed-down rules (a failure
        then is the rule's unless the database refused the table)."""
        with self.named(sql):  # a connection the server closed refuses even a cursor
            cursor = self.streaming_cursor() if streaming else self.connection.cursor()
        try:
            dialect = self.dialect
            if dialect is not None and dialect.cursors_are_sessions:
                for statement in dialect.set_session(dialect.session_settings):
                    cursor.execute(statement.sql(dialect=self.source.dialect))
            cursor.execute(sql)
            yield cursor
        except SOURCE_ERRORS:
            raise
        except Exception as error:
            self.rollback()
            raise self.error(error, sql, rules=rules) from error
        finally:
            cursor.close()

    @property
    def dialect(self) -> Dialect | None:
        """The dialect's facts; None for a dialect this package compiles no rules for."""
        from .._engine.sql.dialects import DIALECTS

        return DIALECTS.get(self.source.dialect)

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """The dialect's session settings pinned on the connection while the check runs, and
        the user's own restored after it (see `_pins`): the connection is the resource's,
        and it is theirs again when the check ends."""
        from ._pins import pinned

        with pinned(self):
            yield

    @contextmanager
    def named(self, what: str) -> Iterator[None]:
        """A failure of `what` (a call of the connection's own API, not a query) named as a
        failed query's: the asset, the source, the table and the fix."""
        try:
            yield
        except SOURCE_ERRORS:
            raise
        except Exception as error:
            raise self.error(error, what, rules=False) from error

    def streaming_cursor(self) -> Any:
        """A server-side cursor where the driver has them (psycopg's and psycopg2's
        `cursor(name=)`), so the client holds one batch of rows, not the result; else a
        plain cursor. An autocommit connection needs it `withhold` (outside a transaction)."""
        withhold = bool(getattr(self.connection, "autocommit", False))
        try:
            return self.connection.cursor(name=f"dy_scan_{uuid4().hex}", withhold=withhold)
        except TypeError:  # DuckDB, sqlite3, Snowflake: no named cursors
            return self.connection.cursor()

    def rollback(self) -> None:
        """Leave a connection the failed query aborted usable (PostgreSQL refuses more). A
        rollback may also undo the settings pinned in the transaction: pin them again."""
        with suppress(Exception):  # an autocommit connection has nothing to undo
            self.connection.rollback()
        dialect = self.dialect
        if dialect is not None and dialect.rollback_unsets and self.pins:
            with suppress(Exception):  # a connection the failure closed takes nothing more
                for statement in dialect.set_session(self.pins):
                    cursor = self.connection.cursor()
                    cursor.execute(statement.sql(dialect=self.source.dialect))
                    cursor.close()

    def error(self, error: Exception, sql: str, *, rules: bool) -> Exception:
        from ._names import dialect_name

        return query_error(
            error,
            sql,
            rules=rules,
            asset=self.asset_key.to_user_string(),
            source=self.source.describe(),
            table=str(self.source.table),
            role=role_of(self.connection),
            dialect=dialect_name(self.source.dialect),
            fixes=self.source.read_fixes,
            closed=closed(self.connection),
        )

    def run(self, sql: str) -> pl.DataFrame:
        self.log(f"Pushed down to {self.source.dialect}: {logged(sql)}")
        with self.cursor(sql, rules=True) as cursor:
            return whole_frame(cursor)

    def execute(self, sql: str) -> None:
        self.log(f"Pushed down to {self.source.dialect}: {logged(sql)}")
        with self.cursor(sql, rules=True):
            pass

    @contextmanager
    def session(self) -> Iterator[Session]:
        """The connection as a session: its cursors share its temporary tables."""
        from .._engine.sql.dialects import DIALECTS
        from .._engine.sql.staging import Session, dropping

        dialect = DIALECTS[self.source.dialect]
        with dropping(Session(dialect, self.run, self.execute, self.log, self.rollback)) as opened:
            yield opened

    def dtypes(self, sql: str) -> dict[str, pl.DataType]:
        """The polars dtype of each column `sql` returns, from its description (no rows)."""
        from .._engine.sql.dialects import described
        from ._sql_query import polars_dtype

        reading = described(self.source.dialect)
        with self.cursor(sql) as cursor:
            return {
                column[0]: polars_dtype(
                    reading.type_name(column[1], self.connection), column, self.source.dialect
                )
                for column in cursor.description
            }

    def scan(self, rows: exp.Select) -> pl.LazyFrame:
        """A LazyFrame over `rows`: each collect runs a projected `SELECT` and fetches it in
        batches, counted in `reads` (`reads.stop()` ends them)."""
        from ._sql_query import projected

        schema = self.dtypes(projected(rows, None, self.source.dialect, limit=0))

        def fetched(
            query: str, wanted: pl.Schema, predicate: pl.Expr | None, size: int
        ) -> Generator[pl.DataFrame]:
            with self.cursor(query, streaming=True) as cursor:
                arrow = arrow_frames(cursor, _BATCH_ROWS)
                if arrow is not None:
                    for rows in arrow:
                        if not rows.width:  # an empty result without its columns
                            continue
                        for batch_rows in rows.cast(wanted).iter_slices(size):
                            yield batch_rows if predicate is None else batch_rows.filter(predicate)
                    return
                while batch := cursor.fetchmany(size):
                    frame = pl.DataFrame(batch, schema=wanted, orient="row", strict=False)
                    yield frame if predicate is None else frame.filter(predicate)

        def batches(
            with_columns: list[str] | None,
            predicate: pl.Expr | None,
            n_rows: int | None,
            batch_size: int | None,
        ) -> Iterator[pl.DataFrame]:
            query = projected(rows, with_columns, self.source.dialect, limit=n_rows)
            names = with_columns or list(schema)
            wanted = pl.Schema({name: schema[name] for name in names})
            self.log(f"Read from {self.source.dialect}: {logged(query)}")
            read = fetched(query, wanted, predicate, batch_size or _BATCH_ROWS)
            yield from self.reads.batches(read)

        return register_io_source(batches, schema=schema, is_pure=True)
