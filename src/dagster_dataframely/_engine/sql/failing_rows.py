"""Failing rows kept in the database: the statements, as sqlglot trees in the table's dialect.

The rows never leave the database: `CREATE TABLE IF NOT EXISTS ... AS SELECT ... LIMIT 0`
gives the table the kept shape (see `..failing_rows`), then one transaction deletes the
asset's earlier rows of the partitions the run checked and `INSERT ... SELECT`s this run's, at
most the cap, each row under its own partition key. A row rule's
flag is its pushed-down predicate, negated (`NULL` passes); a `unique` or primary-key rule's is
its key among the few repeated keys listed, or `COUNT(*) OVER (PARTITION BY key) > 1`. A
failing rule without an exact SQL form makes the whole selection polars' (`failing_frame`),
whose rows are then inserted as literal `VALUES`.
A collection member's table also holds the rows its filters removed (`removed_select`: its
valid rows, a filter's flag true where that filter removes the row); each kind of row
(`kind`) is replaced only by the writer of that kind.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import dataframely as dy
import polars as pl
from sqlglot import exp

from ..catalogue import Rule
from ..evaluate import Evaluation
from ..failing_rows import (
    ASSET_KEY,
    PARTITION_KEY,
    RUN_ID,
    Removed,
    Stamp,
    UntoldPartitions,
    failing_rules,
    kept_columns,
)
from .backend import SQLTable, compile_rules
from .dialects import Dialect
from .filters import removed_rows
from .literals import literal
from .repeated import LISTED_ROWS, held, listed

_KEPT = "__dy_kept"
_REMOVED = "__dy_removed"
_SUFFIX = "__dy_failures"
#: Rows of one `INSERT ... VALUES` of rows polars selected.
_VALUES_ROWS = 500


def beside(table: exp.Table, dialect: Dialect, within: exp.Table | None = None) -> exp.Table:
    """The failures table of `table`: `<table>__dy_failures` (the suffix folded as the
    dialect folds a bare name, `ORDERS__DY_FAILURES` in Snowflake) in `table`'s schema; or,
    in the schema (and database) of `within`, as dbt keeps its test failures in an audit
    schema, named by `table`'s whole name (`sales__orders__dy_failures`), so that one setting
    serves every asset of a `with_schemas` or a collection, `a.orders` and `b.orders` alike."""
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

    suffix = normalize_identifiers(exp.to_identifier(_SUFFIX), dialect=dialect.name).name
    found = table.copy()
    name = table.name
    if within is not None:
        name = "__".join(part for part in (table.catalog, table.db, table.name) if part)
        for part in ("db", "catalog"):
            value = within.args.get(part)
            found.set(part, None if value is None else value.copy())
    found.set("this", exp.to_identifier(name + suffix, quoted=True))
    return found


def _text(value: str | None) -> exp.Expr:
    string = exp.DataType.build("VARCHAR")
    return exp.cast(exp.Null() if value is None else exp.Literal.string(value), string)


def _boolean(value: bool | None) -> exp.Expr:
    return exp.cast(exp.Null() if value is None else exp.Boolean(this=value), "BOOLEAN")


def _shaped(
    columns: Sequence[str], catalogue: Sequence[Rule], flags: Mapping[str, exp.Expr], stamp: Stamp
) -> list[exp.Expr]:
    selected: list[exp.Expr] = [exp.column(name, quoted=True) for name in columns]
    for name in kept_columns(columns, catalogue):
        if name == ASSET_KEY:
            value = _text(stamp.asset_key)
        elif name == RUN_ID:
            value = _text(stamp.run_id)
        elif name == PARTITION_KEY:
            value = _partition_key(stamp)
        else:
            value = flags.get(name, _boolean(None))
        selected.append(exp.alias_(value, name, quoted=True))
    return selected


def _partition_key(stamp: Stamp) -> exp.Expr:
    """The rows' partition key: the run's one, or over several each row's own."""
    if len(stamp.partitions) < 2:
        return _text(stamp.partition_key)
    if stamp.row_key is None or stamp.row_key.sql is None:
        raise UntoldPartitions(stamp.untold)
    return exp.cast(stamp.row_key.sql.copy(), exp.DataType.build("VARCHAR"))


def create(
    table: SQLTable, target: exp.Table, columns: Sequence[str], catalogue: Sequence[Rule]
) -> exp.Create:
    """`CREATE TABLE IF NOT EXISTS target AS` the kept shape, no rows."""
    shape = exp.select(*_shaped(columns, catalogue, {}, Stamp("", ""))).from_(table.rows())
    return exp.Create(this=target, kind="TABLE", exists=True, expression=shape.limit(0))


def present(target: exp.Table) -> exp.Select:
    """No rows of `target`: its column names, to find the flags of rules added since."""
    return exp.select(exp.Star()).from_(target).limit(0)


