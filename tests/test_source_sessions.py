"""A check counts what Dataframely counts whatever the user's session says: PostgreSQL with
`DateStyle = 'SQL, DMY'`, `TimeZone = 'America/New_York'` and
`standard_conforming_strings = off`, and DuckDB with a non-UTC `TimeZone`, checking daily
partitions of a non-UTC zone, static date partitions and whole tables. The source pins its
own session and gives the user's connection back with the user's settings.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import psycopg
import pytest
from postgres import PostgresResource, PostgresServer
from support import evaluations
from test_pushdown import _outcomes

import dagster_dataframely as dd

UTC = dt.timezone.utc  # dt.UTC is 3.11+
BERLIN = ZoneInfo("Europe/Berlin")
DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="Europe/Berlin")
STATIC = dg.StaticPartitionsDefinition(["2024-01-01", "2024-01-02"])
USER_SETTINGS = {
    "DateStyle": "SQL, DMY",
    "TimeZone": "America/New_York",
    "standard_conforming_strings": "off",
}


class Ledger(dy.Schema):
    entry_id = dy.Int64(primary_key=True)
    code = dy.String(regex=r"^[A-Z]{3}\.[0-9]$")  # `\.` is a dot only with conforming strings
    booked_on = dy.Date(min=dt.date(2024, 1, 2))
    booked_at = dy.Datetime(min=dt.datetime(2024, 1, 1, 23, 45))
    taken_at = dy.Datetime(time_zone="UTC")
    folder = dy.String()

    @dy.rule()
    def folder_is_known(cls) -> pl.Expr:
        """`\t` is a tab in a literal without standard conforming strings."""
        return pl.col("folder").is_in([r"C:\tmp", "D:"])


#: The rows, as polars reads them: around Berlin's midnight between Jan 1 and Jan 2.
ROWS = pl.DataFrame(
    {
        "entry_id": [1, 2, 3, 4, 5, 6],
        "code": ["EUR.1", "EURx1", "USD.2", "CHF", "GBP.3", "EUR\\.1"],
        "booked_on": [dt.date(2024, 1, 1), dt.date(2024, 1, 2)] * 3,
        "booked_at": [dt.datetime(2024, 1, 1, 23, 30), dt.datetime(2024, 1, 2, 0, 30)] * 3,
        "taken_at": [
            dt.datetime(2024, 1, 1, 22, 30, tzinfo=UTC),  # 23:30 in Berlin
            dt.datetime(2024, 1, 1, 23, 30, tzinfo=UTC),  # 00:30 on Jan 2 in Berlin
        ]
        * 3,
        "folder": [r"C:\tmp", "D:", r"C:\tmp", "E:", r"C:\tmp", "D:"],
    },
    schema_overrides={"taken_at": pl.Datetime("us", "UTC")},
)


def _expected(rows: pl.DataFrame) -> dict[str, tuple[int, int]]:
    """check name -> (failed rows, rows), as Dataframely counts them on `rows`."""
    _, failures = Ledger.filter(rows)
    counts = failures.counts()
    rules = ("primary_key", "code|regex", "booked_on|min", "booked_at|min", "folder_is_known")
    return {
        "dy_rule__" + rule.replace("|", "__"): (counts.get(rule, 0), rows.height) for rule in rules
    }


#: partition_expr, partitions, partition key -> the rows polars selects for it.
SECOND_DAY = dt.datetime(2024, 1, 2, tzinfo=BERLIN)
CASES = {
    "whole table": (None, None, None, ROWS),
    "static date keys": ("booked_on", STATIC, "2024-01-02",
                         ROWS.filter(pl.col("booked_on") == SECOND_DAY.date())),
    "naive, Berlin's day": ("booked_at", DAYS, "2024-01-02",
                            ROWS.filter(pl.col("booked_at") >= SECOND_DAY.replace(tzinfo=None))),
    "zoned, Berlin's day": ("taken_at", DAYS, "2024-01-02",
                            ROWS.filter(pl.col("taken_at") >= SECOND_DAY.astimezone(UTC))),
}  # fmt: skip


def _run(
    source: dd.sources.Source, resources: dict[str, Any], case: str, schema: type[Ledger] = Ledger
) -> Any:
    _, partitions, key, _ = CASES[case]

    @dg.asset(
        name="ledger", partitions_def=partitions, metadata={"dagster/table_name": "books.ledger"}
    )
    def ledger() -> None:
        """Loaded by another tool; the run only marks the partition."""

    checks = dd.schema_checks(schema, asset="ledger", partitions_def=partitions, source=source)
    return dg.materialize(
        [ledger, checks], resources=resources, partition_key=key, raise_on_error=False
    )


def _assert_as_polars(result: Any, case: str) -> None:
    assert evaluations(result)["dy_schema__columns"].passed
    outcomes = _outcomes(result)
    found = {name: (failed, rows) for name, (failed, rows, _) in outcomes.items()}
    expected = _expected(CASES[case][3])
    assert {name: found[name] for name in expected} == expected
    assert expected["dy_rule__code__regex"][1] > 0  # the partition selects rows


# ------------------------------------ PostgreSQL ------------------------------------ #

TABLE = """
CREATE SCHEMA IF NOT EXISTS books;
DROP TABLE IF EXISTS books.ledger;
CREATE TABLE books.ledger (
    entry_id bigint, code text, booked_on date, booked_at timestamp, taken_at timestamptz,
    folder text
);
"""


@pytest.fixture(scope="module")
def clerk(postgres: PostgresServer) -> PostgresServer:
    """The server with `books.ledger` and a role `clerk` whose sessions start with
    `USER_SETTINGS`."""
    with postgres.connect() as connection:
        connection.execute(TABLE)
        with connection.cursor() as cursor:
            insert = "INSERT INTO books.ledger VALUES (%s, %s, %s, %s, %s, %s)"
            cursor.executemany(insert, ROWS.rows())
        connection.execute("DROP OWNED BY clerk" if _exists(connection, "clerk") else "SELECT 1")
        connection.execute("DROP ROLE IF EXISTS clerk")
        connection.execute("CREATE ROLE clerk LOGIN")
        connection.execute("GRANT USAGE ON SCHEMA books TO clerk")
        connection.execute("GRANT SELECT ON books.ledger TO clerk")
        for name, value in USER_SETTINGS.items():
            connection.execute(f"ALTER ROLE clerk SET {name} = '{value}'")
    return postgres


def _exists(connection: psycopg.Connection, role: str) -> bool:
    found = connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    return found is not None


def _settings(connection: psycopg.Connection) -> dict[str, str]:
    return {name: connection.execute(f"SHOW {name}").fetchone()[0] for name in USER_SETTINGS}  # type: ignore[index]


@pytest.mark.parametrize("case", list(CASES))
def test_a_postgres_session_of_other_settings_checks_what_polars_checks(
    clerk: PostgresServer, case: str
) -> None:
    connection = psycopg.connect(clerk.conninfo_for("clerk"))  # the resource: one connection
    assert _settings(connection) == USER_SETTINGS
    source = dd.sources.SQLTableSource(
        resource_key="warehouse", dialect="postgres", partition_expr=CASES[case][0]
    )

    result = _run(source, {"warehouse": connection}, case)

    _assert_as_polars(result, case)
    assert _settings(connection) == USER_SETTINGS  # given back with the user's settings
    connection.close()


@pytest.mark.parametrize("case", ["whole table", "static date keys"])
@pytest.mark.parametrize("setting", list(USER_SETTINGS))
def test_each_postgres_setting_alone_leaves_the_counts_polars(
    clerk: PostgresServer, setting: str, case: str
) -> None:
    # One setting at a time, so that none hides behind another: DateStyle turned a text cast
    # of the date keys into '02/01/2024' (no row), standard_conforming_strings=off read the
    # `\t` of a string literal as a tab (its valid rows failed).
    role = f"clerk_{setting.lower()}"
    with clerk.connect() as connection:
        connection.execute(f"DROP OWNED BY {role}" if _exists(connection, role) else "SELECT 1")
        connection.execute(f"DROP ROLE IF EXISTS {role}")
        connection.execute(f"CREATE ROLE {role} LOGIN")
        connection.execute(f"GRANT USAGE ON SCHEMA books TO {role}")
        connection.execute(f"GRANT SELECT ON books.ledger TO {role}")
        connection.execute(f"ALTER ROLE {role} SET {setting} = '{USER_SETTINGS[setting]}'")
    source = dd.sources.SQLTableSource(
        resource_key="warehouse", dialect="postgres", partition_expr=CASES[case][0]
    )
    resource = PostgresResource(conninfo=clerk.conninfo_for(role))

    _assert_as_polars(_run(source, {"warehouse": resource}, case), case)


# -------------------------------------- DuckDB -------------------------------------- #


class ZonedDuckDB(dg.ConfigurableResource):
    """A DuckDB resource whose database runs in New York time."""

    database: str

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with duckdb.connect(self.database) as connection:
            connection.execute("SET GLOBAL TimeZone = 'America/New_York'")
            yield connection


@pytest.mark.parametrize("pushdown", [True, False])
@pytest.mark.parametrize("case", list(CASES))
def test_a_duckdb_in_another_time_zone_checks_what_polars_checks(
    tmp_path: Path, case: str, pushdown: bool
) -> None:
    database = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute(TABLE.replace("timestamptz", "TIMESTAMP WITH TIME ZONE"))
        connection.register("frame", ROWS.to_arrow())
        connection.execute("INSERT INTO books.ledger SELECT * FROM frame")
    source = dd.sources.DuckDBTableSource(partition_expr=CASES[case][0], pushdown=pushdown)
    resource = ZonedDuckDB(database=str(database))

    # Read as `Ledger` declares it: the source pins DuckDB's zone to `UTC` (not `Etc/UTC`).
    result = _run(source, {"duckdb": resource}, case, Ledger)

    _assert_as_polars(result, case)
    with resource.get_connection() as connection:  # the user's session keeps its zone
        assert connection.execute("SELECT current_setting('TimeZone')").fetchone() == (
            "America/New_York",
        )
