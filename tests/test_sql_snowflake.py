"""`SQLTableSource(dialect="snowflake")` in real runs, its SQL executed by fakesnow.

fakesnow is Snowflake's Python connector backed by DuckDB: `snowflake.connector.connect` is
patched, the resource below calls it as dagster-snowflake's `SnowflakeResource` does, and
every query the backend sends (Snowflake SQL, `COUNT(CASE ...)`, `OCTET_LENGTH`, quoted
names) is parsed as Snowflake's and run in DuckDB. The counts must be Dataframely's. Where
DuckDB does not behave as Snowflake (names are case-insensitive, no collations; `OCTET_LENGTH` of a
string is missing and stood in for), fakesnow cannot tell, so the SQL text itself is checked
for what Snowflake needs.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import dataframely as dy
import fakesnow
import polars as pl
import pytest
import snowflake.connector
from support import evaluations, logs
from test_pushdown import _outcomes, run_payments_checks

import dagster_dataframely as dd
from dagster_dataframely._engine.sql.catalog import read_facts
from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely._engine.sql.sessions import Current, pinning
from dagster_dataframely.sources._sql_query import relation as sql_relation


class Payments(dy.Schema):
    payment_id = dy.Int64(primary_key=True)
    amount = dy.Float64(nullable=True, min=0, max_exclusive=1000.0)
    rate = dy.Float64(nullable=True, min_exclusive=0.0, max=1.0, allow_nan=True, allow_inf=True)
    currency = dy.String(min_length=3, max_length=3, regex=r"^[A-Z]{3}$")
    level = dy.Int64(nullable=True, is_in=[1, 2])
    note = dy.String(nullable=True)
    paid_at = dy.Datetime(nullable=True, max=dt.datetime(2024, 12, 31))

    @dy.rule()
    def refunds_have_a_note(cls) -> pl.Expr:
        """A negative amount carries a note."""
        return (pl.col("amount") >= 0) | pl.col("note").is_not_null()


NAN, INF = float("nan"), float("inf")
ROWS = [
    (1, 10.0, 0.5, "EUR", 1, "ok", dt.datetime(2024, 1, 1, 23, 30)),
    (2, -5.0, 1.5, "eur", 3, None, dt.datetime(2024, 1, 2, 0, 30)),
    (2, NAN, NAN, "USD", 2, "x", dt.datetime(2024, 1, 1, 23, 30)),
    (3, INF, INF, "EURO", None, None, dt.datetime(2024, 1, 2, 0, 30)),
    (None, 1000.0, 0.0, "CHF", 1, None, dt.datetime(2025, 1, 1)),
    (None, None, None, "Fr", 2, None, None),
    (4, 1.0, 1.0, "ÄÖÜ", 1, "three characters, six bytes", dt.datetime(2024, 1, 2, 0, 30)),
]
COLUMNS = list(Payments.columns())
#: Snowflake's `REGEXP_LIKE` matches the whole string and reads POSIX EREs: the one rule left
#: to polars.
FALLBACKS = {"dy_rule__currency__regex"}
DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="Europe/Berlin")


class SnowflakeWarehouse(dg.ConfigurableResource):
    """A connection from `snowflake.connector.connect`, as dagster-snowflake's resource gives."""

    database: str

    @contextmanager
    def get_connection(self) -> Iterator[snowflake.connector.SnowflakeConnection]:
        connection = snowflake.connector.connect(database=self.database, schema="finance")
        try:
            yield connection
        finally:
            connection.close()


def _literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return repr(value) if value == value and abs(value) != INF else f"'{value}'::FLOAT"
    if isinstance(value, dt.datetime):
        return f"'{value.isoformat(sep=' ')}'::TIMESTAMP_NTZ"
    return f"'{value}'" if isinstance(value, str) else str(value)


@pytest.fixture(scope="module")
def warehouse() -> Iterator[SnowflakeWarehouse]:
    with fakesnow.patch():
        resource = SnowflakeWarehouse(database="shop")
        with resource.get_connection() as connection:
            cursor = connection.cursor()
            cursor.execute("CREATE SCHEMA IF NOT EXISTS shop.finance")
            cursor.execute(  # quoted names keep Dataframely's lower-case column names
                'CREATE TABLE finance.payments ("payment_id" INT, "amount" FLOAT, "rate" FLOAT, '
                '"currency" VARCHAR, "level" INT, "note" VARCHAR, "paid_at" TIMESTAMP_NTZ)'
            )
            # fakesnow hands Snowflake's OCTET_LENGTH to DuckDB, whose octet_length takes no
            # VARCHAR: a macro stands in with the same meaning (UTF-8 bytes of a string).
            connection._duck_conn.execute(  # type: ignore[attr-defined]
                "CREATE MACRO shop.finance.octet_length(s) AS strlen(s)"
            )
            values = ", ".join(f"({', '.join(map(_literal, row))})" for row in ROWS)
            cursor.execute(f"INSERT INTO finance.payments VALUES {values}")
        yield resource


