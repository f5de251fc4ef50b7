"""`read_dtypes="cast"` under pushdown, in real runs: each cast with an exact SQL form is made
in the database with the "value unchanged" guarantee of the polars cast, its failures counted
in the same query as the rules, which read the cast columns; a cast without one falls back to
polars, with every rule that reads its column. At both sides of every cast's limit, a DuckDB
file and a PostgreSQL table count what the polars path counts, and show the same values."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource
from postgres import PostgresResource, PostgresServer
from sqlglot import exp
from support import evaluations, logs, step_error
from test_read_dtypes import BOUNDARIES, Boundaries, _boundary_frame

import dagster_dataframely as dd
from dagster_dataframely._checks.results import schema_results
from dagster_dataframely._engine.settings import CheckSettings
from dagster_dataframely._engine.sql.backend import SQLTable
from dagster_dataframely.errors import ColumnSchemaError

COLUMNS = "dy_schema__columns"


class PostgresDrifted(dy.Schema):
    """The casts of `tests/test_read_dtypes.py`'s boundaries that a PostgreSQL table can
    drift into, each column with a rule that reads the cast values."""

    row = dy.Int64(primary_key=True)
    float_decimal = dy.Decimal(8, 2, nullable=True, min=decimal.Decimal(0))  # no SQL bound
    float32_decimal = dy.Decimal(5, 2, nullable=True)
    decimal_decimal = dy.Decimal(8, 2, nullable=True)
    int_int = dy.Int16(nullable=True, max=32000)
    float_int = dy.Int32(nullable=True, min=0)
    string_enum = dy.Enum(["a", "b"])
    categorical_enum = dy.Enum(["a", "b"], nullable=True)
    string_categorical = dy.Categorical(nullable=True)
    datetime_date = dy.Date(nullable=True, min=dt.date(2024, 6, 1))
    coarser_unit = dy.Datetime(time_unit="ns", nullable=True, max=dt.datetime(2262, 1, 1))
    #: No SQL form: a float past BIGINT's range is a UInt64.
    float_uint = dy.UInt64(nullable=True, max=10)

    @dy.rule()
    def small_ints_stay_below_the_floats(cls) -> pl.Expr:
        return pl.col("int_int") >= pl.col("float_int")

    @dy.rule()
    def uints_stay_below_the_small_ints(cls) -> pl.Expr:
        return pl.col("float_uint") < pl.col("int_int")


class Drifted(PostgresDrifted):
    """Every cast kind a DuckDB table drifts into."""

    finer_unit = dy.Datetime(time_unit="us", nullable=True, max=dt.datetime(2024, 1, 1))
    #: DuckDBTableSource reads `UTC` (it pins the session's zone so): a schema written
    #: with its alias `Etc/UTC` (as `infer` once wrote it) drifts from it.
    zone_alias = dy.Datetime(time_zone="Etc/UTC", nullable=True)


#: column -> (dtype read, values cast, values just past what the cast holds): the boundaries
#: of `test_read_dtypes`, and a cast with no SQL form.
VALUES: dict[str, tuple[pl.DataType, list[Any], list[Any]]] = {
    **{
        name: (read, inside, past)
        for name, (read, _, inside, past) in BOUNDARIES.items()
        if name in Drifted.column_names()
    },
    "float_uint": (pl.Float64(), [10.0, 11.0, 2.0**63], [1.5, -1.0]),
}
#: DuckDB reads an `ENUM` as a `Categorical`: the one type it hands over as one.
DUCKDB_TYPES = {"categorical_enum": "ENUM('a', 'b', 'c')"}
#: PostgreSQL has no nanoseconds nor zone aliases; an enum type reads as text.
POSTGRES_TYPES = {
    "row": "bigint",
    "float_decimal": "double precision",
    "float32_decimal": "real",
    "decimal_decimal": "numeric(10, 3)",
    "int_int": "bigint",
    "float_int": "double precision",
    "string_enum": "text",
    "categorical_enum": "letters",
    "string_categorical": "text",
    "datetime_date": "timestamp",
    "coarser_unit": "timestamp",
    "float_uint": "double precision",
}
#: Where each cast runs: every one in DuckDB but the `UInt64`; PostgreSQL has no
#: nanoseconds either.
NO_SQL_FORM = {"duckdb": {"float_uint"}, "postgres": {"float_uint", "coarser_unit"}}


def _frame(columns: list[str], *, outside: bool) -> pl.DataFrame:
    """A row per value of each column, in the dtypes read; `outside` adds the values past
    each cast's limit. Shorter columns are padded with nulls."""
    values = {name: VALUES[name][1] + (VALUES[name][2] if outside else []) for name in columns}
    height = max(map(len, values.values()))
    return pl.DataFrame(
        [pl.Series("row", range(height), pl.Int64)]
        + [
            pl.Series(name, column + [None] * (height - len(column)), VALUES[name][0])
            for name, column in values.items()
        ]
    )


