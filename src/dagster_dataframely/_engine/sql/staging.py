"""Relations a run reads several times, staged once as temporary tables of its database.

A collection's filter's kept keys are read by the count query and the sample queries of
every member it removes rows from; as a subquery each of them works the keys out again (a
scan of the members the filter reads, a join). A `Session` is one database connection on
which `stage` creates a temporary table of a relation's rows once, and the later queries
read that table. Temporary tables belong to the connection that made them, so every query
that reads one runs through the session's `run`; they are dropped when the session ends.
A database that refuses them (a read-only transaction, a role without the `TEMPORARY`
privilege) is told once: the session then hands each relation back unstaged, to be worked
out in every query as before, with the same rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import count

import polars as pl
from sqlglot import exp

from .dialects import Dialect

_STAGED = "__dy_staged"


@dataclass
class Session:
    """Queries on one connection: `run` returns a query's rows, `execute` runs a statement;
    `log` tells why staging was given up. `rollback` leaves the connection usable after a
    refused statement (PostgreSQL aborts the transaction)."""

    dialect: Dialect
    run: Callable[[str], pl.DataFrame]
    execute: Callable[[str], None]
    log: Callable[[str], None]
    rollback: Callable[[], None] = lambda: None
    staged: list[str] = field(default_factory=list)
    refused: bool = False
    _names: Iterator[int] = field(default_factory=count)

    def stage(self, select: exp.Select) -> exp.Select:
        """A `SELECT *` of a temporary table holding the rows of `select`, or `select` itself
        where the database refuses temporary tables."""
        if self.refused or not self.dialect.temporary_tables:
            return select
        name = f"{_STAGED}_{next(self._names)}"
        created = exp.Create(
            this=exp.to_table(name),
            kind="TABLE",
            expression=select.copy(),
            properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
        )
        try:
            self.execute(created.sql(dialect=self.dialect.name))
        except Exception as error:
            self.rollback()
            self.refused = True
            self.log(
                "The database refused a temporary table of the filters' kept keys "
                f"({type(error).__name__}: {str(error).strip()[:300]}); every query works "
                "them out again instead. Grant the role TEMPORARY on the database to let "
                "them be staged once."
            )
            return select
        self.staged.append(name)
        return exp.select(exp.Star()).from_(exp.to_table(name))

    def drop(self) -> None:
        """Drop the session's temporary tables (a connection that lives on keeps them)."""
        for name in self.staged:
            try:
                self.execute(_drop(exp.to_table(name)).sql(dialect=self.dialect.name))
            except Exception:
                self.rollback()
        self.staged.clear()


def _drop(table: exp.Table) -> exp.Drop:
    """`DROP TABLE IF EXISTS table` (sqlglot 30 lists the tables, earlier releases hold the
    one table as `this`)."""
    if "tables" in exp.Drop.arg_types:
        return exp.Drop(tables=[table], kind="TABLE", exists=True)
    return exp.Drop(this=table, kind="TABLE", exists=True)


@contextmanager
def dropping(session: Session) -> Iterator[Session]:
    """`session`, its temporary tables dropped when the block ends."""
    try:
        yield session
    finally:
        session.drop()