def _source(**settings: str) -> dd.sources.SQLTableSource:
    return dd.sources.SQLTableSource(resource_key="warehouse", dialect="snowflake", **settings)


def _polars_counts() -> dict[str, int]:
    """What Dataframely counts on the same rows."""
    frame = pl.DataFrame(
        ROWS, schema={name: c.dtype for name, c in Payments.columns().items()}, orient="row"
    )
    _, failures = Payments.filter(frame)
    return {
        "dy_rule__" + name.replace("|", "__"): count for name, count in failures.counts().items()
    }


def test_a_snowflake_table_is_checked_in_snowflake_with_dataframelys_counts(
    warehouse: SnowflakeWarehouse,
) -> None:
    _, result = run_payments_checks(Payments, _source(), {"warehouse": warehouse})

    assert evaluations(result)["dy_schema__columns"].passed  # INT is NUMBER(38, 0): Int64
    outcomes = _outcomes(result)
    engines = {name: engine for name, (_, _, engine) in outcomes.items()}
    assert {name for name, engine in engines.items() if engine.startswith("polars")} == FALLBACKS
    assert {engine.split(" (")[0] for engine in engines.values()} == {"snowflake", "polars"}
    assert {rows for _, rows, _ in outcomes.values()} == {len(ROWS)}
    counts = {name: failed for name, (failed, _, _) in outcomes.items()}
    expected = _polars_counts()
    assert counts == {name: expected.get(name, 0) for name in counts}
    # Every rule but one failed somewhere, so each count above compares a real verdict.
    assert {name for name, failed in counts.items() if not failed} == {
        "dy_rule__currency__nullability"
    }
    assert counts["dy_rule__primary_key"] == 4  # id 2 twice, and the two null ids
    assert counts["dy_rule__currency__max_length"] == 2  # 'EURO'; 'ÄÖÜ' is six bytes
    sample = evaluations(result)["dy_rule__amount__max_exclusive"].metadata["dy_failed_sample"]
    assert {row.data["payment_id"] for row in sample.records} == {2, 3, "null"}  # type: ignore[attr-defined]


def test_the_sql_sent_is_snowflakes(warehouse: SnowflakeWarehouse) -> None:
    instance, result = run_payments_checks(Payments, _source(), {"warehouse": warehouse})

    sent = [line for line in logs(instance, result) if line.startswith("Pushed down to snowflake:")]
    (counts,) = [line for line in sent if "__dy_rows" in line]
    assert "COUNT(CASE WHEN" in counts and "FILTER" not in counts  # Snowflake has no FILTER
    assert 'OCTET_LENGTH("currency")' in counts  # bytes, as Dataframely counts; LENGTH: chars
    # A bare name is what Snowflake folds it to; aliases stay quoted where they are named.
    assert 'FROM "FINANCE"."PAYMENTS"' in counts
    assert 'AS "__dy_table"' in counts
    assert all("AS __dy_table" not in line for line in sent)


def test_a_missing_table_fails_the_step_naming_the_table_and_the_fix(
    warehouse: SnowflakeWarehouse,
) -> None:
    _, result = run_payments_checks(
        Payments, _source(table="finance.refunds"), {"warehouse": warehouse}
    )

    assert not result.success
    assert not [name for name in evaluations(result) if name.startswith("dy_rule__")]
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    while error is not None and error.cls_name != "SourceReadError":
        error = error.cause
    assert error is not None, failure.step_failure_data.error
    assert "Could not check asset payments in snowflake table 'finance.refunds'" in error.message
    assert "REFUNDS" in error.message and "may not read as missing" in error.message


def test_a_daily_partition_is_the_wall_clock_window_of_its_zone(
    warehouse: SnowflakeWarehouse,
) -> None:
    @dg.asset(
        name="payments", partitions_def=DAYS, metadata={"dagster/table_name": "finance.payments"}
    )
    def payments() -> None:
        """Loaded by another tool; the run only marks the partition."""

    checks = dd.schema_checks(
        Payments, asset="payments", partitions_def=DAYS, source=_source(partition_expr='"paid_at"')
    )
    result = dg.materialize(
        [payments, checks],
        resources={"warehouse": warehouse},
        partition_key="2024-01-02",
        raise_on_error=False,
    )

    # partition_expr is Snowflake SQL: the quoted name of the lower-case column.
    # Berlin's 2024-01-02 holds the three payments at 00:30 wall-clock time, not 23:30.
    outcomes = _outcomes(result)
    assert {rows for _, rows, _ in outcomes.values()} == {3}
    assert outcomes["dy_rule__primary_key"][0] == 0
    assert outcomes["dy_rule__currency__regex"][:1] == (3,)  # 'eur', 'EURO' and 'ÄÖÜ'
    assert outcomes["dy_rule__paid_at__max"][:1] == (0,)


