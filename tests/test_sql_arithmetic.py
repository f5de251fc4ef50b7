"""Arithmetic in custom rules counts exactly what polars counts, in every database.

polars adds, subtracts and multiplies in the dtype its supertype rules give and wraps on
overflow (`Int16 + 100` wraps at 32767); DuckDB and PostgreSQL widen or raise. A rule whose
arithmetic may wrap, or may overflow where the database raises, falls back to polars with its
reason; the rest runs in SQL. Generated rules over every integer width and a float column,
with values and literals at the type limits, go through a DuckDB file and a real PostgreSQL
server (and fakesnow: test_sql_snowflake_arithmetic.py) and must count what `Schema.filter`
counts, without a failed step.
"""

# No `from __future__ import annotations`: Dataframely reads the collection's annotations.

import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dataframely as dy
import duckdb
import polars as pl
import psycopg
import pytest
from dagster_duckdb import DuckDBResource
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from postgres import PostgresServer
from sqlglot import exp
from support import evaluations, logs
from test_collection_pushdown import (
    _duckdb_file,
    _failed,
    _filter_engines,
    _materialize,
    _outcomes,
    dataframely_counts,
)
from test_pushdown import run_payments_checks
from test_sql_source_parity import _in_postgres as in_postgres

import dagster_dataframely as dd
from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.sql.arithmetic import integer_range
from dagster_dataframely._engine.sql.backend import SQLTable, compile_rules
from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely.sources._sql import _Database
from dagster_dataframely.sources._sql_query import relation

#: The generated columns: every integer width, and a float taking every value.
COLUMNS: dict[str, Callable[[], dy.Column]] = {
    "i8": lambda: dy.Int8(nullable=True),
    "i16": lambda: dy.Int16(nullable=True),
    "i32": lambda: dy.Int32(nullable=True),
    "i64": lambda: dy.Int64(nullable=True),
    "u8": lambda: dy.UInt8(nullable=True),
    "u16": lambda: dy.UInt16(nullable=True),
    "u32": lambda: dy.UInt32(nullable=True),
    "u64": lambda: dy.UInt64(nullable=True),
    "j64": lambda: dy.Int64(nullable=True),
    "f64": lambda: dy.Float64(nullable=True, allow_nan=True, allow_inf=True),
}
DTYPES = {name: column().dtype for name, column in COLUMNS.items()}
#: The columns a PostgreSQL table holds.
POSTGRES = {"i16": "smallint", "i32": "integer", "i64": "bigint", "f64": "double precision"}


def _schema(columns: Any, rule: pl.Expr) -> type[dy.Schema]:
    """A schema of nullable `columns` and one custom rule `arith`."""
    attributes: dict[str, Any] = {name: COLUMNS[name]() for name in columns}
    attributes["arith"] = dy.rule()(lambda cls: rule)
    return type("Arithmetic", (dy.Schema,), attributes)


def _engine(rule: pl.Expr, dialect: str, **dtypes: pl.DataType) -> str:
    """Where the rule `rule` over columns of `dtypes` runs for `dialect`: the dialect, or
    `polars (reason)`."""
    schema = _schema((), rule)
    compiled = compile_rules(rules(schema), dtypes, DIALECTS[dialect])
    return compiled.engines(DIALECTS[dialect])["arith"]


