"""`keep_failing_rows=` on a local Spark: the rows are kept in parquet files, selected by
Spark where every failing rule ran there (by polars otherwise), beside a path's files or in
the instance's storage; the session's catalog and warehouse folder are left as they were,
whether the rows are kept or the write is refused, and a refused write is told as one, never
as a rule Spark failed to evaluate. A collection's members keep the rows its filters remove
beside those failing their rules, as Dataframely's `filter` reports them."""

import os
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from ledger import MEMBERS, Ledger, ledger_frames
from spark import GROUP, spark_view
from support import dataframely_rule_counts, evaluations, logs, rule_outcomes
from test_catalogue_kinds import Everything
from test_failing_rows_collections import _assert_kept_as_dataframely
from test_sql_spark import EVERYTHING

import dagster_dataframely as dd

pytestmark = GROUP


class Payments(dy.Schema):
    """Rules Spark evaluates exactly, the key rule among them: Spark selects the rows."""

    payment_id = dy.Int64(primary_key=True)
    amount = dy.Float64(nullable=True, min=0)
    currency = dy.String(regex=r"^[A-Z]{3}$")


PAYMENTS = pl.DataFrame(
    {
        "payment_id": [1, 2, 2, 3, 4],
        "amount": [1.0, -1.0, 2.0, None, 5.0],
        "currency": ["EUR", "EUR", "eur", "USD", "CHF"],
    }
)
#: A temporary view whose name must be quoted.
VIEW = "`my payments`"


def _view(spark: Any) -> None:
    spark.createDataFrame(PAYMENTS.to_arrow()).createOrReplaceTempView("payments_rows")
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {VIEW} AS SELECT * FROM payments_rows")


def _run(
    spark: Any, schema: type[dy.Schema], source: dd.sources.Source, keep: bool | str, home: Path
) -> tuple[dg.DagsterInstance, dg.ExecuteInProcessResult]:
    spec = dg.AssetSpec("payments", metadata={"dagster/table_name": VIEW})
    checks = dd.schema_checks(schema, asset=spec, source=source, keep_failing_rows=keep)
    home.mkdir(exist_ok=True)
    instance = dg.DagsterInstance.local_temp(str(home))
    result = dg.materialize(
        [spec, checks],
        resources={"spark": spark},
        instance=instance,
        selection=dg.AssetSelection.all_asset_checks(),
        raise_on_error=False,
    )
    return instance, result


def _catalog_and_warehouse(spark: Any) -> tuple[set[str], set[str]]:
    """The names the session's catalog lists and its warehouse folder holds."""
    warehouse = spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")
    listed = {table.name for table in spark.catalog.listTables()}
    return listed, set(os.listdir(warehouse)) if os.path.isdir(warehouse) else set()


def _flag_counts(frame: pl.DataFrame) -> dict[str, int]:
    return {
        name: int(frame[name].sum())
        for name in frame.columns
        if name.startswith("dy_rule__") and frame[name].sum()
    }


def test_a_views_failing_rows_are_selected_by_spark_and_kept_in_files(
    spark: Any, tmp_path: Path
) -> None:
    _view(spark)
    before = _catalog_and_warehouse(spark)
    source = dd.sources.SparkTableSource()

    _run(spark, Payments, source, True, tmp_path / "home")  # a second run keeps them again
    instance, result = _run(spark, Payments, source, True, tmp_path / "home")

    path = Path(instance.storage_directory()) / "payments__dy_failures" / "__unpartitioned.parquet"
    kept = pl.read_parquet(path)
    failing = {name: count for name, (count, _) in rule_outcomes(result).items() if count}
    assert failing == {n: c for n, c in dataframely_rule_counts(Payments, PAYMENTS).items() if c}
    assert _flag_counts(kept) == failing
    assert kept.height == PAYMENTS.height - Payments.filter(PAYMENTS)[0].height
    assert set(kept["dy_run_id"]) == {result.run_id}
    check = evaluations(result)["dy_rule__currency__regex"]
    assert check.metadata["dy_failing_rows_table"].value == str(path)
    query = eval(check.metadata["dy_failing_rows"].value, {"pl": pl})
    assert query.collect()["currency"].to_list() == ["eur"]
    sent = [line for line in logs(instance, result) if line.startswith("Pushed down to spark")]
    assert any("__dy_kept" in line for line in sent)  # selected in Spark, not read out
    assert _catalog_and_warehouse(spark) == before


def test_a_paths_failing_rows_are_kept_beside_it_a_fallback_rule_in_polars(
    spark: Any, tmp_path: Path
) -> None:
    path = tmp_path / "payments"
    spark_view(spark, "everything_rows", EVERYTHING)
    spark.table("everything_rows").write.mode("overwrite").parquet(str(path))
    source = dd.sources.SparkTableSource(path=str(path))

    _, result = _run(spark, Everything, source, True, tmp_path / "home")

    kept = pl.read_parquet(tmp_path / "payments__dy_failures" / "__unpartitioned.parquet")
    failing = {name: count for name, (count, _) in rule_outcomes(result).items() if count}
    assert "dy_rule__size__check__even" in failing  # no SQL form: polars selects the rows
    assert _flag_counts(kept) == failing
    assert failing == {
        n: c for n, c in dataframely_rule_counts(Everything, EVERYTHING).items() if c
    }


