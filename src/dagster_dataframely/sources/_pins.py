"""A check's session settings on the user's connection: the dialect's pinned while the check
runs, the user's put back after, also when the check fails midway (see `_engine.sql.sessions`
for what is pinned and what is restored).

They are read and set through the connection's own settings API where it has one (`settings`:
a SparkSession's `spark.conf`, one call per setting, no SQL statement to parse, plan and run),
else by the dialect's SQL statements (`read_session`, `set_session`): a Databricks SQL
warehouse, reached over DB-API, has no other way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, suppress
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .._engine.sql.dialects import Dialect
    from .._engine.sql.sessions import Current, Value


class _Database(Protocol):
    """The queries on one connection that the settings are pinned for (`_sql._Database`;
    named by its shape, so this module does not import the one that imports it)."""

    @property
    def connection(self) -> Any: ...

    @property
    def source(self) -> Any: ...

    @property
    def pins(self) -> dict[str, Value]: ...

    @property
    def dialect(self) -> Dialect | None: ...

    def cursor(self, sql: str) -> AbstractContextManager[Any]: ...

    def named(self, what: str) -> AbstractContextManager[None]: ...


class Settings(Protocol):
    """A session's settings, read and set."""

    def current(self, names: list[str]) -> dict[str, Current]:
        """The session's value of each of `names` it has (see `sessions.Current`)."""
        ...

    def apply(self, settings: Mapping[str, Value | None]) -> None:
        """Set each of `settings` (None: unset it, so the session inherits it again)."""
        ...


class Statements:
    """Settings read and set by the dialect's SQL statements, each on a cursor of
    `database`'s connection."""

    def __init__(self, database: _Database, dialect: Dialect) -> None:
        self.database, self.dialect = database, dialect

    def current(self, names: list[str]) -> dict[str, Current]:
        sql = self.dialect.read_session(names).sql(dialect=self.database.source.dialect)
        with self.database.cursor(sql) as cursor:
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        return self.dialect.current_session(rows)

    def apply(self, settings: Mapping[str, Value | None]) -> None:
        for statement in self.dialect.set_session(settings):
            with self.database.cursor(statement.sql(dialect=self.database.source.dialect)):
                pass


@contextmanager
def pinned(database: _Database) -> Iterator[None]:
    """The dialect's settings pinned on `database`'s connection where the session's value
    differs (where its cursors share one session), recorded in `database.pins` while the
    context runs; the session's own values put back when it ends. A failure to read or set
    them is named as a failed query's."""
    from .._engine.sql.sessions import pinning

    dialect = database.dialect
    if dialect is None or dialect.cursors_are_sessions or not dialect.session_settings:
        yield
        return
    named = partial(database.named, "the session's settings")
    settings = settings_of(database, dialect)
    with named():
        plan = pinning(dialect.session_settings, settings.current(list(dialect.session_settings)))
    try:
        with named():
            settings.apply(plan.pin)  # a failure midway still puts back what was set
        database.pins.update(plan.pin)
        yield
    finally:
        database.pins.clear()
        with suppress(Exception):  # a connection the failure closed has nothing to restore
            settings.apply(plan.restore)


def settings_of(database: _Database, dialect: Dialect) -> Settings:
    """The session's settings through the connection's own API where it has one (a
    SparkSession's `spark.conf`), else by the dialect's SQL statements."""
    own = getattr(database.connection, "settings", None)
    found: Settings | None = own(dialect) if own is not None else None
    return found or Statements(database, dialect)
