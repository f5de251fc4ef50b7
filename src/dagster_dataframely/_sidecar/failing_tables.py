"""Failing rows kept as a table in the checked table's database: `<table>__dy_failures` beside
it (or in the schema `keep_failing_rows=` names), written through the source's own connection.

The package writes only into a table it made (`ownership`): a table of that name it did not
make is never changed, not even widened; its own table made before the schema gained a
column is refused before any change. Otherwise one transaction replaces the asset's earlier
rows of the partitions the run checked (of one kind: rule rows, or a member's filter rows)
with this run's, selected in the database where every flag has an exact SQL form, by polars
and inserted as values otherwise. What cannot be kept raises `Unkept` (where, why, the fix),
which the keeper tells as a `FailingRowsWriteError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .._engine.failing_rows import (
    ASSET_KEY,
    Stamp,
    UntoldPartitions,
    flag_columns,
    kept_columns,
    ownership,
)
from ..errors import DagsterDataframelyError
from .collection_rules import FILTER_CHECK_PREFIX

if TYPE_CHECKING:
    import polars as pl
    from sqlglot import exp

    from .._engine.catalogue import Rule
    from .._engine.sql.backend import SQLTable
    from .._engine.sql.staging import Session

#: Words of a database's refusal to let the role create or write a table.
_REFUSALS = ("permission", "privilege", "read-only", "read only", "not authorized")


class Unkept(Exception):
    """The rows were not kept `where`: `why`, and the `fix`."""

    def __init__(self, where: str, why: str, fix: str) -> None:
        super().__init__(f"{where}: {why}")
        self.where, self.why, self.fix = where, why, fix


class Rows(Protocol):
    """The rows one keeping writes (see `failing_rows._Rows`)."""

    @property
    def columns(self) -> Sequence[str]: ...
    @property
    def shape(self) -> Sequence[Rule]: ...
    @property
    def failing(self) -> bool: ...
    @property
    def frame(self) -> Callable[[int], pl.LazyFrame]: ...
    @property
    def select(self) -> Callable[[int], exp.Select | None]: ...


@dataclass(frozen=True)
class InTable:
    """Where the rows were kept, how many, and `query(flags)`: the SQL reading this run's
    rows failing any of the check names `flags`."""

    address: str
    kept: int
    query: Callable[[Sequence[str]], str]


def keep_in_table(
    rows: Rows,
    stamp: Stamp,
    database: SQLTable,
    table: exp.Table,
    session: Session,
    *,
    schema: str | None,
    cap: int,
    removed: bool,
) -> InTable:
    """Keep at most `cap` of `rows` beside `table` (in `schema`, the setting's, if named),
    replacing the rows of their kind (`removed`: a member's filter rows) that the asset kept
    before in the partitions of `stamp`. Raises `Unkept`; `InvalidSourceError` for a schema
    name that does not parse; `UntoldPartitions` where a range's rows cannot be told."""
    from sqlglot import exp

    from .._engine.sql import failing_rows as sql

    dialect = database.dialect
    within = None
    if schema is not None:  # folded and quoted as the database has it
        from ..sources._names import parse_table

        within = parse_table(f"{schema}.t", dialect.name, where="keep_failing_rows (a schema)")
    target = sql.beside(table, dialect, within)
    address = target.sql(dialect=dialect.name)
    try:
        create = sql.create(database, target, rows.columns, rows.shape)
        try:
            session.execute(create.sql(dialect=dialect.name))
        except Exception:  # a concurrent run may have created it meanwhile
            session.rollback()
            session.execute(create.sql(dialect=dialect.name))
        found = set(session.run(sql.present(target).sql(dialect=dialect.name)).columns)
        owned = ownership(found)
        if owned is None:  # not the package's table: never changed, not even widened
            other = "another schema" if schema is not None else "a schema"
            elsewhere = sql.beside(table, dialect, exp.Table()).name
            raise Unkept(
                f"table {address}",
                "the table was not created by dagster-dataframely (a table of kept rows has "
                "the columns dy_run_id and dy_partition_key, and no dy_ column but "
                "dy_asset_key and the rules' flags), so it is left as it is",
                f"To keep the rows, set keep_failing_rows= to {other} "
                f'(keep_failing_rows="audit"), where they go to its table {elsewhere}.',
            )
        missing = [name for name in rows.columns if name not in found]
        if missing:  # the package's table, made before the schema gained a column
            raise Unkept(
                f"table {address}",
                f"the write was refused: the table has no column "
                f"{', '.join(map(repr, missing))}, which the schema gained since it was made",
                "Rename or drop the table (it holds only kept rows) to have it made again "
                "with the schema's columns on the next run, or set keep_failing_rows= to "
                "another schema.",
            )
        statements: list[exp.Expr] = []
        if owned == "unmarked":  # kept by a release before rows carried their asset key
            for alter in sql.widen(target, [ASSET_KEY], kind="VARCHAR"):
                session.execute(alter.sql(dialect=dialect.name))
            statements.append(sql.mark(target, stamp))
        flags = [flag for flag in flag_columns(rows.shape) if flag not in found]
        for alter in sql.widen(target, flags):
            session.execute(alter.sql(dialect=dialect.name))
        filters = sorted(f for f in found | set(flags) if f.startswith(FILTER_CHECK_PREFIX))
        kind = sql.kind(filters, removed=removed)
        # This run's rows of this kind replace the asset's earlier ones of its partitions.
        statements.append(sql.clear(target, stamp, kind))
        if rows.failing and cap > 0:
            select = rows.select(cap)
            names = [*rows.columns, *kept_columns(rows.columns, rows.shape)]
            if select is not None:
                statements.append(sql.insert(target, select, names))
            else:  # a failing rule runs in polars: so do the rows it selects
                frame = rows.frame(cap).collect(engine="streaming")
                statements += sql.values(target, frame, dialect)
        _transaction(session, [s.sql(dialect=dialect.name) for s in statements])
        counted = sql.counted(target, stamp, kind).sql(dialect=dialect.name)
        kept = int(session.run(counted)[0, 0])
    except (Unkept, UntoldPartitions):
        raise  # told as they are, not as the database's refusal
    except Exception as error:
        raise _refused(error, database, session, target, address) from error
    return InTable(
        address,
        kept,
        query=lambda flags: sql.query(target, stamp, flags).sql(dialect=dialect.name),
    )


def told(error: Exception) -> str:
    """What the database or the file system said: the driver's own error, where this
    package named it (a statement's failure is named as a rule's, which it is not here)."""
    cause = error.__cause__
    if isinstance(error, DagsterDataframelyError) and isinstance(cause, Exception):
        error = cause
    text = " ".join(str(getattr(error, "summary", None) or error).split())
    return f"{type(error).__name__}: {text[:500]}"


def _refused(
    error: Exception, database: SQLTable, session: Session, target: exp.Table, address: str
) -> Unkept:
    """A refused write, told: with the GRANTs the role needs where it was refused."""
    from sqlglot import exp

    from .._engine.sql import failing_rows as sql

    dialect = database.dialect
    role = None
    current = dialect.current_role()
    if current is not None:
        try:
            role = str(session.run(exp.select(current).sql(dialect=dialect.name))[0, 0])
        except Exception:
            role = None
    said = told(error)
    refused = any(word in said.lower() for word in _REFUSALS)
    if refused and role is not None:
        grants = "; ".join(g.sql(dialect=dialect.name) for g in sql.grant(dialect, target, role))
        fix = f"Grant role {role!r} what it needs ({grants}), or"
    elif refused:
        fix = "Open the database writable (a DuckDB resource without read_only), or"
    else:
        fix = "If the table was made for another schema, drop it to have it made again, or"
    return Unkept(
        f"table {address}{'' if role is None else f' as role {role!r}'}",
        f"the database refused the write: {said}",
        f"{fix} set keep_failing_rows= to a schema it may write in.",
    )


def _transaction(session: Session, statements: Sequence[str]) -> None:
    """`statements` in one transaction: all of them, or (rolled back) none."""
    from sqlglot import exp

    dialect = session.dialect.name
    session.execute(exp.Transaction().sql(dialect=dialect))
    try:
        for statement in statements:
            session.execute(statement)
    except Exception:
        with suppress(Exception):  # DuckDB's cursor holds the transaction open until told
            session.execute(exp.Rollback().sql(dialect=dialect))
        session.rollback()  # the connection's own, which pins the session's settings again
        raise
    session.execute(exp.Commit().sql(dialect=dialect))
