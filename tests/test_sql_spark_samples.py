"""Spark's failure samples, fetched for all failing rules by one bounded query, in real runs.

Spark (`Dialect.shared_samples`) keeps the rows failing any rule, each flagged per rule, and
splits them by rule. Each rule's sample must be rows that fail it (as Dataframely says, a
NULL condition included) and as many as it can show: `min(max_failure_samples, failed)`,
also for a rule whose rows the shared query's bound crowded out.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from spark import GROUP
from support import evaluations, logs

import dagster_dataframely as dd

pytestmark = GROUP
LIMIT = 5


class Orders(dy.Schema):
    id = dy.Int64(primary_key=True)
    amount = dy.Int64(nullable=True, min=0)
    refund = dy.Int64(nullable=True, min=0)
    cap = dy.Int64(nullable=True)

    @dy.rule()
    def amount_below_cap(cls) -> pl.Expr:
        """NULL where either is: what a failing row is then, Dataframely says."""
        return pl.col("amount") < pl.col("cap")


def _frame(amount: list[int | None], refund: list[int | None], cap: list[int | None]) -> Any:
    ids = list(range(1, len(amount) + 1))
    return pl.DataFrame(
        {"id": ids, "amount": amount, "refund": refund, "cap": cap},
        schema={name: column.dtype for name, column in Orders.columns().items()},
    )


def _checked(
    spark: Any, tmp_path: Path, frame: pl.DataFrame, instance: dg.DagsterInstance | None = None
) -> dg.ExecuteInProcessResult:
    """`Orders` checked on `frame` written as one parquet file (Spark reads it in order)."""
    path = str(tmp_path / "orders")
    spark.createDataFrame(frame.to_arrow()).coalesce(1).write.parquet(path)
    checks = dd.schema_checks(
        Orders,
        asset="orders",
        source=dd.sources.SparkTableSource(path=path),
        max_failure_samples=LIMIT,
    )
    return dg.materialize(
        [dg.AssetSpec("orders"), checks],
        resources={"spark": spark},
        selection=dg.AssetSelection.all_asset_checks(),
        raise_on_error=False,
        instance=instance,
    )


def _sample_queries(instance: dg.DagsterInstance, result: Any) -> tuple[int, int]:
    """How many shared sample queries (rows flagged per rule) and own sample queries (one
    rule's `LIMIT 5`) the check sent, from the queries its step logged."""
    sent = [line for line in logs(instance, result) if line.startswith("Pushed down to spark")]
    shared = sum("__dy_fails" in line for line in sent)
    own = sum(f"LIMIT {LIMIT}" in line and "__dy_fails" not in line for line in sent)
    return shared, own


def _failing_ids(frame: pl.DataFrame) -> dict[str, set[int]]:
    """check name -> the ids of the rows Dataframely finds failing its rule."""
    _, failures = Orders.filter(frame)
    details = failures.details()
    return {
        "dy_rule__" + rule.replace("|", "__"): set(
            details.filter(pl.col(rule) == "invalid")["id"].to_list()
        )
        for rule in failures.counts()
    }


def _sampled_ids(result: dg.ExecuteInProcessResult) -> dict[str, list[int]]:
    """check name -> the ids of its failing sample's rows, for each check with one."""
    return {
        name: [row.data["id"] for row in sample.records]
        for name, evaluation in evaluations(result).items()
        if (sample := evaluation.metadata.get("dy_failed_sample")) is not None
    }


def _assert_samples_are_failing_rows(frame: pl.DataFrame, result: Any) -> dict[str, list[int]]:
    failing = {name: ids for name, ids in _failing_ids(frame).items() if ids}
    sampled = _sampled_ids(result)
    assert set(sampled) == set(failing)
    for name, ids in sampled.items():
        assert set(ids) <= failing[name], name
        assert len(set(ids)) == len(ids) == min(LIMIT, len(failing[name])), name
    return sampled


def test_each_rules_sample_is_its_failing_rows_as_many_as_it_shows(
    spark: Any, tmp_path: Path
) -> None:
    # Rules fail on shared and on own rows; `amount_below_cap` is NULL where a value is,
    # first on rows failing `refund|min` too, which the shared query keeps.
    frame = _frame(
        amount=[-1, 1, None, 7, -2, 1, None, 9, -3, 1, 2, -4],
        refund=[0, -1, -1, -1, 0, None, -1, 0, 0, -1, 0, -1],
        cap=[5, 0, 3, None, 0, 5, None, 4, 9, 1, 5, None],
    )

    result = _checked(spark, tmp_path, frame)

    sampled = _assert_samples_are_failing_rows(frame, result)
    assert set(sampled) == {
        "dy_rule__amount__min",
        "dy_rule__refund__min",
        "dy_rule__amount_below_cap",
    }


def test_a_rule_crowded_out_of_the_shared_query_still_gets_its_full_sample(
    spark: Any, tmp_path: Path
) -> None:
    # 30 rows fail `amount|min` first, and 7 of 400,000 rows fail the other rules, at the
    # end: a table failing this thinly keeps the shared query's bound at what the samples
    # need (5 + 3 + 4 rows), spent before any row failing `refund|min` or `amount_below_cap`.
    crowded, passing = 30, 400_000
    frame = _frame(
        amount=[-1] * crowded + [1] * (passing + 7),
        refund=[0] * (crowded + passing + 4) + [-1] * 3,
        cap=[5] * (crowded + passing) + [0] * 4 + [5] * 3,
    )
    instance = dg.DagsterInstance.ephemeral()

    result = _checked(spark, tmp_path, frame, instance)

    sampled = _assert_samples_are_failing_rows(frame, result)
    assert len(sampled["dy_rule__refund__min"]) == 3
    assert len(sampled["dy_rule__amount_below_cap"]) == 4
    assert _sample_queries(instance, result) == (1, 2)


def test_a_rule_failing_densely_but_late_is_sampled_by_the_shared_query(
    spark: Any, tmp_path: Path
) -> None:
    # As a range rule fails on a table whose values cycle: 30 rows failing `amount|min`
    # first, then every row failing `refund|min`. The table fails densely, so the shared
    # query reads on past the 10 rows the two samples need, and one query fills both.
    crowded, late = 30, 20
    frame = _frame(
        amount=[-1] * crowded + [1] * late,
        refund=[0] * crowded + [-1] * late,
        cap=[100] * (crowded + late),
    )
    instance = dg.DagsterInstance.ephemeral()

    result = _checked(spark, tmp_path, frame, instance)

    sampled = _assert_samples_are_failing_rows(frame, result)
    assert len(sampled["dy_rule__refund__min"]) == LIMIT
    assert _sample_queries(instance, result) == (1, 0)
