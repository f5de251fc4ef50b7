"""`DatabricksSQLResource` and `SQLTableSource(dialect="databricks")` in real runs through the
Databricks SQL connector (`databricks.sql`, its Statement Execution API backend), against a
stand-in warehouse that runs each statement on a local Spark (`databricks_sea`): every rule
kind counted in the warehouse with Dataframely's counts, a session's own parameters put back,
a daily partition, a collated column, and each way a check cannot reach or read the table.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from databricks_sea import HTTP_PATH, TOKEN, Warehouse, warehouse
from spark import GROUP, spark_view, stamps
from support import dataframely_rule_counts, failure_text, rule_outcomes
from test_catalogue_kinds import Everything
from test_sql_spark import EVERYTHING, EVERYTHING_FALLBACKS

import dagster_dataframely as dd

pytestmark = GROUP


@pytest.fixture(scope="module")
def standin(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Warehouse]:
    """One stand-in warehouse for the module, with `Everything`'s rows as table `payments`."""
    spark_view(spark, "everything_rows", EVERYTHING)
    spark.sql("DROP TABLE IF EXISTS payments")
    spark.sql("CREATE TABLE payments USING parquet AS SELECT * FROM everything_rows")
    with warehouse(spark, tmp_path_factory.mktemp("warehouse")) as served:
        yield served


def _resource(standin: Warehouse, **settings: Any) -> dd.sources.DatabricksSQLResource:
    return dd.sources.DatabricksSQLResource(
        server_hostname=standin.host,
        http_path=HTTP_PATH,
        access_token=TOKEN,
        connect_args={**standin.connect_args, **settings.pop("connect_args", {})},
        **settings,
    )


def _run(
    schema: type[dy.Schema], resource: Any, *, table: str = "payments", **source: Any
) -> dg.ExecuteInProcessResult:
    spec = dg.AssetSpec("payments", metadata={"dagster/table_name": table})
    checks = dd.schema_checks(
        schema,
        asset="payments",
        source=dd.sources.SQLTableSource(resource_key="databricks", dialect="databricks", **source),
    )
    return dg.materialize(
        [spec, checks],
        resources={"databricks": resource},
        selection=dg.AssetSelection.all_asset_checks(),
        raise_on_error=False,
    )


def _nonzero(counts: dict[str, Any]) -> dict[str, int]:
    return {name: count for name, count in counts.items() if count}


def test_every_rule_kind_runs_in_the_warehouse_with_dataframelys_counts(
    spark: Any, standin: Warehouse
) -> None:
    result = _run(Everything, _resource(standin))

    outcomes = rule_outcomes(result)
    stored = pl.from_arrow(spark.table("payments").toArrow())
    assert isinstance(stored, pl.DataFrame)
    assert _nonzero({n: c for n, (c, _) in outcomes.items()}) == _nonzero(
        dataframely_rule_counts(Everything, stored)
    )
    assert {n for n, (_, engine) in outcomes.items() if engine != "databricks"} == (
        EVERYTHING_FALLBACKS
    )
    # Through the connector's SEA backend: sessions and statements of the REST API.
    assert ("POST", "/api/2.0/sql/sessions") in standin.requests
    assert ("POST", "/api/2.0/sql/statements") in standin.requests


def test_a_session_with_ansi_off_in_new_york_counts_the_same_and_is_put_back(
    spark: Any, standin: Warehouse
) -> None:
    Stamps, frame = stamps()
    spark_view(spark, "stamps_rows", frame)
    spark.sql("DROP TABLE IF EXISTS stamps")
    spark.sql("CREATE TABLE stamps USING parquet AS SELECT * FROM stamps_rows")
    mine = {"ANSI_MODE": "false", "TIMEZONE": "America/New_York"}
    opened: list[Any] = []

    class Mine(dg.ConfigurableResource):
        """A user's own resource: the connector's connection with the session's parameters."""

        @contextmanager
        def get_connection(self) -> Iterator[Any]:
            from databricks import sql

            connection = sql.connect(
                server_hostname="127.0.0.1",
                port=standin.port,
                http_path=HTTP_PATH,
                access_token=TOKEN,
                session_configuration=mine,
                **standin.connect_args,
            )
            opened.append(connection)
            try:
                yield connection
                cursor = connection.cursor()
                cursor.execute("SET")
                opened.append(dict(cursor.fetchall()))
            finally:
                connection.close()

    result = _run(Stamps, Mine(), table="stamps")

    assert {engine for _, engine in rule_outcomes(result).values()} == {"databricks"}
    assert _nonzero(
        {n: c for n, (c, _) in rule_outcomes(result).items()}
    ) == dataframely_rule_counts(Stamps, frame)
    assert {k.upper(): v for k, v in opened[1].items()} == mine