def test_snowflake_catalog_query_runs_on_fakesnow(warehouse: SnowflakeWarehouse) -> None:
    """The catalog query of the column facts (test_sql_collations.py) runs in Snowflake's SQL:
    one row per column, in order, with no collation on an uncollated column; a bare name is
    found in the session's current schema."""
    with warehouse.get_connection() as connection:
        connection.cursor().execute("CREATE TABLE catalog_orders (id INT, note VARCHAR)")
        cursor = connection.cursor()

        def run(sql: str) -> pl.DataFrame:
            cursor.execute(sql)
            names = [column[0] for column in cursor.description]
            return pl.DataFrame(cursor.fetchall(), schema=names, orient="row")

        select = sql_relation(lambda _: {}, "catalog_orders", "snowflake", None, None)
        facts = read_facts(select, DIALECTS["snowflake"], run)

    assert facts.read
    assert list(facts.columns) == ["ID", "NOTE"]
    assert all(column.collation is None for column in facts.columns.values())


def test_the_snowflake_session_is_read_and_its_statements_run_on_fakesnow(
    warehouse: SnowflakeWarehouse,
) -> None:
    """`SHOW PARAMETERS IN SESSION` is read as the pinned parameters' values and levels;
    fakesnow's session already has the pinned values, so a check sends it no `ALTER SESSION`
    (the statements of a session that differs: test_sql_sessions.py). Those it takes run."""
    snowflake = DIALECTS["snowflake"]
    with warehouse.get_connection() as connection:
        cursor = connection.cursor()
        cursor.execute(snowflake.read_session(list(snowflake.session_settings)).sql("snowflake"))
        names = [column[0] for column in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        current = snowflake.current_session(rows)
        for value in (False, None):  # pinned, then unset to inherit again
            for statement in snowflake.set_session({"QUOTED_IDENTIFIERS_IGNORE_CASE": value}):
                cursor.execute(statement.sql(dialect="snowflake"))

    assert current == {
        "QUOTED_IDENTIFIERS_IGNORE_CASE": Current("false", own=False),
        "TIMEZONE": Current("Etc/UTC", own=False),
    }
    assert pinning(snowflake.session_settings, current).pin == {}


class ExactPayments(Payments):
    """`Payments` without the rule Snowflake leaves to polars."""

    currency = dy.String(min_length=3, max_length=3)


def _kept_rows(warehouse: SnowflakeWarehouse, schema: type[dy.Schema]) -> dict[str, int]:
    """The failing rows a run keeps, as flag -> rows, read back from the failures table."""
    spec = dg.AssetSpec("payments", metadata={"dagster/table_name": "finance.payments"})
    checks = dd.schema_checks(schema, asset="payments", source=_source(), keep_failing_rows=True)
    job = dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets("payments"))
    defs = dg.Definitions(
        assets=[spec], asset_checks=[checks], jobs=[job], resources={"warehouse": warehouse}
    )
    result = defs.resolve_job_def("checks").execute_in_process(raise_on_error=False)
    metadata = evaluations(result)["dy_rule__primary_key"].metadata
    assert "dy_failing_rows" in metadata
    assert metadata["dy_failing_rows_table"].value == '"FINANCE"."PAYMENTS__DY_FAILURES"'
    with warehouse.get_connection() as connection:
        cursor = connection.cursor()
        cursor.execute("SELECT * FROM finance.payments__dy_failures")  # a bare name, folded
        names = [column[0] for column in cursor.description]
        kept = pl.DataFrame(cursor.fetchall(), schema=names, orient="row")
    assert set(kept["dy_run_id"]) == {result.run_id}
    return {
        name: int(kept[name].sum())
        for name in kept.columns
        if name.startswith("dy_rule__") and kept[name].sum()
    }


def test_failing_rows_are_kept_in_snowflake_by_insert_select_and_by_values(
    warehouse: SnowflakeWarehouse,
) -> None:
    expected = {name: n for name, n in _polars_counts().items() if n}

    in_sql = _kept_rows(warehouse, ExactPayments)
    in_polars = _kept_rows(warehouse, Payments)  # the regex rule selects its rows in polars

    assert in_sql == {n: c for n, c in expected.items() if n != "dy_rule__currency__regex"}
    assert in_polars == expected