@pytest.mark.parametrize(
    ("rule", "dtypes", "reason"),
    [
        (pl.col("a") + 100 > 0, {"a": pl.Int16()}, "integer arithmetic may wrap: Int16 + 100"),
        (pl.col("a") * 2 > 0, {"a": pl.Int64()}, "integer arithmetic may wrap: Int64 * 2"),
        (pl.col("a") - 1 < 9, {"a": pl.UInt8()}, "integer arithmetic may wrap: UInt8 - 1"),
        (pl.col("a") - pl.col("b") > 0, {"a": pl.Int8(), "b": pl.Int64()},
         "integer arithmetic may wrap: Int8 - Int64"),
        (-pl.col("a") > 0, {"a": pl.Int32()}, "integer arithmetic may wrap: -Int32"),
        (pl.col("a").abs() > 0, {"a": pl.Int8()}, "integer arithmetic may wrap: abs Int8"),
        # A string's length is a UInt32 in polars: a short one minus 5 wraps to ~4 billion.
        (pl.col("s").str.len_bytes() - 5 > 0, {"s": pl.String()},
         "integer arithmetic may wrap: UInt32 - 5"),
        # The inner sum is proven; the product of two of them may leave the Int32 polars gives.
        ((pl.col("a") + 100_000) * (pl.col("a") + 100_000) > 0, {"a": pl.Int16()},
         "integer arithmetic may wrap: Int32 * Int32"),
    ],
)  # fmt: skip
def test_arithmetic_that_may_wrap_in_polars_falls_back_with_its_reason(
    rule: pl.Expr, dtypes: dict[str, pl.DataType], reason: str
) -> None:
    for dialect in DIALECTS:
        assert _engine(rule, dialect, **dtypes) == f"polars ({reason})"


@pytest.mark.parametrize(
    ("rule", "dtypes", "sql"),
    [
        # A literal too wide for the column widens polars' dtype: Int16 + 100_000 is an Int32.
        (pl.col("a") + 100_000 > 100_001, {"a": pl.Int16()},
         '(CAST("a" AS BIGINT) + 100000) > 100001'),
        (pl.col("a") + pl.col("b") > 0, {"a": pl.Int8(), "b": pl.UInt8()},
         '(CAST("a" AS BIGINT) + CAST("b" AS BIGINT)) > 0'),
        ((pl.col("a") + 100_000) * pl.col("b") > 0, {"a": pl.Int8(), "b": pl.Int8()},
         '((CAST("a" AS BIGINT) + 100000) * CAST("b" AS BIGINT)) > 0'),
        ((pl.col("a") - 100_000).abs() > -(pl.col("a") + 100_000), {"a": pl.Int16()},
         'ABS((CAST("a" AS BIGINT) - 100000)) > (-(CAST("a" AS BIGINT) + 100000))'),
    ],
)  # fmt: skip
def test_arithmetic_that_cannot_wrap_runs_in_sql_on_64_bit_operands(
    rule: pl.Expr, dtypes: dict[str, pl.DataType], sql: str
) -> None:
    # The operands are widened: PostgreSQL's smallint + smallint, DuckDB's INT16 sum, raise.
    schema = _schema((), rule)
    compiled = compile_rules(rules(schema), dtypes, DIALECTS["postgres"])
    assert compiled.fallbacks == {}
    assert compiled.conditions["arith"].sql(dialect="duckdb") == sql


def test_float_arithmetic_falls_back_where_the_database_raises_on_overflow() -> None:
    dtypes = {"f": pl.Float64(), "n": pl.Int64()}
    expected = [
        (pl.col("f") * 2 > 1, "float arithmetic may overflow in {}: Float64 * 2"),
        (pl.col("f") * 0.5 > 1, "float product may underflow in {}: Float64 * 0.5"),
        (pl.col("f") + pl.col("f") > 1, "float arithmetic may overflow in {}: Float64 + Float64"),
    ]
    for rule, reason in expected:
        assert _engine(rule, "duckdb", **dtypes) == "duckdb"  # inf and 0, as polars gives
        for dialect in ("postgres", "snowflake"):
            assert _engine(rule, dialect, **dtypes) == f"polars ({reason.format(dialect)})"
    # A sum that stays finite, and an integer times a float (no product of it is subnormal).
    for rule in (pl.col("f") + 1.5 > 1, pl.col("n") * 1.5 > 1, -pl.col("f") > 1):
        assert _engine(rule, "postgres", **dtypes) == "postgres"


def test_the_float_overflow_flag_is_what_duckdb_and_postgresql_do(
    postgres: PostgresServer,
) -> None:
    product = exp.select(
        exp.Mul(
            this=exp.cast(exp.Literal.number("1e308"), exp.DataType.build("DOUBLE")),
            expression=exp.Literal.number(10),
        )
    )
    assert DIALECTS["duckdb"].float_overflow_raises is False
    assert duckdb.execute(product.sql(dialect="duckdb")).fetchone() == (math.inf,)
    assert DIALECTS["postgres"].float_overflow_raises is True
    with postgres.connect() as connection, pytest.raises(psycopg.errors.NumericValueOutOfRange):
        connection.execute(product.sql(dialect="postgres"))