@pytest.mark.parametrize("day", ["2021-01-01", "2020-06-01"], ids=["with rows", "empty"])
def test_a_daily_partition_is_checked_alone(spark: Any, standin: Warehouse, day: str) -> None:
    # The empty day: the warehouse's Arrow results have no rows, the fallback read included.
    days = dg.DailyPartitionsDefinition(start_date="2019-12-31")

    @dg.asset(name="payments", partitions_def=days, metadata={"dagster/table_name": "payments"})
    def payments() -> None:
        """Written elsewhere; the run only marks the partition."""

    checks = dd.schema_checks(
        Everything,
        asset="payments",
        partitions_def=days,
        source=dd.sources.SQLTableSource(
            resource_key="databricks", dialect="databricks", partition_expr="day"
        ),
    )
    result = dg.materialize(
        [payments, checks],
        resources={"databricks": _resource(standin)},
        partition_key=day,
        raise_on_error=False,
    )

    stored = pl.from_arrow(spark.table("payments").toArrow())
    assert isinstance(stored, pl.DataFrame)
    rows = stored.filter(pl.col("day") == dt.date.fromisoformat(day))
    outcomes = rule_outcomes(result)
    assert _nonzero({n: c for n, (c, _) in outcomes.items()}) == _nonzero(
        dataframely_rule_counts(Everything, rows)
    )
    assert {n for n, (_, engine) in outcomes.items() if engine != "databricks"} == (
        EVERYTHING_FALLBACKS  # read into polars, from an empty result on the empty day
    )


def test_a_utf8_lcase_column_is_counted_by_its_bytes(spark: Any, standin: Warehouse) -> None:
    class Tags(dy.Schema):
        tag = dy.String(primary_key=True, regex="^[a-b]$", check={"a": lambda c: c != "a"})

    frame = pl.DataFrame({"tag": ["a", "A", "b", "B", "b"]})
    spark_view(spark, "tags_rows", frame, collated=("tag",))
    spark.sql("DROP TABLE IF EXISTS tags")
    spark.sql("CREATE TABLE tags USING parquet AS SELECT * FROM tags_rows")

    result = _run(Tags, _resource(standin), table="tags")

    assert rule_outcomes(result) == {
        "dy_rule__primary_key": (2, "databricks"),
        "dy_rule__tag__regex": (2, "databricks"),
        "dy_rule__tag__check__a": (1, "databricks"),
        "dy_rule__tag__nullability": (0, "databricks"),
    }


def test_a_missing_table_fails_naming_the_table_and_the_fix(standin: Warehouse) -> None:
    result = _run(Everything, _resource(standin), table="no_such_table")

    message = failure_text(result)
    assert "SourceReadError" in message
    assert "asset payments" in message
    assert "databricks table 'no_such_table' via resource 'databricks'" in message
    assert "TABLE_OR_VIEW_NOT_FOUND" in message
    assert "Check the table's name" in message


def test_a_connection_lost_mid_check_is_a_connection_error(
    spark: Any, standin: Warehouse, tmp_path: Path
) -> None:
    with warehouse(spark, tmp_path) as dying:
        dying.drop_after = 3  # the pins read and set, then a query of the check
        result = _run(Everything, _resource(dying))

    message = failure_text(result)
    assert "SourceConnectionError" in message
    assert "Lost the connection to the database of asset payments" in message


@pytest.mark.parametrize(
    "host", ["127.0.0.1:9", "no-such-warehouse.invalid"], ids=["closed port", "unknown host"]
)
def test_an_unreachable_warehouse_fails_fast_naming_the_host(host: str) -> None:
    resource = dd.sources.DatabricksSQLResource(
        server_hostname=host, http_path=HTTP_PATH, access_token=TOKEN
    )

    result = _run(Everything, resource)

    message = failure_text(result)
    assert "SourceConnectionError" in message
    assert "Could not connect to the database of asset payments" in message
    assert host.split(":")[0] in message
    assert "Check the resource's server_hostname" in message
