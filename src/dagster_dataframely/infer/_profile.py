"""Profiles of a table's columns: nulls, distinct values, range, a float's NaN and infinities,
a string's lengths and the few values of a text column, counted in one aggregate query inside
the database (or one polars pass over a file); the dialect writes NaN and infinity tests and
byte lengths as it does for rules.

A profile only ever becomes proposals (`_proposals`): a rule learned from today's data is an
assumption, for a person to adopt or not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl
from sqlglot import exp

from .._engine.sql.columns import TableFacts
from .._engine.sql.dialects import DIALECTS
from .._engine.sql.exactness import NotExact
from ..errors import DagsterDataframelyError, InvalidSettingError, SourceReadError
from ..sources._names import dialect_name
from ._columns import InferredColumn, Profile
from ._database import Database, is_text

#: By default, a text column with at most this many distinct values is proposed `is_in`.
IS_IN_LIMIT = 10
_ROWS = "__dy_rows"


def is_in_limit_of(value: object, caller: str) -> int:
    """`value` as the `is_in` value limit: a whole number of at least 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidSettingError(
            f"{caller} got is_in_limit={value!r}: it is the most distinct values a text column "
            "may have to be proposed `is_in` them. Give a whole number of at least 1 (default "
            f"{IS_IN_LIMIT}; --is-in-limit on the command line)."
        )
    return value


def profile_table(
    db: Database,
    table: exp.Table,
    columns: Sequence[InferredColumn],
    facts: TableFacts,
    *,
    is_in_limit: int,
) -> dict[str, Profile]:
    """Profiles of the columns of a database table (`profile_sql` over all its rows)."""
    rows = exp.select(exp.Star()).from_(table)
    try:
        return profile_sql(rows, columns, facts, db.dialect, db.run, is_in_limit=is_in_limit)
    except DagsterDataframelyError as error:
        where = f"{dialect_name(db.dialect)} table {table.sql(dialect=db.dialect)}"
        reason = " ".join(str(error.__cause__ or error).split())[:300]
        raise SourceReadError(
            f"Cannot profile {where}: the database refused the profile query ({reason}). "
            "Infer without profile=True (--profile) for the schema the table declares, "
            "and report the database's message to dagster-dataframely."
        ) from error


def _counted(dtype: pl.DataType) -> bool:
    """Whether distinct values are counted: not floats (NaN and -0.0 count otherwise in
    SQL), not nested types."""
    return not (dtype.is_float() or dtype.is_nested() or isinstance(dtype, pl.Object))


def _ranged(dtype: pl.DataType) -> bool:
    return dtype.is_integer() or isinstance(dtype, pl.Decimal)


def _texts(dtype: pl.DataType) -> bool:
    return isinstance(dtype, (pl.String, pl.Categorical, pl.Enum))


