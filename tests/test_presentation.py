"""What the UI shows of a run: a failing check's outcome in words, readable constraints and
dtypes, nulls in samples, and statistics that mean something. Real runs: `dg.materialize` of
a sidecar and of a gated asset."""

from __future__ import annotations

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from support import evaluations

import dagster_dataframely as dd
from dagster_dataframely._engine.display import share
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders


@pytest.fixture(scope="module")
def checked() -> dict[str, dg.AssetCheckEvaluation]:
    """The sidecar's evaluations of `defective_orders()` (13 rows) in a real run."""

    @dg.asset
    def orders() -> pl.DataFrame:
        return defective_orders()

    defs = dd.with_schemas(dg.Definitions(assets=[orders]), {"orders": OrdersSchema})
    result = dg.materialize([orders, *defs.asset_checks], raise_on_error=False)  # type: ignore[list-item]
    return evaluations(result)


def _value(evaluation: dg.AssetCheckEvaluation, label: str) -> object:
    return evaluation.metadata[label].value  # type: ignore[attr-defined]


def test_a_failing_check_says_its_severity_and_the_share_of_rows(
    checked: dict[str, dg.AssetCheckEvaluation],
) -> None:
    error, warning = checked["dy_rule__amount__min"], checked["dy_rule__amount__max"]
    assert _value(error, "dy_assessment") == "failed at severity ERROR: 1 of 13 rows, 7.7%"
    assert _value(warning, "dy_assessment") == "failed at severity WARN: 1 of 13 rows, 7.7%"
    assert _value(error, "dy_constraint") == "amount >= 0"
    assert _value(error, "dy_expression") == 'pl.col("amount") >= 0'
    rule = checked["dy_rule__paid_orders_have_amount"]
    assert _value(rule, "dy_expression") == (
        'pl.col("status").is_in(["paid", "shipped"]).not_()'
        ' | (pl.col("amount").is_not_null() & (pl.col("amount") > 0))'
    )