def _run(
    schema: type[dy.Schema], source: dd.sources.Source, resources: dict[str, Any]
) -> tuple[dg.DagsterInstance, dg.ExecuteInProcessResult]:
    """`schema`'s checks, with `read_dtypes="cast"`, of the external table `drifted`."""
    checks = dd.schema_checks(
        schema, asset="drifted", source=source, read_dtypes="cast", max_failure_samples=10
    )
    job = dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets("drifted"))
    defs = dg.Definitions(
        assets=[dg.AssetSpec("drifted")], asset_checks=[checks], jobs=[job], resources=resources
    )
    instance = dg.DagsterInstance.ephemeral()
    result = defs.resolve_job_def("checks").execute_in_process(
        instance=instance, raise_on_error=False
    )
    return instance, result


def _polars(schema: type[dy.Schema], frame: pl.DataFrame) -> dg.ExecuteInProcessResult:
    """The polars path: the same rows, in the same dtypes, handed over by a function."""
    return _run(schema, dd.sources.CallableSource(lambda context: frame), {})[1]


def _casts(result: dg.ExecuteInProcessResult) -> dict[str, tuple[str, int, str]]:
    """column -> (dtype read, values not cast, engine), as `dy_schema__columns` says."""
    table = evaluations(result)[COLUMNS].metadata["dy_casts"].value
    return {
        row.data["column"]: (row.data["read"], row.data["failed"], row.data["engine"])
        for row in table.records  # type: ignore[attr-defined]
    }


def _rules(result: dg.ExecuteInProcessResult) -> dict[str, tuple[int, int, str]]:
    """check name -> (failed rows, rows, engine), for each rule check."""
    return {
        name: (
            e.metadata["dy_failed_count"].value,
            e.metadata["dy_row_count"].value,
            e.metadata["dy_engine"].value,
        )  # type: ignore[misc]
        for name, e in evaluations(result).items()
        if name != COLUMNS
    }


def _shown(result: dg.ExecuteInProcessResult) -> set[tuple[str, str]]:
    """(column, value read) of each failed cast the column-schema check shows."""
    sample = evaluations(result)[COLUMNS].metadata["dy_failed_sample"].value
    return {(r.data["column"], r.data["value read"]) for r in sample.records}  # type: ignore[attr-defined]


# ----------------------------------------- DuckDB ----------------------------------------- #


def _duckdb(path: Path, frame: pl.DataFrame) -> dict[str, Any]:
    """A DuckDB file holding `frame` as the table `drifted`, and the resource that reads it."""
    with duckdb.connect(str(path)) as connection:
        connection.register("frame", frame.to_arrow())
        connection.execute("CREATE TABLE drifted AS SELECT * FROM frame")
        for column, sql_type in DUCKDB_TYPES.items():
            connection.execute(f"ALTER TABLE drifted ALTER {column} TYPE {sql_type}")
    return {"duckdb": DuckDBResource(database=str(path))}


def _duckdb_runs(
    tmp_path: Path, *, outside: bool
) -> tuple[dg.DagsterInstance, dg.ExecuteInProcessResult, dg.ExecuteInProcessResult]:
    """The checks of `Drifted` on a DuckDB file: by pushdown, and streamed into polars."""
    frame = _frame(Drifted.column_names()[1:], outside=outside)
    resources = _duckdb(tmp_path / "warehouse.duckdb", frame)
    instance, pushed = _run(Drifted, dd.sources.DuckDBTableSource(), resources)
    _, streamed = _run(Drifted, dd.sources.DuckDBTableSource(pushdown=False), resources)
    return instance, pushed, streamed