def widen(target: exp.Table, flags: Sequence[str], kind: str = "BOOLEAN") -> list[exp.Alter]:
    """Add the columns `flags` (Boolean: rules the schema gained since the table was made)."""
    return [
        exp.Alter(
            this=target.copy(),
            kind="TABLE",
            actions=[
                exp.ColumnDef(
                    this=exp.to_identifier(flag, quoted=True),
                    kind=exp.DataType.build(kind),
                    exists=True,
                )
            ],
        )
        for flag in flags
    ]


def mark(target: exp.Table, stamp: Stamp) -> exp.Update:
    """Give the rows a table kept before they carried their asset key (`ASSET_KEY`, just
    added) the key of the asset now keeping rows in it: the asset beside whose table it is."""
    asset = exp.column(ASSET_KEY, quoted=True)
    return exp.Update(
        this=target.copy(),
        expressions=[exp.EQ(this=asset.copy(), expression=exp.Literal.string(stamp.asset_key))],
        where=exp.Where(this=exp.Is(this=asset, expression=exp.Null())),
    )


def failing_select(
    table: SQLTable,
    schema: type[dy.Schema],
    dtypes: Mapping[str, pl.DataType],
    catalogue: Sequence[Rule],
    evaluation: Evaluation,
    stamp: Stamp,
    cap: int,
) -> exp.Select | None:
    """The first `cap` rows failing a rule of `evaluation`, in the kept shape; None when a
    failing rule has no exact SQL form here (polars selects them then)."""
    failing = failing_rules(catalogue, evaluation)
    compiled = compile_rules(failing, dtypes, table.dialect, facts=table.facts)
    if compiled.fallbacks:
        return None
    flags: dict[str, exp.Expr] = {}
    for rule in failing:
        if rule.distinct_over is None:
            failed = exp.not_(exp.paren(compiled.conditions[rule.name]))
            flags[rule.check_name] = exp.Coalesce(this=failed, expressions=[exp.false()])
        else:
            flags[rule.check_name] = _repeated(table, rule, evaluation.failed[rule.name], dtypes)
    return _kept(table.rows(), schema.column_names(), catalogue, flags, evaluation, stamp, cap)


def _repeated(
    table: SQLTable, rule: Rule, failed: int, dtypes: Mapping[str, pl.DataType]
) -> exp.Expr:
    """On a row: its key (a `unique` or primary-key rule's) is held by another row. A few
    repeated keys (as `failed` rows tell; the samples fetched them already) are listed, so
    the table is not partitioned by its key again; else `COUNT(*) OVER (PARTITION BY key)`."""
    keys = list(rule.distinct_over or ())
    columns = [exp.column(key, quoted=True) for key in keys]
    found = table.repeated_keys(keys) if failed <= LISTED_ROWS else None
    keys_listed = None if found is None else listed(found, keys, dtypes, table.dialect.name)
    if keys_listed is not None:
        return exp.Coalesce(this=held(columns, keys_listed), expressions=[exp.false()])
    window = exp.Window(this=exp.Count(this=exp.Star()), partition_by=columns)
    return exp.GT(this=window, expression=exp.Literal.number(1))


def removed_select(
    removed: Removed, columns: Sequence[str], catalogue: Sequence[Rule], stamp: Stamp, cap: int
) -> exp.Select:
    """The first `cap` valid rows of a collection member that a failing filter of `removed`
    removes, in the kept shape of `catalogue` (the member's rules, which these rows pass,
    then its filters)."""
    assert removed.rows is not None  # a member the database holds
    failing = failing_rules(removed.filters, removed.evaluation)
    rows = removed_rows(removed.rows, failing, removed.matches, removed.key)
    flags = {rule.check_name: exp.column(rule.check_name, quoted=True) for rule in failing}
    passed = removed.passed(catalogue)
    return _kept(rows.subquery(_REMOVED), columns, catalogue, flags, passed, stamp, cap)


def _kept(
    rows: exp.Expr,
    columns: Sequence[str],
    catalogue: Sequence[Rule],
    flags: Mapping[str, exp.Expr],
    evaluation: Evaluation,
    stamp: Stamp,
    cap: int,
) -> exp.Select:
    """The first `cap` of `rows` that a failing rule of `evaluation` flags (`flags`, by
    check name), in the kept shape: `false` for the other rules `evaluation` ran."""
    failing = failing_rules(catalogue, evaluation)
    flags = {
        **{
            rule.check_name: _boolean(False)
            for rule in catalogue
            if rule.name in evaluation.failed and rule.check_name not in flags
        },
        **flags,
    }
    shaped = exp.select(*_shaped(columns, catalogue, flags, stamp)).from_(rows)
    any_failing = exp.or_(*(exp.column(r.check_name, quoted=True) for r in failing))
    return (
        exp.select(exp.Star())
        .from_(shaped.subquery(exp.to_identifier(_KEPT, quoted=True)))
        .where(any_failing)
        .limit(cap)
    )


