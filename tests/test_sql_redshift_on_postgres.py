"""Redshift's SQL, run where it can run: on the suite's real PostgreSQL server.

No Redshift runs in tests. What Redshift is given (its count query without `FILTER`, its key
groupings, samples, catalog query and session pins) is PostgreSQL syntax, so
`SQLTableSource(dialect="redshift")` is run against PostgreSQL here. This proves that the SQL
parses and counts what Dataframely counts under PostgreSQL's semantics, and that the rules
Redshift would compare otherwise (text, floats, regexes) leave the database with their
reasons. It does not prove that Redshift accepts the SQL or that its own semantics match:
that rests on its documentation (see `dialects/redshift.py` and docs/sources.md).
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from pathlib import Path

import dagster as dg
import dataframely as dy
import polars as pl
import psycopg
import pytest
from postgres import PostgresResource, PostgresServer
from support import evaluations, logs
from test_pushdown import _outcomes, run_payments_checks
from test_sql_source import TABLE, Payments

import dagster_dataframely as dd
from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely.sources._sql_query import polars_dtype

#: Where each of `Payments`' rule checks runs on Redshift, and why a fallback falls back.
TEXT = "polars (text compares without trailing blanks in Redshift)"
FLOATS = "polars (NaN and infinity are not documented in Redshift)"
REGEX = "polars (regex: Redshift's POSIX engine is not documented construct by construct)"
ENGINES = {
    "dy_rule__payment_id__nullability": "redshift",
    "dy_rule__primary_key": "redshift",
    "dy_rule__level__is_in": "redshift",
    "dy_rule__currency__nullability": "redshift",
    "dy_rule__amount__min": FLOATS,
    "dy_rule__amount__nan": FLOATS,
    "dy_rule__amount__inf": FLOATS,
    "dy_rule__fee__max": FLOATS,
    "dy_rule__fee__nan": FLOATS,
    "dy_rule__fee__inf": FLOATS,
    "dy_rule__currency__regex": REGEX,
    "dy_rule__currency__max_length": TEXT,
    "dy_rule__note__regex": REGEX,
    "dy_rule__refunds_have_a_note": "polars (no exact SQL form)",
}
#: A currency with a trailing blank: Redshift would call it equal to 'EUR', polars does not.
BLANK = "INSERT INTO finance.payments VALUES (6, 2.0, 0.1, 1, 'EUR ', NULL, '2024-01-02 00:30');"


@pytest.fixture(scope="module")
def server(postgres: PostgresServer) -> PostgresServer:
    with postgres.connect() as connection:
        connection.execute(TABLE + BLANK)
    return postgres


def _payments(server: PostgresServer) -> pl.DataFrame:
    """The table's rows, read into polars."""
    with server.connect() as connection:
        rows = connection.execute("SELECT * FROM finance.payments").fetchall()
    dtypes = {name: column.dtype for name, column in Payments.columns().items()}
    return pl.DataFrame(rows, schema=dtypes, orient="row")


def _dataframely_counts(server: PostgresServer) -> dict[str, int]:
    """What Dataframely counts on the table's rows."""
    _, failures = Payments.filter(_payments(server))
    return {
        "dy_rule__" + name.replace("|", "__"): count for name, count in failures.counts().items()
    }


def test_redshifts_sql_counts_on_postgres_what_dataframely_counts(server: PostgresServer) -> None:
    source = dd.sources.SQLTableSource(resource_key="warehouse", dialect="redshift")
    instance, result = run_payments_checks(
        Payments, source, {"warehouse": PostgresResource(conninfo=server.conninfo)}
    )

    outcomes = _outcomes(result)
    assert {name: engine for name, (_, _, engine) in outcomes.items()} == ENGINES
    expected = _dataframely_counts(server)
    assert {name: failed for name, (failed, _, _) in outcomes.items()} == {
        name: expected.get(name, 0) for name in outcomes
    }
    assert outcomes["dy_rule__primary_key"][0] == 2  # the two rows of id 2, counted in SQL
    assert outcomes["dy_rule__currency__max_length"][0] == 2  # 'EURO' and 'EUR '
    sent = [line for line in logs(instance, result) if line.startswith("Pushed down to redshift:")]
    assert any("COUNT(CASE WHEN" in line and "FILTER" not in line for line in sent)
    assert evaluations(result)["dy_schema__columns"].passed


class Events(dy.Schema):
    event_id = dy.Int64(primary_key=True)
    at = dy.Datetime(time_zone="UTC")


DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="Europe/Berlin")


def test_a_new_york_session_counts_berlins_day_and_keeps_its_zone(server: PostgresServer) -> None:
    with server.connect() as connection:
        connection.execute(
            "DROP TABLE IF EXISTS finance.events;"
            "CREATE TABLE finance.events (event_id bigint, at timestamptz);"
            "INSERT INTO finance.events VALUES (1, '2024-01-01 23:30+00'), "
            "(1, '2024-01-02 00:30+01'), (2, '2024-01-02 22:30+00'), (3, '2024-01-02 23:30+00')"
        )

    @dg.asset(name="events", partitions_def=DAYS, metadata={"dagster/table_name": "finance.events"})
    def events() -> None:
        """Loaded by another tool; the run only marks the partition."""

    source = dd.sources.SQLTableSource(
        resource_key="warehouse", dialect="redshift", partition_expr="at"
    )
    checks = dd.schema_checks(Events, asset="events", partitions_def=DAYS, source=source)
    with psycopg.connect(server.conninfo, autocommit=True) as user:
        user.execute("SET TimeZone = 'America/New_York'")
        result = dg.materialize(
            [events, checks],
            resources={"warehouse": user},
            partition_key="2024-01-02",
            raise_on_error=False,
        )
        zone = user.execute("SHOW TimeZone").fetchone()

    # Berlin's 2024-01-02 is 2024-01-01 23:00 to 2024-01-02 23:00 UTC: ids 1, 1, 2.
    outcomes = _outcomes(result)
    assert outcomes["dy_rule__primary_key"] == (2, 3, "redshift")
    # The check pinned UTC for its queries and gave the user's session its zone back.
    assert zone == ("America/New_York",)