def test_the_ui_lists_the_outcome_first_then_the_constraint_then_the_expression() -> None:
    """The UI lists a check's metadata in the order the event log stores it, and Dagster
    stores metadata with sorted keys: read back from a real instance's storage."""

    @dg.asset(check_specs=dd.wiring.check_specs(OrdersSchema, asset="orders"))
    def orders() -> dd.wiring.AssetYield:
        yield dg.MaterializeResult()
        yield from dd.wiring.check_results(OrdersSchema, defective_orders(), asset_key="orders")

    with dg.instance_for_test() as instance:
        dg.materialize([orders], instance=instance, raise_on_error=False)
        records = instance.get_event_records(
            dg.EventRecordsFilter(event_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        )
        stored = {
            r.event_log_entry.dagster_event.event_specific_data.check_name: (  # type: ignore[union-attr]
                r.event_log_entry.dagster_event.event_specific_data  # type: ignore[union-attr]
            )
            for r in records
        }
    labels = list(stored["dy_rule__amount__min"].metadata)
    assert labels[:4] == ["dy_assessment", "dy_constraint", "dy_engine", "dy_expression"]
    assert labels == sorted(labels)  # what the ordering rests on: Dagster sorts the keys


def test_a_passing_check_carries_no_outcome_text(
    checked: dict[str, dg.AssetCheckEvaluation],
) -> None:
    passed = checked["dy_rule__amount__nan"]
    assert passed.passed and "dy_assessment" not in passed.metadata
    assert _value(passed, "dy_failed_count") == 0


def test_nulls_in_failing_samples_read_null_not_an_empty_cell(
    checked: dict[str, dg.AssetCheckEvaluation],
) -> None:
    sample = _value(checked["dy_rule__customer_email__nullability"], "dy_failed_sample")
    (row,) = sample.records  # type: ignore[attr-defined]
    assert row.data["customer_email"] == "null"
    assert row.data["order_id"] == "ORD-20004"


def test_a_whole_float_in_a_failing_sample_reads_as_a_float(
    checked: dict[str, dg.AssetCheckEvaluation],
) -> None:
    """The UI shows a JSON number as JavaScript does: -20.0 would read `-20`, an integer."""
    sample = _value(checked["dy_rule__amount__min"], "dy_failed_sample")
    (row,) = sample.records  # type: ignore[attr-defined]
    assert row.data["amount"] == "-20.0"
    assert all(
        not isinstance(value, float) or not value.is_integer()
        for record in sample.records  # type: ignore[attr-defined]
        for value in record.data.values()
    )


def test_collapsed_checks_list_each_rule_with_its_constraint() -> None:
    (result,) = [
        r
        for r in dd.wiring.check_results(
            OrdersSchema, defective_orders(), asset_key="orders", check_granularity="column"
        )
        if r.check_name == "dy_col__amount"
    ]
    assert result.metadata["dy_assessment"].value == (  # type: ignore[attr-defined]
        "failed at severity ERROR: 2 of 4 rules, the worst on 1 of 13 rows, 7.7%"
    )
    rows = {r.data["rule"]: r.data for r in result.metadata["dy_rules"].records}  # type: ignore[attr-defined]
    assert rows["amount|min"]["constraint"] == "amount >= 0"


@pytest.mark.parametrize(
    ("part", "whole", "text"),
    [
        (2, 25, "2 of 25 rows, 8%"),
        (1, 3, "1 of 3 rows, 33.3%"),
        (1, 40_000, "1 of 40,000 rows, <0.1%"),
        (39_999, 40_000, "39,999 of 40,000 rows, >99.9%"),
        (3, 3, "3 of 3 rows, 100%"),
        (0, 0, "0 of 0 rows"),
    ],
)
def test_share_of_rows_in_words(part: int, whole: int, text: str) -> None:
    assert share(part, whole) == text


def test_statistics_round_means_and_skip_them_where_meaningless() -> None:
    class Lines(dy.Schema):
        line_item_id = dy.Int64(primary_key=True)
        quantity = dy.Int64()
        price = dy.Float64()
        gift = dy.Bool()

    @dd.asset(Lines)
    def lines() -> pl.DataFrame:
        return pl.DataFrame(
            {
                "line_item_id": range(1, 301),
                "quantity": [1, 2, 2] * 100,
                "price": [9.99, 12.5, 4.333] * 100,
                "gift": [True, False, False] * 100,
            }
        )

    result = dg.materialize([lines])
    (event,) = result.get_asset_materialization_events()
    table = event.materialization.metadata["dy_statistics"].value  # type: ignore[attr-defined]
    stats = {r.data["column"]: r.data for r in table.records}
    assert stats["quantity"]["mean"] == 1.67
    assert stats["price"]["mean"] == 8.94
    assert stats["line_item_id"]["mean"] is None  # an identifier
    assert stats["gift"]["mean"] is None and stats["gift"]["min"] == "False"


def test_the_columns_tab_marks_primary_key_columns_and_reads_dtypes() -> None:
    columns = {c.name: c for c in dd.wiring.table_schema(OrdersSchema).columns}
    assert columns["order_id"].constraints.other[0] == "part of primary key"
    assert columns["line"].constraints.other[0] == "part of primary key"
    assert not any("primary key" in text for text in columns["sku"].constraints.other)
    assert columns["ordered_at"].type == "Datetime(us, UTC)"
    assert columns["status"].type == "Enum(pending, paid, shipped, refunded)"

    class Single(dy.Schema):
        sku = dy.String(primary_key=True)
        tags = dy.List(dy.String(), nullable=True)

    single = {c.name: c for c in dd.wiring.table_schema(Single).columns}
    assert single["sku"].constraints.other[0] == "primary key"
    assert single["tags"].type == "List(String)"


def test_a_gated_assets_row_sample_shows_null_and_its_statistics_read_well() -> None:
    @dd.asset(OrdersSchema)
    def orders() -> pl.DataFrame:
        return storefront_orders()

    (event,) = dg.materialize([orders]).get_asset_materialization_events()
    table = event.materialization.metadata["dy_statistics"].value  # type: ignore[attr-defined]
    stats = {r.data["column"]: r.data for r in table.records}
    assert stats["ordered_at"]["dtype"] == "Datetime(us, UTC)"
    assert stats["amount"]["mean"] == round(storefront_orders()["amount"].mean(), 2)
    sample = event.materialization.metadata["dy_row_sample"].value  # type: ignore[attr-defined]
    assert sample.records[0].data["note"] == "null"  # ORD-10001 line 1 has no note
