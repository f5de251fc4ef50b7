"""Table checks where the table lives elsewhere: a PostgreSQL table checked in PostgreSQL (the
newest timestamp found by a `MAX` in the rules' one aggregate query, one Berlin day at a
time, naive and zoned columns), and one partition selected from the real CLI with a
persistent DAGSTER_HOME."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
from pathlib import Path

import dagster as dg
import dataframely as dy
import pytest
from postgres import PostgresResource, PostgresServer
from support import dg_launch, evaluations, logs

import dagster_dataframely as dd

UTC = dt.timezone.utc
ROWS, FRESH = "dy_table__row_count", "dy_table__freshness"
DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="Europe/Berlin")


@dd.expect_rows(min=3)
@dd.expect_fresh("ordered_at", within="2h", time_zone="Europe/Berlin")
class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    ordered_at = dy.Datetime()
    paid_at = dy.Datetime(time_zone="UTC", nullable=True)


TABLE = """
CREATE SCHEMA IF NOT EXISTS shop;
DROP TABLE IF EXISTS shop.orders;
CREATE TABLE shop.orders (order_id bigint, ordered_at timestamp, paid_at timestamptz);
INSERT INTO shop.orders VALUES
    (1, '2024-01-01 23:30', '2024-01-01 22:45+00'),
    (2, '2024-01-02 00:30', NULL),
    (3, '2024-01-02 12:00', '2024-01-02 11:15+00'),
    (4, '2024-01-02 22:40', '2024-01-02 21:59+00'),
    (5, '2024-01-03 00:10', '2024-01-02 23:20+00');
"""


@pytest.fixture(scope="module")
def server(postgres: PostgresServer) -> PostgresServer:
    with postgres.connect() as connection:
        connection.execute(TABLE)
    return postgres


def _run(server: PostgresServer, day: str, **settings: object) -> tuple[dg.DagsterInstance, object]:
    @dg.asset(name="orders", partitions_def=DAYS, metadata={"dagster/table_name": "shop.orders"})
    def orders() -> None:
        """Loaded by another tool; the run only marks the partition."""

    source = dd.sources.SQLTableSource(
        resource_key="warehouse", dialect="postgres", partition_expr="ordered_at"
    )
    checks = dd.schema_checks(Orders, asset=orders, source=source, **settings)  # type: ignore[arg-type]
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [orders, checks],
        resources={"warehouse": PostgresResource(conninfo=server.conninfo)},
        partition_key=day,
        instance=instance,
        raise_on_error=False,
    )
    return instance, result


def test_a_berlin_day_in_postgres_has_its_volume_and_freshness(server: PostgresServer) -> None:
    instance, result = _run(server, "2024-01-02")

    checked = evaluations(result)  # type: ignore[arg-type]
    # Berlin's 2 January holds orders 2, 3 and 4 (wall-clock times); it ends at 23:00 UTC,
    # and its newest order, 22:40 in Berlin, is 21:40 UTC: 80 minutes old.
    assert checked[ROWS].metadata["dy_row_count"].value == 3 and checked[ROWS].passed
    assert checked[FRESH].metadata["dy_newest"].value == "2024-01-02T21:40:00+00:00"
    assert checked[FRESH].metadata["dy_age_seconds"].value == 80 * 60
    assert checked[FRESH].passed
    sent = [line for line in logs(instance, result) if line.startswith("Pushed down to postgres")]  # type: ignore[arg-type]
    assert any('MAX("ordered_at")' in line and "COUNT(*)" in line for line in sent), sent


def test_a_zoned_postgres_column_is_compared_by_the_instant(server: PostgresServer) -> None:
    fresh = dd.ExpectFresh("paid_at", within="1h", severity="warn")

    _, result = _run(server, "2024-01-02", expect_fresh=fresh, expect_rows={"min": 4})

    checked = evaluations(result)  # type: ignore[arg-type]
    # The newest payment of the day's orders, 21:59 UTC, is 61 minutes before 23:00 UTC.
    assert checked[FRESH].metadata["dy_newest"].value == "2024-01-02T21:59:00+00:00"
    assert (checked[FRESH].passed, checked[FRESH].severity) == (False, dg.AssetCheckSeverity.WARN)
    assert (checked[ROWS].passed, checked[ROWS].severity) == (False, dg.AssetCheckSeverity.ERROR)


LOCATION = """\
import datetime as dt

import dagster as dg
import dataframely as dy
import polars as pl

import dagster_dataframely as dd

days = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="America/New_York")
events = dg.AssetSpec("events", partitions_def=days)


@dd.expect_rows(min=2, severity="warn")
@dd.expect_fresh("at", within="3h", time_zone="America/New_York")
class Events(dy.Schema):
    event_id = dy.Int64(primary_key=True)
    at = dy.Datetime()


def read_events(context: dg.AssetCheckExecutionContext) -> pl.DataFrame:
    day = dt.datetime.fromisoformat(context.partition_key)
    late = dt.timedelta(hours=22) if context.partition_key == "2024-01-02" else dt.timedelta(0)
    return pl.DataFrame({"event_id": [1, 2, 3], "at": [day, day, day + late]})


events_checks = dd.schema_checks(Events, asset=events, source=read_events)
defs = dg.Definitions(
    assets=[events],
    asset_checks=[events_checks],
    jobs=[dd.checks_job(events_checks, name="events_checks")],
)
"""


def test_the_cli_checks_the_volume_and_freshness_of_the_partition_it_selects(
    tmp_path: Path,
) -> None:
    (tmp_path / "location.py").write_text(LOCATION)

    launched, home = dg_launch(tmp_path, "events_checks", partition="2024-01-02")

    assert launched.returncode == 0, (launched.stdout + launched.stderr)[-3000:]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        (run,) = instance.get_runs()
        found = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    checked = {
        e.dagster_event.event_specific_data.check_name: e.dagster_event.event_specific_data  # type: ignore[union-attr]
        for e in found
    }
    assert {e.partition for e in checked.values()} == {"2024-01-02"}
    # New York's 2 January ends at 05:00 UTC on the 3rd; its newest event, 22:00 New York
    # time, is 03:00 UTC: two hours old.
    assert checked[FRESH].metadata["dy_age_seconds"].value == 2 * 3600
    assert checked[FRESH].passed and checked[ROWS].passed