# ------------------------------ the differential property ------------------------------- #


def _near_limits(dtype: pl.DataType) -> list[float | None]:
    if dtype.is_float():
        return FLOATS
    low, high = integer_range(dtype)
    return [None, *sorted({low, low + 1, max(low, -1), 0, 1, 2, 100, high - 1, high})]


#: Floats at the limits: the largest, the smallest subnormal, ±inf, NaN, -0.0.
FLOATS = [None, 0.0, -0.0, 1.0, -1.5, sys.float_info.max, -sys.float_info.max, 5e-324, 1e-300,
          math.inf, -math.inf, math.nan]  # fmt: skip


#: Literals that fit a narrow column's dtype (polars keeps it, and may wrap) and ones that
#: widen it (`Int16 + 100_000` is an Int32: proven, pushed down), up to the Int64 limits.
LITERALS = [0, 1, -1, 2, 100, 127, 128, 255, 1000, 32_767, 32_768, 100_000, -100_000, 2**31,
            -(2**31) - 1, 2**32, 2**40, 2**62, 2**63 - 1, -(2**63),
            0.5, 1.5, -2.0, 1e308, 5e-324, 1e-300]  # fmt: skip


#: A generated rule as plain data (hypothesis shows it when a case fails): `(comparison,
#: tree, limit)`, a tree being `("col", name)`, `("lit", value)`, `("neg" | "abs", name)` or
#: `(operator, tree, tree)`.
Tree = tuple[Any, ...]
_OPERATORS: dict[str, Callable[[pl.Expr, Any], pl.Expr]] = {
    "+": pl.Expr.__add__,
    "-": pl.Expr.__sub__,
    "*": pl.Expr.__mul__,
    ">": pl.Expr.__gt__,
    "<=": pl.Expr.__le__,
}


