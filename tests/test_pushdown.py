"""DuckDB pushdown in real runs: a DuckDB file's table checked where it lives.

The rules with an exact SQL form run in DuckDB (`dy_engine: duckdb`), the others, and a key
rule beside the embedded database, stream only their columns into polars (`dy_engine: polars
(...)`), in the same step and with the same counts
as `pushdown=False`; the step log shows the SQL sent; a partition of a naive `TIMESTAMP`
column is the wall-clock window of the partition's time zone; dbt's models are checked in
the DuckDB file dbt built.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource
from dbt_shop import DATABASE, ShopCustomers, ShopOrders, dbt_models, prepare, resources
from polars.testing import assert_frame_equal
from sqlglot import exp
from support import KEY_IN_POLARS, evaluations, grouping_keys, logs

import dagster_dataframely as dd
from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.evaluate import evaluate
from dagster_dataframely._engine.sql.backend import SQLTable
from dagster_dataframely.errors import InvalidSourceError


class Payments(dy.Schema):
    payment_id = dy.Int64(primary_key=True)
    amount = dy.Float64(nullable=True, min=0, allow_nan=False)
    currency = dy.String(regex=r"^[A-Z]{3}$", max_length=3)
    reference = dy.String(nullable=True, regex=r"^\w+$")  # `\w` is Unicode in polars
    paid_at = dy.Datetime(nullable=True)

    @dy.rule()
    def refunds_have_a_reference(cls) -> pl.Expr:
        """A negative amount carries a reference."""
        return (pl.col("amount") >= 0) | pl.col("reference").is_not_null()

    @dy.rule()
    def amount_per_cent_is_whole(cls) -> pl.Expr:
        """Amounts are whole cents."""
        return (pl.col("amount") * 100).round(0) == pl.col("amount") * 100  # no SQL form here


PAYMENTS = pl.DataFrame(
    {
        "payment_id": [1, 2, 2, 3, 4, 5],
        "amount": [10.0, -5.0, float("nan"), 1.005, 3.0, None],
        "currency": ["EUR", "eur", "USD", "EURO", "CHF", "GBP"],
        "reference": ["r1", None, "größe", "a b", None, "x"],
        "paid_at": [dt.datetime(2024, 1, 1, 23, 30), dt.datetime(2024, 1, 2, 0, 30)] * 3,
    }
)
FALLBACKS = {"dy_rule__reference__regex", "dy_rule__amount_per_cent_is_whole"}
DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="Europe/Berlin")


def _database(path: Path) -> Path:
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA finance")
        connection.register("frame", PAYMENTS.to_arrow())
        connection.execute("CREATE TABLE finance.payments AS SELECT * FROM frame")
    return path


def _run(
    database: Path, source: dd.sources.DuckDBTableSource
) -> tuple[dg.DagsterInstance, dg.ExecuteInProcessResult]:
    return run_payments_checks(Payments, source, {"duckdb": DuckDBResource(database=str(database))})


def run_payments_checks(
    schema: type[dy.Schema], source: dd.sources.Source, resources: dict[str, Any]
) -> tuple[dg.DagsterInstance, dg.ExecuteInProcessResult]:
    """A job of `schema`'s checks of the external table `finance.payments`, read by `source`
    through `resources`, run on an instance of its own."""
    spec = dg.AssetSpec("payments", metadata={"dagster/table_name": "finance.payments"})
    checks = dd.schema_checks(schema, asset="payments", source=source)
    job = dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets("payments"))
    defs = dg.Definitions(assets=[spec], asset_checks=[checks], jobs=[job], resources=resources)
    instance = dg.DagsterInstance.ephemeral()
    result = defs.resolve_job_def("checks").execute_in_process(
        instance=instance, raise_on_error=False
    )
    return instance, result


def _outcomes(result: dg.ExecuteInProcessResult) -> dict[str, tuple[int, int, str]]:
    """check name -> (failed rows, rows, engine), for each rule check."""
    return {
        name: (
            e.metadata["dy_failed_count"].value,
            e.metadata["dy_row_count"].value,
            e.metadata["dy_engine"].value,
        )  # type: ignore[misc]
        for name, e in evaluations(result).items()
        if "dy_engine" in e.metadata
    }


def test_rules_run_in_duckdb_and_the_rest_in_polars_with_streaming_counts(
    tmp_path: Path, streamed_keys: None
) -> None:
    database = _database(tmp_path / "warehouse.duckdb")

    instance, pushed = _run(database, dd.sources.DuckDBTableSource())
    _, streamed = _run(database, dd.sources.DuckDBTableSource(pushdown=False))

    outcomes = _outcomes(pushed)
    engines = {name: engine for name, (_, _, engine) in outcomes.items()}
    in_polars = {name for name, engine in engines.items() if engine.startswith("polars")}
    assert in_polars == {*FALLBACKS, "dy_rule__primary_key"}
    assert engines["dy_rule__primary_key"] == KEY_IN_POLARS
    assert {engine.split(" (")[0] for engine in engines.values()} == {"duckdb", "polars"}
    # Each rule that left the database says why, in dy_engine and in the step log.
    assert all(engines[name].startswith("polars (") for name in FALLBACKS)
    logged = "\n".join(e.message or "" for e in instance.all_logs(pushed.run_id))
    assert "runs in polars, not duckdb" in logged
    counts = {name: (failed, rows) for name, (failed, rows, _) in outcomes.items()}
    assert counts == {name: (f, r) for name, (f, r, _) in _outcomes(streamed).items()}
    assert set(_outcomes(streamed).values()) == {(f, r, "polars") for f, r in counts.values()}
    assert counts["dy_rule__primary_key"] == (2, 6)
    assert counts["dy_rule__currency__regex"] == (2, 6)
    sample = evaluations(pushed)["dy_rule__currency__regex"].metadata["dy_failed_sample"]
    assert {row.data["currency"] for row in sample.records} == {"eur", "EURO"}  # type: ignore[attr-defined]
    # The primary key's sample: each repeated key as often as it occurs, as streaming shows it.
    key_samples = [
        [row.data["payment_id"] for row in sample.records]  # type: ignore[attr-defined]
        for sample in (
            evaluations(run)["dy_rule__primary_key"].metadata["dy_failed_sample"]
            for run in (pushed, streamed)
        )
    ]
    assert key_samples == [[2, 2], [2, 2]]
    sent = [line for line in logs(instance, pushed) if line.startswith("Pushed down to DuckDB:")]
    assert any('FROM "finance"."payments"' in line and "COUNT(*)" in line for line in sent)
    # The key is not grouped in DuckDB: polars counted it over the key's column streamed.
    assert not any("GROUP BY" in line for line in sent)


class Events(dy.Schema):
    event_id = dy.Int64(primary_key=True)


@pytest.mark.parametrize(
    ("rows", "engine"), [(999_999, "duckdb"), (1_000_000, KEY_IN_POLARS), (None, KEY_IN_POLARS)]
)
def test_a_duckdb_tables_size_decides_where_its_key_is_counted(
    tmp_path: Path, rows: int | None, engine: str
) -> None:
    """Below a million rows DuckDB groups the key for less than starting a stream of it;
    from a million, polars counts it over the key's column streamed, for less CPU and memory.
    The catalog's count decides; a view has none, and may read anything, so it streams. The
    counts are the same either way."""
    database = tmp_path / "events.duckdb"
    with duckdb.connect(str(database)) as connection:
        size = rows or 1_000
        # One key repeated twice: 2 failing rows.
        connection.execute(
            f"create table events as select case when range = 7 then 6 else range end as "
            f"event_id from range({size})"
        )
        if rows is None:
            connection.execute("alter table events rename to stored")
            connection.execute("create view events as select * from stored")
    checks = dd.schema_checks(Events, asset="events", source=dd.sources.DuckDBTableSource())
    result = dg.materialize(
        [dg.AssetSpec("events"), checks],
        resources={"duckdb": DuckDBResource(database=str(database))},
        selection=dg.AssetSelection.checks(checks),
        raise_on_error=False,
    )

    key = evaluations(result)["dy_rule__primary_key"]
    assert key.metadata["dy_engine"].value == engine
    assert key.metadata["dy_failed_count"].value == 2


def test_repeated_keys_are_counted_and_sampled_by_one_duckdb_grouping(tmp_path: Path) -> None:
    """DuckDB's SQL key path, taken as a server's dialect takes it (a large DuckDB table's
    keys are counted in polars): one grouping counts the key and brings back its sample's
    keys."""
    connection = duckdb.connect(str(_database(tmp_path / "warehouse.duckdb")))
    sent: list[str] = []

    def run(sql: str) -> pl.DataFrame:
        sent.append(sql)
        return connection.sql(sql).pl()

    rows = exp.select(exp.Star()).from_("finance.payments")
    table = grouping_keys(SQLTable.of(rows, dialect="duckdb", run=run))
    keys = [rule for rule in rules(Payments) if rule.distinct_over is not None]
    pushed = table.evaluate(PAYMENTS.lazy(), keys, max_failure_samples=5, identify=["payment_id"])
    reference = evaluate(PAYMENTS.lazy(), keys, max_failure_samples=5, identify=["payment_id"])

    assert pushed.engines == {"primary_key": "duckdb"}
    assert dict(pushed.failed) == dict(reference.failed) == {"primary_key": 2}
    assert_frame_equal(pushed.samples["primary_key"], reference.samples["primary_key"])
    assert sum("GROUP BY" in sql for sql in sent) == 1


def _partitioned_run(database: Path, partition_expr: str) -> dg.ExecuteInProcessResult:
    """The checks of the Berlin-daily `payments` for the run of partition 2024-01-02."""

    @dg.asset(
        name="payments", partitions_def=DAYS, metadata={"dagster/table_name": "finance.payments"}
    )
    def payments() -> None:
        """Loaded by another tool; the run only marks the partition."""

    checks = dd.schema_checks(
        Payments,
        asset="payments",
        partitions_def=DAYS,
        source=dd.sources.DuckDBTableSource(partition_expr=partition_expr),
    )
    return dg.materialize(
        [payments, checks],
        resources={"duckdb": DuckDBResource(database=str(database))},
        partition_key="2024-01-02",
        raise_on_error=False,
    )


def test_a_naive_timestamp_partition_is_the_wall_clock_window_of_its_zone(
    tmp_path: Path,
) -> None:
    result = _partitioned_run(_database(tmp_path / "warehouse.duckdb"), "paid_at")

    # Berlin's 2024-01-02 holds the three payments at 00:30 wall-clock time, not 23:30.
    rows = {rows for _, rows, _ in _outcomes(result).values()}
    assert rows == {3}


@pytest.fixture(scope="module")
def parsed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepare(tmp_path_factory.mktemp("dbt"))


def test_dbt_models_are_checked_by_pushdown_in_the_file_dbt_built(
    parsed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "shop.duckdb"
    monkeypatch.setenv(DATABASE, str(database))
    defs = dd.with_schemas(
        dg.Definitions(assets=[dbt_models(parsed)], resources=resources(parsed, database)),
        {"orders": ShopOrders, "customers": ShopCustomers},
        source=dd.sources.DuckDBTableSource(),
    )

    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )

    checked = {
        (e.asset_key.to_user_string(), e.check_name): e
        for e in result.get_asset_check_evaluations()
        if "dy_engine" in e.metadata
    }
    key_engine = checked[("customers", "dy_rule__primary_key")].metadata["dy_engine"].value
    assert key_engine == "duckdb"  # a small model's key is grouped in DuckDB
    failing = {
        name: (e.metadata["dy_failed_count"].value, e.metadata["dy_engine"].value)
        for (_, name), e in checked.items()
        if not e.passed
    }
    assert failing == {
        "dy_rule__amount__min": (1, "duckdb"),
        "dy_rule__status__regex": (1, "duckdb"),
    }


def test_a_partition_expr_that_is_not_sql_fails_when_the_source_is_defined() -> None:
    # Not at the first run of the partition: the Definitions do not load.
    with pytest.raises(InvalidSourceError) as raised:
        dd.sources.DuckDBTableSource(partition_expr="paid_at >=")

    message = str(raised.value)
    assert "partition_expr='paid_at >=' is not a DuckDB SQL expression" in message
    assert "e.g. partition_expr='order_date'" in message


def test_yaml_turns_pushdown_off_for_a_duckdb_source() -> None:
    assert dd.sources.source_from_config("duckdb_table", {"pushdown": False}) == (
        dd.sources.DuckDBTableSource(pushdown=False)
    )
    assert dd.sources.source_from_config("duckdb_table", {}).pushdown is True  # type: ignore[attr-defined]