class Codes(dy.Schema):
    code_id = dy.Int64(primary_key=True)
    code = dy.String(check={"known": lambda c: c.is_in(["a", "b"])})


def test_a_column_of_a_type_redshift_facts_do_not_cover_is_checked_in_polars(
    server: PostgresServer,
) -> None:
    # `name` stands for a type the Redshift dialect does not know (SUPER, GEOMETRY, ...):
    # its comparisons are not known to be polars', so its rules leave the database.
    with server.connect() as connection:
        connection.execute(
            "DROP TABLE IF EXISTS finance.codes;"
            "CREATE TABLE finance.codes (code_id bigint, code name);"
            "INSERT INTO finance.codes VALUES (1, 'a'), (2, 'c'), (2, 'b'), (NULL, 'a'), "
            "(NULL, 'b')"
        )
    source = dd.sources.SQLTableSource(
        resource_key="warehouse", dialect="redshift", table="finance.codes"
    )
    _, result = run_payments_checks(
        Codes, source, {"warehouse": PostgresResource(conninfo=server.conninfo)}
    )

    outcomes = _outcomes(result)
    assert outcomes["dy_rule__code__check__known"] == (
        1,
        5,
        "polars (type name not known to compare as polars)",
    )
    # Nulls are one key: its rows are sampled by a join Redshift can run (no IS NOT
    # DISTINCT FROM, which it does not document).
    assert outcomes["dy_rule__primary_key"] == (4, 5, "redshift")
    sample = evaluations(result)["dy_rule__primary_key"].metadata["dy_failed_sample"]
    keys = sorted((row.data["code_id"] for row in sample.records), key=str)  # type: ignore[attr-defined]
    assert keys == [2, 2, "null", "null"]  # a null as the sample table writes it


@pytest.mark.parametrize(
    ("oid", "dtype"),
    [
        (20, pl.Int64()),
        (21, pl.Int16()),
        (701, pl.Float64()),
        (700, pl.Float32()),
        (1043, pl.String()),
        (1082, pl.Date()),
        (1114, pl.Datetime("us")),
        (1184, pl.Datetime("us", "UTC")),
        (16, pl.Boolean()),
    ],
)
def test_a_driver_reporting_bare_oids_has_its_columns_read_as_redshifts_types(
    oid: int, dtype: pl.DataType
) -> None:
    # redshift_connector and psycopg2 describe a column by its type's OID and keep no
    # registry of names (psycopg 3's `adapters`): the dialect knows Redshift's own.
    redshift = DIALECTS["redshift"]
    name = redshift.type_name(oid, connection=object())
    assert polars_dtype(name, ("col", oid, None, None, None, None, None), "redshift") == dtype


def test_failing_rows_of_a_redshift_table_are_kept_in_files(
    server: PostgresServer, tmp_path: Path
) -> None:
    # Redshift's CREATE TABLE AS and ADD COLUMN take no IF NOT EXISTS: the rows go to
    # parquet, and no table is created beside the checked one.
    spec = dg.AssetSpec("payments", metadata={"dagster/table_name": "finance.payments"})
    source = dd.sources.SQLTableSource(resource_key="warehouse", dialect="redshift")
    checks = dd.schema_checks(
        Payments, asset="payments", source=source, keep_failing_rows=str(tmp_path)
    )
    job = dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets("payments"))
    defs = dg.Definitions(
        assets=[spec],
        asset_checks=[checks],
        jobs=[job],
        resources={"warehouse": PostgresResource(conninfo=server.conninfo)},
    )
    with server.connect() as connection:  # another test may have kept PostgreSQL's there
        connection.execute("DROP TABLE IF EXISTS finance.payments__dy_failures")
    defs.resolve_job_def("checks").execute_in_process(raise_on_error=False)

    (kept,) = tmp_path.rglob("*.parquet")
    assert kept.parent.name == "payments__dy_failures"
    rows = _payments(server)
    valid, _ = Payments.filter(rows)
    assert pl.read_parquet(kept).height == rows.height - valid.height
    with server.connect() as connection:
        found = connection.execute("SELECT to_regclass('finance.payments__dy_failures')")
        assert found.fetchone() == (None,)


def test_inferring_a_redshift_table_proposes_nothing_it_could_not_count(
    server: PostgresServer,
) -> None:
    # Redshift's NaN and text comparisons are not polars': a profile counts neither, so it
    # proposes no allow_nan/allow_inf and no is_in of text, and still writes the schema.
    with server.connect() as connection:
        source = dd.infer_schema(
            "finance.payments", connection=connection, dialect="redshift", profile=True
        )

    assert "class Payments(dy.Schema):" in source
    assert "allow_inf=False" not in source and "allow_nan=False" not in source
    assert "col.is_in([" not in source
    assert "proposed (7 rows, values 1 to 3): min=1, max=3" in source  # integers are counted