def _trees(columns: tuple[str, ...]) -> st.SearchStrategy[Tree]:
    """`+ - *` of columns and literals, a negated or absolute signed column, two levels deep."""
    signed = [name for name in columns if not DTYPES[name].is_unsigned_integer()]
    leaves = [
        st.tuples(st.just("col"), st.sampled_from(columns)),
        st.tuples(st.just("lit"), st.sampled_from(LITERALS)),
    ]
    if signed:  # polars refuses to negate an unsigned integer
        leaves.append(st.tuples(st.sampled_from(["neg", "abs"]), st.sampled_from(signed)))
    # A column plus a literal its dtype cannot hold: polars widens, nothing wraps near it.
    widened = st.tuples(
        st.sampled_from(["+", "-"]),
        st.tuples(st.just("col"), st.sampled_from(columns)),
        st.tuples(st.just("lit"), st.sampled_from([100_000, -100_000, 2**32, -(2**40)])),
    )
    leaf = st.one_of(*leaves, widened)

    def combined(operands: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
        return st.tuples(st.sampled_from(["+", "-", "*"]), operands, operands)

    return st.one_of(widened, combined(leaf), combined(st.one_of(leaf, combined(leaf))))


def _rules(columns: tuple[str, ...]) -> st.SearchStrategy[Tree]:
    """`tree > c` or `tree <= c`, reading at least one column (a rule polars can run)."""
    limit = st.sampled_from([-1, 0, 1, 100, 32_767, 2**31, 2**63 - 1])
    return st.tuples(st.sampled_from([">", "<="]), _trees(columns), limit).filter(
        lambda rule: "col" in str(rule) or "neg" in str(rule) or "abs" in str(rule)
    )


def _expr(tree: Tree) -> pl.Expr:
    kind, *parts = tree
    if kind == "col":
        return pl.col(parts[0])
    if kind == "lit":
        return pl.lit(parts[0])
    if kind == "neg":
        return -pl.col(parts[0])
    if kind == "abs":
        return pl.col(parts[0]).abs()
    left, right = parts
    return _OPERATORS[kind](_expr(left), right if isinstance(right, int) else _expr(right))


def _frames(columns: tuple[str, ...]) -> st.SearchStrategy[pl.DataFrame]:
    row = st.fixed_dictionaries(
        {name: st.sampled_from(_near_limits(DTYPES[name])) for name in columns}
    )
    return st.lists(row, max_size=8).map(
        lambda rows: pl.DataFrame(rows, schema={n: DTYPES[n] for n in columns}, orient="row")
    )


def _assert_counts_alike(
    table: Callable[[pl.DataFrame], tuple[SQLTable, pl.LazyFrame]],
    columns: tuple[str, ...],
    rule: pl.Expr,
    frame: pl.DataFrame,
) -> None:
    """The SQL backend (rule in the database, or fallen back) counts what `Schema.filter`
    counts, and the database raises no overflow."""
    schema = _schema(columns, rule)
    expected = schema.filter(frame).failure.counts().get("arith", 0)
    sql_table, scanned = table(frame)
    evaluated = sql_table.evaluate(scanned, rules(schema), max_failure_samples=2)
    assert evaluated.failed.get("arith", 0) == expected, (rule, evaluated.engines)
    event(f"ran in {evaluated.engines['arith'].partition(' (')[0]}")  # both sides are exercised


@pytest.fixture(scope="module")
def duckdb_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    path = tmp_path_factory.mktemp("arithmetic") / "arithmetic.duckdb"
    with duckdb.connect(str(path)) as connection:
        yield connection


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_duckdb_counts_arithmetic_near_every_numeric_limit_as_polars_does(
    duckdb_file: duckdb.DuckDBPyConnection, data: st.DataObject
) -> None:
    columns = tuple(data.draw(st.sets(st.sampled_from(sorted(COLUMNS)), min_size=2, max_size=3)))
    rule, frame = _expr(data.draw(_rules(columns))), data.draw(_frames(columns))

    def table(frame: pl.DataFrame) -> tuple[SQLTable, pl.LazyFrame]:
        duckdb_file.execute("DROP TABLE IF EXISTS generated")
        duckdb_file.register("generated_arrow", frame.to_arrow())
        duckdb_file.execute("CREATE TABLE generated AS SELECT * FROM generated_arrow")
        duckdb_file.unregister("generated_arrow")
        select = exp.select(exp.Star()).from_("generated")
        return SQLTable.of(select, dialect="duckdb", run=lambda q: duckdb_file.sql(q).pl()), (
            frame.lazy()
        )

    _assert_counts_alike(table, columns, rule, frame)


@pytest.fixture(scope="module")
def connection(postgres: PostgresServer) -> Iterator[psycopg.Connection]:
    with postgres.connect() as connection:
        yield connection


def _read_back(
    database: _Database, dialect: str, frame: pl.DataFrame
) -> tuple[SQLTable, pl.LazyFrame]:
    """The table `generated` of `database` as the SQL backend reads it, in `frame`'s dtypes."""
    select = relation(database.dtypes, "generated", dialect, None, None)
    scanned = database.scan(select)
    assert scanned.collect_schema() == frame.schema
    return SQLTable.of(select, dialect=dialect, run=database.run), scanned


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(rule=_rules(tuple(POSTGRES)), frame=_frames(tuple(POSTGRES)))
def test_postgresql_counts_arithmetic_near_every_numeric_limit_as_polars_does(
    connection: psycopg.Connection, rule: Tree, frame: pl.DataFrame
) -> None:
    def table(frame: pl.DataFrame) -> tuple[SQLTable, pl.LazyFrame]:
        return _read_back(in_postgres(connection, frame, POSTGRES), "postgres", frame)

    _assert_counts_alike(table, tuple(POSTGRES), _expr(rule), frame)


# --------------------------------------- a real run ------------------------------------ #


class Stocked(dy.Schema):
    item_id = dy.Int64(primary_key=True)
    level = dy.Int16(nullable=True, max=1000)

    @dy.rule()
    def restock_fits(cls) -> pl.Expr:
        """A level restocked by 100 stays positive (in Int16, where polars adds)."""
        return pl.col("level") + 100 > 0

    @dy.rule()
    def reserve_fits(cls) -> pl.Expr:
        """A reserve of 100,000 over the level (an Int32 sum in polars) stays above 99,990."""
        return pl.col("level") + 100_000 > 99_990


def test_a_check_run_counts_a_wrapping_rule_in_polars_and_says_why(tmp_path: Path) -> None:
    # 32,767 + 100 wraps to -32,669 in polars (the row fails); DuckDB widens and passed it.
    frame = pl.DataFrame(
        {"item_id": [1, 2, 3, 4], "level": [32_767, -150, 5, None]},
        schema={"item_id": pl.Int64, "level": pl.Int16},
    )
    database = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute("CREATE SCHEMA finance")
        connection.register("frame", frame.to_arrow())
        connection.execute("CREATE TABLE finance.payments AS SELECT * FROM frame")

    instance, result = run_payments_checks(
        Stocked, dd.sources.DuckDBTableSource(), {"duckdb": DuckDBResource(database=str(database))}
    )

    outcomes = {
        name: (e.metadata["dy_failed_count"].value, e.metadata["dy_engine"].value)
        for name, e in evaluations(result).items()
        if name.startswith("dy_rule__re")
    }
    counts = Stocked.filter(frame).failure.counts()
    reason = "polars (integer arithmetic may wrap: Int16 + 100)"
    assert outcomes == {
        "dy_rule__restock_fits": (counts["restock_fits"], reason),
        "dy_rule__reserve_fits": (counts["reserve_fits"], "duckdb"),
    }
    assert counts["restock_fits"] == 2
    assert any(
        "integer arithmetic may wrap: Int16 + 100" in line for line in logs(instance, result)
    )


# ------------------------------- a collection filter ------------------------------------ #


class Lines(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    quantity = dy.Int16(nullable=True)


class Stock(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    reserved = dy.Int16(nullable=True)


class Orders(dy.Collection):
    lines: dy.LazyFrame[Lines]
    stock: dy.LazyFrame[Stock]

    @dy.filter()
    def quantity_grows(self) -> pl.LazyFrame:
        """`Int16 + 100` wraps in polars at 32767: this filter must run there."""
        return self.lines.filter(pl.col("quantity") + 100 > 0)

    @dy.filter()
    def reserved_within(self) -> pl.LazyFrame:
        """A literal wider than Int16 makes polars add in Int32: no wrap, so SQL runs it."""
        return self.stock.filter(pl.col("reserved") + 100_000 > 99_990)


def test_a_collection_filter_with_arithmetic_that_may_wrap_runs_in_polars(
    tmp_path: Path,
) -> None:
    limits = [32_767, 32_700, -32_768, -20, 5, None]
    frames = {
        "lines": pl.DataFrame(
            {"order_id": range(6), "quantity": limits},
            schema={"order_id": pl.Int64, "quantity": pl.Int16},
        ),
        "stock": pl.DataFrame(
            {"order_id": range(6), "reserved": limits},
            schema={"order_id": pl.Int64, "reserved": pl.Int16},
        ),
    }
    members = {"lines": "lines", "stock": "stock"}
    database = _duckdb_file(tmp_path / "orders.duckdb", frames, members)
    checks = dd.collection_checks(
        Orders, members=members, sources={m: dd.sources.DuckDBTableSource() for m in members}
    )

    result, _ = _materialize(checks, members, {"duckdb": DuckDBResource(database=str(database))})

    outcomes = _outcomes(result)  # every check evaluated: the step raised no overflow
    assert {check for _, check in outcomes} >= {
        "dy_filter__quantity_grows",
        "dy_filter__reserved_within",
    }
    assert _failed(outcomes) == dataframely_counts(Orders, frames, members) != {}
    engines = _filter_engines(outcomes)
    assert engines["dy_filter__quantity_grows"] == {
        "polars (integer arithmetic may wrap: Int16 + 100)"
    }
    assert engines["dy_filter__reserved_within"] == {"duckdb"}