def test_a_refused_write_is_told_as_one_and_leaves_nothing_behind(
    spark: Any, tmp_path: Path
) -> None:
    _view(spark)
    taken = tmp_path / "taken"
    taken.write_text("a file where the folder would be")
    before = _catalog_and_warehouse(spark)

    _, result = _run(spark, Payments, dd.sources.SparkTableSource(), str(taken), tmp_path / "home")

    failing = {name: count for name, (count, _) in rule_outcomes(result).items() if count}
    assert failing == {n: c for n, c in dataframely_rule_counts(Payments, PAYMENTS).items() if c}
    error = evaluations(result)["dy_rule__primary_key"].metadata["dy_failing_rows_error"].value
    assert error.startswith("FailingRowsWriteError: ")
    assert str(taken / "payments__dy_failures") in error and "reported all the same" in error
    assert "keep_failing_rows=" in error
    assert "RuleEvaluationError" not in error and "report the rule" not in error
    assert _catalog_and_warehouse(spark) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "taken"]


def test_a_collections_members_keep_the_rows_its_filters_remove(spark: Any, tmp_path: Path) -> None:
    frames = ledger_frames()
    for member, frame in frames.items():
        spark_view(spark, f"ledger_{MEMBERS[member]}", frame)
    kept = tmp_path / "kept"
    checks = dd.collection_checks(
        Ledger,
        members=MEMBERS,
        sources={m: dd.sources.SparkTableSource(table=f"ledger_{t}") for m, t in MEMBERS.items()},
        keep_failing_rows=str(kept),
    )

    result = dg.materialize(
        [*(dg.AssetSpec(key) for key in MEMBERS.values()), checks],
        resources={"spark": spark},
        selection=dg.AssetSelection.all() | dg.AssetSelection.all_asset_checks(),
        raise_on_error=False,
    )

    told = [e.metadata.get("dy_failing_rows_error") for e in result.get_asset_check_evaluations()]
    assert told == [None] * len(told)
    for member, asset in MEMBERS.items():
        rows = pl.read_parquet(kept / f"{asset}__dy_failures" / "*.parquet")
        _assert_kept_as_dataframely(Ledger, frames, member, rows)


class DailyPayments(dy.Schema):
    payment_id = dy.Int64(primary_key=True)
    amount = dy.Float64(min=0)
    day = dy.Date()


def test_a_range_run_keeps_the_rows_spark_selects_one_file_per_partition(
    spark: Any, tmp_path: Path
) -> None:
    days = dg.DailyPartitionsDefinition(start_date="2024-01-01")
    rows = pl.DataFrame(
        {
            "payment_id": [1, 2, 3, 4, 5],
            "amount": [-1.0, 5.0, -2.0, -3.0, -4.0],
            "day": pl.Series(
                ["2024-01-01", "2024-01-01", "2024-01-02", "2024-01-02", "2024-01-03"]
            ).str.to_date(),
        }
    )
    spark_view(spark, "daily_payments", rows)
    kept = tmp_path / "kept"

    @dg.asset(name="payments", partitions_def=days)
    def payments() -> None:
        """Written by Spark; the run only marks the partitions."""

    checks = dd.schema_checks(
        DailyPayments,
        asset="payments",
        partitions_def=days,
        source=dd.sources.SparkTableSource(table="daily_payments", partition_expr="day"),
        keep_failing_rows=str(kept),
    )
    (tmp_path / "home").mkdir()
    instance = dg.DagsterInstance.local_temp(str(tmp_path / "home"))
    range_tags = {
        "dagster/asset_partition_range_start": "2024-01-01",
        "dagster/asset_partition_range_end": "2024-01-02",
    }
    result = dg.materialize(
        [payments, checks],
        resources={"spark": spark},
        instance=instance,
        tags=range_tags,
        raise_on_error=False,
    )

    folder = kept / "payments__dy_failures"
    assert sorted(p.name for p in folder.iterdir()) == ["2024-01-01.parquet", "2024-01-02.parquet"]
    by_file = {p.stem: sorted(pl.read_parquet(p)["payment_id"].to_list()) for p in folder.iterdir()}
    assert by_file == {"2024-01-01": [1], "2024-01-02": [3, 4]}
    for path in folder.iterdir():
        assert set(pl.read_parquet(path)["dy_partition_key"]) == {path.stem}
    check = evaluations(result)["dy_rule__amount__min"]
    assert check.metadata["dy_failing_rows_kept"].value == 3
    sent = [line for line in logs(instance, result) if line.startswith("Pushed down to spark")]
    assert any("__dy_kept" in line for line in sent)  # selected in Spark, with each row's key