def test_every_cast_at_its_limit_is_made_in_duckdb_and_the_rules_count_as_polars(
    tmp_path: Path,
) -> None:
    instance, pushed, streamed = _duckdb_runs(tmp_path, outside=False)

    assert evaluations(pushed)[COLUMNS].passed and evaluations(streamed)[COLUMNS].passed
    casts = _casts(pushed)
    assert {column: failed for column, (_, failed, _) in casts.items()} == dict.fromkeys(
        Drifted.column_names()[1:], 0
    )
    assert {column: engine for column, (_, _, engine) in casts.items()} == {
        column: "polars (the cast has no exact SQL form)"
        if column in NO_SQL_FORM["duckdb"]
        else "duckdb"
        for column in casts
    }
    assert casts["categorical_enum"][0] == "Categorical"
    assert (
        evaluations(pushed)[COLUMNS].metadata["dy_engine"].value
        == "duckdb, polars (the cast has no exact SQL form)"
    )
    rules, polars_rules = _rules(pushed), _rules(streamed)
    assert {name: (f, n) for name, (f, n, _) in rules.items()} == {
        name: (f, n) for name, (f, n, _) in polars_rules.items()
    }
    assert {name for name, (f, _, _) in rules.items() if f} == {
        "dy_rule__float_decimal__min",
        "dy_rule__int_int__max",
        "dy_rule__float_int__min",
        "dy_rule__string_enum__nullability",
        "dy_rule__datetime_date__min",
        "dy_rule__coarser_unit__max",
        "dy_rule__finer_unit__max",
        "dy_rule__float_uint__max",
        "dy_rule__small_ints_stay_below_the_floats",
        "dy_rule__uints_stay_below_the_small_ints",
    }
    in_polars = {name for name, (_, _, engine) in rules.items() if engine.startswith("polars")}
    assert in_polars == {
        "dy_rule__float_decimal__min",  # a Decimal bound has no SQL form
        "dy_rule__float_uint__max",  # the rules of a column polars casts
        "dy_rule__uints_stay_below_the_small_ints",
    }
    sent = [line for line in logs(instance, pushed) if line.startswith("Pushed down to DuckDB:")]
    cast = 'CASE WHEN "__dy_read"."int_int" BETWEEN -32768 AND 32767 THEN "__dy_read"."int_int"'
    # The cast is made in DuckDB: the count query (logged cut at 2,000 characters, before its
    # FROM) and the sample queries read the table through it.
    assert any("COUNT(*)" in line for line in sent)
    assert any(cast in line for line in sent)


def test_a_value_just_past_a_casts_limit_fails_in_duckdb_counted_and_shown_as_in_polars(
    tmp_path: Path,
) -> None:
    _, pushed, streamed = _duckdb_runs(tmp_path, outside=True)

    assert {column: failed for column, (_, failed, _) in _casts(pushed).items()} == {
        column: len(VALUES[column][2]) for column in Drifted.column_names()[1:]
    }
    assert _casts(pushed) == {
        column: (
            read,
            failed,
            "polars (the cast has no exact SQL form)"
            if column in NO_SQL_FORM["duckdb"]
            else "duckdb",
        )
        for column, (read, failed, _) in _casts(streamed).items()
    }
    assert _shown(pushed) == _shown(streamed)
    assert ("float_decimal", "999999.995") in _shown(pushed)
    assert ("coarser_unit", "2262-04-11 23:47:16.854776") in _shown(pushed)
    error, message = step_error(pushed)
    assert error == ColumnSchemaError.__name__
    assert message == step_error(streamed)[1]
    assert "float_decimal: 6 value(s) read as Float64 are not Decimal(8, 2)" in message


def _columns_result(frame: pl.DataFrame, pushdown: SQLTable | None) -> dg.AssetCheckResult:
    """The column-schema result of `Boundaries` on `frame`, cast on read."""
    outcome = schema_results(
        Boundaries,
        frame.lazy(),
        dg.AssetKey("boundaries"),
        CheckSettings(max_failure_samples=10),
        read_dtypes="cast",
        pushdown=pushdown,
    )
    try:
        return next(r for r in outcome if r.check_name == COLUMNS)
    finally:
        outcome.close()