def kind(filters: Sequence[str], *, removed: bool) -> exp.Expr | None:
    """Which of a collection member's kept rows: those its filters removed (`removed`: a
    filter flag of `filters` set), or those failing its rules (every filter flag null).
    None: every row (a table without filter flags holds rule failures only)."""
    if not filters:
        return exp.false() if removed else None
    flags = [exp.column(flag, quoted=True) for flag in filters]
    if removed:
        return exp.or_(*(exp.not_(exp.Is(this=f, expression=exp.Null())) for f in flags))
    return exp.and_(*(exp.Is(this=f, expression=exp.Null()) for f in flags))


def _of_run(stamp: Stamp, *, run: bool, of: exp.Expr | None = None) -> exp.Expr:
    """The rows of the run's asset and partitions (`run`: kept by this run)."""
    partition = exp.column(PARTITION_KEY, quoted=True)
    keys = [exp.Literal.string(key) for key in stamp.partitions]
    within: exp.Expr = (
        exp.In(this=partition, expressions=keys)
        if keys
        else exp.Is(this=partition, expression=exp.Null())
    )
    asset = exp.EQ(
        this=exp.column(ASSET_KEY, quoted=True), expression=exp.Literal.string(stamp.asset_key)
    )
    condition = exp.and_(asset, within)
    if run:
        run_id = exp.EQ(
            this=exp.column(RUN_ID, quoted=True), expression=exp.Literal.string(stamp.run_id)
        )
        condition = exp.and_(run_id, condition)
    return condition if of is None else exp.and_(condition, exp.paren(of))


def clear(target: exp.Table, stamp: Stamp, of: exp.Expr | None = None) -> exp.Delete:
    """Delete the asset's earlier rows of every partition the run checked (every earlier row
    of the asset, unpartitioned); `of`: only those of one kind (`kind`)."""
    return exp.delete(target, where=_of_run(stamp, run=False, of=of))


def insert(target: exp.Table, select: exp.Query, names: Sequence[str]) -> exp.Insert:
    """`INSERT INTO target (names) select`."""
    return exp.insert(select, target, columns=[exp.to_identifier(n, quoted=True) for n in names])


def counted(target: exp.Table, stamp: Stamp, of: exp.Expr | None = None) -> exp.Select:
    """How many rows (of the kind `of`) the run kept."""
    return (
        exp.select(exp.alias_(exp.Count(this=exp.Star()), "n"))
        .from_(target)
        .where(_of_run(stamp, run=True, of=of))
    )


def query(target: exp.Table, stamp: Stamp, flags: Sequence[str]) -> exp.Select:
    """The run's kept rows failing any of the rules whose check names are `flags`."""
    failing = exp.or_(*(exp.column(flag, quoted=True) for flag in flags))
    return exp.select(exp.Star()).from_(target).where(exp.and_(_of_run(stamp, run=True), failing))


def values(target: exp.Table, frame: pl.DataFrame, dialect: Dialect) -> Iterator[exp.Insert]:
    """`frame`'s rows as `INSERT ... VALUES` statements of at most `_VALUES_ROWS` rows; a
    value without an exact literal raises `ValueError` naming its column and dtype."""
    names = frame.columns
    for start in range(0, frame.height, _VALUES_ROWS):
        chunk = frame.slice(start, _VALUES_ROWS)
        rows = [
            exp.tuple_(
                *(
                    _value(value, frame.schema[name], name, dialect)
                    for name, value in zip(names, row, strict=True)
                )
            )
            for row in chunk.iter_rows()
        ]
        yield insert(target, exp.values(rows), names)  # type: ignore[arg-type]


def _value(value: Any, dtype: pl.DataType, column: str, dialect: Dialect) -> exp.Expr:
    """`value` as a literal of its column's type; where there is none (a zoned timestamp, a
    decimal), as its text, which the insert casts to the target column's type."""
    if value is None:
        return exp.Null()
    found = literal(value, dtype, dialect.name)
    if found is not None:
        return found
    if dtype.is_nested() or dtype == pl.Binary:
        raise ValueError(f"column {column!r} ({dtype}) has no SQL literal here")
    return exp.Literal.string(str(value))


def grant(dialect: Dialect, target: exp.Table, role: str) -> list[exp.Grant]:
    """The grants `role` needs to keep rows in `target`: create tables in its schema, and
    write and read the table."""
    principal = exp.GrantPrincipal(
        this=exp.to_identifier(role, quoted=True), kind=dialect.grant_role_kind
    )
    schema = exp.Table(
        this=target.args.get("db") or exp.to_identifier("public"),
        db=target.args.get("catalog"),
    )
    privileges = (dialect.create_privilege,)
    return [
        exp.Grant(
            privileges=[exp.GrantPrivilege(this=exp.var(p)) for p in privileges],
            kind="SCHEMA",
            securable=schema,
            principals=[principal.copy()],
        ),
        exp.Grant(
            privileges=[
                exp.GrantPrivilege(this=exp.var(p)) for p in ("SELECT", "INSERT", "DELETE")
            ],
            kind="TABLE",
            securable=target.copy(),
            principals=[principal.copy()],
        ),
    ]