def profile_sql(
    relation: exp.Select,
    columns: Sequence[InferredColumn],
    facts: TableFacts,
    dialect: str,
    run: Callable[[str], pl.DataFrame],
    *,
    is_in_limit: int,
) -> dict[str, Profile]:
    """Profiles of `columns` of the rows `relation` selects: one aggregate query, then one
    bounded query per text column with at most `is_in_limit` values. Text whose collation
    cannot be read by bytes is not counted (its distinct values would not be polars')."""
    sql_dialect = DIALECTS[dialect]
    rows = facts.collated(relation, sql_dialect.binary_collation)
    readable = [c for c in columns if c.dtype is not None and c.unreadable is None]
    dtypes = {c.name: c.dtype for c in readable if c.dtype is not None}
    aggregates: list[exp.Expr] = [exp.alias_(exp.Count(this=exp.Star()), "rows", quoted=True)]
    for index, column in enumerate(readable):
        assert column.dtype is not None
        value = exp.column(column.name, quoted=True)
        aggregates.append(exp.alias_(exp.Count(this=value.copy()), f"n{index}", quoted=True))
        declined = facts.declined([column.name], dtypes, sql_dialect.binary_collation)
        if _counted(column.dtype) and declined is None:
            different = exp.Count(this=exp.Distinct(expressions=[value.copy()]))
            aggregates.append(exp.alias_(different, f"d{index}", quoted=True))
        if _ranged(column.dtype):
            aggregates.append(exp.alias_(exp.Min(this=value.copy()), f"lo{index}", quoted=True))
            aggregates.append(exp.alias_(exp.Max(this=value.copy()), f"hi{index}", quoted=True))
        # A string's length where its SQL type is text (an enum type has no length).
        texts = column.dtype == pl.String and is_text(column.declared, dialect)
        length = sql_dialect.byte_length(value.copy()) if texts else None
        if length is not None:
            aggregates.append(exp.alias_(exp.Min(this=length.copy()), f"short{index}", quoted=True))
            aggregates.append(exp.alias_(exp.Max(this=length), f"long{index}", quoted=True))
        if column.dtype.is_float():
            try:
                nan = sql_dialect.count_where(sql_dialect.is_nan(value.copy()))
                inf = sql_dialect.count_where(sql_dialect.is_infinite(value.copy()))
            except NotExact:  # the database's NaN is not known to be polars' (Redshift)
                continue
            aggregates += [exp.alias_(nan, f"nan{index}", quoted=True)]
            aggregates += [exp.alias_(inf, f"inf{index}", quoted=True)]
    query = exp.select(*aggregates).from_(rows.subquery(_ROWS))
    counts = run(query.sql(dialect=dialect)).row(0, named=True)
    total = int(counts["rows"])
    profiles: dict[str, Profile] = {}
    for index, column in enumerate(readable):
        assert column.dtype is not None
        distinct = counts.get(f"d{index}")
        values = None
        if _texts(column.dtype) and distinct is not None and 0 < distinct <= is_in_limit:
            value = exp.column(column.name, quoted=True)
            listed = (
                exp.select(value.copy())
                .distinct()
                .from_(rows.subquery(_ROWS))
                .where(exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())))
                .order_by(value.copy())
                .limit(is_in_limit + 1)
            )
            values = tuple(str(v) for v in run(listed.sql(dialect=dialect)).to_series())
        profiles[column.name] = Profile(
            rows=total,
            nulls=total - int(counts[f"n{index}"]),
            distinct=None if distinct is None else int(distinct),
            minimum=counts.get(f"lo{index}"),
            maximum=counts.get(f"hi{index}"),
            values=values,
            nans=counts.get(f"nan{index}"),
            infinities=counts.get(f"inf{index}"),
            shortest=_count(counts.get(f"short{index}")),
            longest=_count(counts.get(f"long{index}")),
        )
    return profiles


def _count(value: object) -> int | None:
    return value if isinstance(value, int) else None


def profile_frame(
    frame: pl.LazyFrame, columns: Sequence[InferredColumn], *, is_in_limit: int
) -> dict[str, Profile]:
    """Profiles of `columns` of `frame`, in one polars pass; the values of a text column
    with at most `is_in_limit` of them."""
    readable = [c for c in columns if c.dtype is not None and c.unreadable is None]
    exprs: list[pl.Expr] = [pl.len().alias("rows")]
    for index, column in enumerate(readable):
        assert column.dtype is not None
        value = pl.col(column.name)
        exprs.append(value.null_count().alias(f"n{index}"))
        if _counted(column.dtype):
            exprs.append(value.drop_nulls().n_unique().alias(f"d{index}"))
        if _ranged(column.dtype):
            exprs += [value.min().alias(f"lo{index}"), value.max().alias(f"hi{index}")]
        if column.dtype.is_float():
            exprs.append(value.is_nan().sum().alias(f"nan{index}"))
            exprs.append(value.is_infinite().sum().alias(f"inf{index}"))
        if column.dtype == pl.String:
            exprs.append(value.str.len_bytes().min().alias(f"short{index}"))
            exprs.append(value.str.len_bytes().max().alias(f"long{index}"))
        if _texts(column.dtype):
            few = value.drop_nulls().cast(pl.String).unique().sort().head(is_in_limit + 1)
            exprs.append(few.implode().alias(f"v{index}"))
    counts: Mapping[str, object] = frame.select(exprs).collect().row(0, named=True)
    total = int(counts["rows"])  # type: ignore[call-overload]
    profiles: dict[str, Profile] = {}
    for index, column in enumerate(readable):
        distinct = counts.get(f"d{index}")
        listed = counts.get(f"v{index}")
        listable = isinstance(distinct, int) and 0 < distinct <= is_in_limit
        profiles[column.name] = Profile(
            rows=total,
            nulls=int(counts[f"n{index}"]),  # type: ignore[call-overload]
            distinct=distinct if isinstance(distinct, int) else None,
            minimum=counts.get(f"lo{index}"),
            maximum=counts.get(f"hi{index}"),
            values=tuple(listed) if listable and isinstance(listed, list) else None,
            nans=_count(counts.get(f"nan{index}")),
            infinities=_count(counts.get(f"inf{index}")),
            shortest=_count(counts.get(f"short{index}")),
            longest=_count(counts.get(f"long{index}")),
        )
    return profiles