@pytest.mark.parametrize("outside", [False, True], ids=["at the limits", "past them"])
def test_each_cast_kind_is_made_in_duckdb_as_polars_makes_it_an_enum_of_an_enum_too(
    outside: bool,
) -> None:
    """The SQL backend under the same rows in polars' dtypes and in DuckDB's: a DuckDB table
    hands no `Enum` over (an `ENUM` reads as a `Categorical`), the engine takes one."""
    frame = _boundary_frame(outside=outside)
    connection = duckdb.connect()
    connection.register("frame", frame.to_arrow())
    connection.execute("CREATE TABLE boundaries AS SELECT * FROM frame")
    for column in ("categorical_enum", "enum_enum"):
        connection.execute(f"ALTER TABLE boundaries ALTER {column} TYPE ENUM('a', 'b', 'c')")
    table = SQLTable.of(
        exp.select(exp.Star()).from_("boundaries"),
        dialect="duckdb",
        run=lambda sql: pl.DataFrame(pl.from_arrow(connection.sql(sql).to_arrow_table())),
    )

    pushed, polars = _columns_result(frame, table), _columns_result(frame, None)

    casts = pushed.metadata["dy_casts"].value.records  # type: ignore[attr-defined]
    assert {row.data["column"]: row.data["engine"] for row in casts} == dict.fromkeys(
        BOUNDARIES, "duckdb"
    )
    assert {row.data["column"]: row.data["failed"] for row in casts} == {
        name: len(past) if outside else 0 for name, (_, _, _, past) in BOUNDARIES.items()
    }
    assert pushed.passed is polars.passed is not outside
    if outside:
        shown = [result.metadata["dy_failed_sample"].value.records for result in (pushed, polars)]  # type: ignore[attr-defined]
        assert {tuple(row.data.items()) for row in shown[0]} == {
            tuple(row.data.items()) for row in shown[1]
        }


# --------------------------------------- PostgreSQL --------------------------------------- #


def _postgres(server: PostgresServer, frame: pl.DataFrame) -> dict[str, Any]:
    """`frame` as the PostgreSQL table `drifted`, in the types of `POSTGRES_TYPES`."""
    columns = ", ".join(f"{name} {POSTGRES_TYPES[name]}" for name in frame.columns)
    with server.connect() as connection:
        connection.execute("DROP TABLE IF EXISTS drifted")
        connection.execute("DROP TYPE IF EXISTS letters")
        connection.execute("CREATE TYPE letters AS ENUM ('a', 'b', 'c')")
        connection.execute(f"CREATE TABLE drifted ({columns})")
        values = ", ".join(f"%s::{POSTGRES_TYPES[name]}" for name in frame.columns)
        with connection.cursor() as cursor:
            cursor.executemany(f"INSERT INTO drifted VALUES ({values})", frame.rows())
    return {"warehouse": PostgresResource(conninfo=server.conninfo)}


@pytest.mark.parametrize("outside", [False, True], ids=["at the limits", "past them"])
def test_a_postgres_table_casts_what_postgres_can_and_counts_as_polars(
    postgres: PostgresServer, outside: bool
) -> None:
    frame = _frame(PostgresDrifted.column_names()[1:], outside=outside)
    resources = _postgres(postgres, frame)
    source = dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres")
    _, pushed = _run(PostgresDrifted, source, resources)
    # What polars reads of it: an enum type is text.
    read = frame.with_columns(pl.col("categorical_enum").cast(pl.String))
    reference = _polars(PostgresDrifted, read)

    casts = _casts(pushed)
    assert casts == {
        column: (
            dtype,
            failed,
            "polars (the cast has no exact SQL form)"
            if column in NO_SQL_FORM["postgres"]
            else "postgres",
        )
        for column, (dtype, failed, _) in _casts(reference).items()
    }
    assert {column: failed for column, (_, failed, _) in casts.items()} == {
        column: len(VALUES[column][2]) if outside else 0 for column in casts
    }
    assert evaluations(pushed)[COLUMNS].passed is not outside
    if outside:
        assert _shown(pushed) == _shown(reference)
        assert step_error(pushed)[1] == step_error(reference)[1]
        return
    rules = _rules(pushed)
    assert {name: (f, n) for name, (f, n, _) in rules.items()} == {
        name: (f, n) for name, (f, n, _) in _rules(reference).items()
    }
    in_polars = {name for name, (_, _, engine) in rules.items() if engine.startswith("polars")}
    assert in_polars == {
        "dy_rule__float_decimal__min",
        "dy_rule__float_uint__max",
        "dy_rule__uints_stay_below_the_small_ints",
        "dy_rule__coarser_unit__max",  # PostgreSQL holds no nanoseconds
    }
