"""Check specs and check results: names per granularity, blocking, severities, the
column-schema check, accepted frame types, and bounded metadata."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from support import evaluations, materialized

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, mistyped_orders
from dagster_dataframely.errors import ColumnSchemaError, UnsupportedFrameError
from dagster_dataframely.wiring import check_results, check_specs, rules

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


def _results(frame: object, **kwargs: object) -> dict[str, dg.AssetCheckResult]:
    return {
        r.check_name: r for r in check_results(OrdersSchema, frame, asset_key="orders", **kwargs)
    }  # type: ignore[arg-type]


def _count(result: dg.AssetCheckResult) -> int:
    return result.metadata["dy_failed_count"].value  # type: ignore[return-value]


def test_rule_granularity_has_one_blocking_check_per_error_rule() -> None:
    specs = {spec.name: spec for spec in check_specs(OrdersSchema, asset="orders")}
    assert next(iter(specs)) == "dy_schema__columns"
    assert set(specs) == {"dy_schema__columns"} | {r.check_name for r in rules(OrdersSchema)}
    assert specs["dy_schema__columns"].blocking
    assert specs["dy_rule__amount__min"].blocking
    assert not specs["dy_rule__amount__max"].blocking  # a "warn" rule
    assert specs["dy_rule__amount__min"].description == "amount >= 0"


def test_quarantine_unblocks_rule_checks_and_blocking_overrides() -> None:
    quarantined = check_specs(OrdersSchema, asset="orders", quarantine=True)
    assert [s.name for s in quarantined if s.blocking] == ["dy_schema__columns"]
    forced = check_specs(OrdersSchema, asset="orders", blocking=True)
    assert all(spec.blocking for spec in forced)


def test_column_granularity_collects_rules_by_column() -> None:
    names = [s.name for s in check_specs(OrdersSchema, asset="o", check_granularity="column")]
    assert "dy_col__amount" in names
    assert "dy_schema__rules" in names  # primary key and the two schema rules
    assert not any(name.startswith("dy_rule__") for name in names)
    per_rule = [
        s.name
        for s in check_specs(
            OrdersSchema, asset="o", check_granularity="column", schema_rules="per_rule"
        )
    ]
    assert {"dy_rule__primary_key", "dy_rule__paid_orders_have_amount"} <= set(per_rule)
    assert "dy_schema__rules" not in per_rule


def test_schema_granularity_is_two_checks() -> None:
    names = [s.name for s in check_specs(OrdersSchema, asset="o", check_granularity="schema")]
    assert names == ["dy_schema__columns", "dy_schema__rules"]


def test_failing_rule_checks_have_their_rules_severity() -> None:
    results = _results(defective_orders())
    assert results["dy_schema__columns"].passed
    assert not results["dy_rule__amount__min"].passed
    assert results["dy_rule__amount__min"].severity == ERROR
    assert not results["dy_rule__amount__max"].passed
    assert results["dy_rule__amount__max"].severity == WARN
    assert _count(results["dy_rule__primary_key"]) == 2
    assert results["dy_rule__amount__inf"].passed
    assert _count(results["dy_rule__amount__inf"]) == 0


def test_severity_overrides_every_rule_check() -> None:
    results = _results(defective_orders(), severity=WARN)
    assert {r.severity for r in results.values() if not r.passed and r.check_name != "x"} == {WARN}


def test_collapsed_checks_take_the_worst_failing_severity_and_list_rules() -> None:
    results = _results(defective_orders(), check_granularity="column")
    amount = results["dy_col__amount"]  # amount|min (error) and amount|max (warn) fail
    assert not amount.passed
    assert amount.severity == ERROR
    assert _count(amount) == 2
    rules_table = amount.metadata["dy_rules"].value  # type: ignore[attr-defined]
    failed = {rec.data["rule"]: rec.data["failed"] for rec in rules_table.records}
    assert failed["amount|min"] == 1 and failed["amount|max"] == 1
    note = results["dy_col__note"]  # only a warn rule fails
    assert not note.passed and note.severity == WARN


def test_failure_samples_show_the_failing_rows_identified_by_primary_key() -> None:
    result = _results(defective_orders(), max_failure_samples=1)["dy_rule__order_id__regex"]
    sample = result.metadata["dy_failed_sample"].value  # type: ignore[attr-defined]
    assert [record.data for record in sample.records] == [{"order_id": "ORD-2005", "line": 1}]
    assert result.metadata["dy_expression"].value  # type: ignore[attr-defined]
    passed = _results(defective_orders())["dy_rule__sku__min_length"]
    assert "dy_failed_sample" not in passed.metadata


def test_a_dtype_drift_fails_the_column_check_and_names_the_cast() -> None:
    boom = pl.col("sku").map_batches(_never_called, return_dtype=pl.String)
    frame = mistyped_orders().lazy().with_columns(boom)  # collecting it would raise
    results = check_results(OrdersSchema, frame, asset_key="orders")
    first = next(results)
    assert first.check_name == "dy_schema__columns"
    assert not first.passed and first.severity == ERROR
    with pytest.raises(ColumnSchemaError) as raised:
        next(results)
    message = str(raised.value)
    assert "amount: Decimal" in message and "line: Int32" in message
    assert "OrdersSchema.cast(frame)" in message
    assert set(raised.value.mismatches) == {"amount", "line"}


def test_a_missing_column_is_reported_with_the_others() -> None:
    frame = defective_orders().drop("note").with_columns(pl.col("line").cast(pl.Int16))
    with pytest.raises(ColumnSchemaError) as raised:
        list(check_results(OrdersSchema, frame, asset_key="orders"))
    assert raised.value.mismatches == {"note": ("String", None), "line": ("Int64", "Int16")}


def test_extra_columns_are_ignored() -> None:
    frame = defective_orders().with_columns(extra=pl.lit(1))
    assert _results(frame)["dy_schema__columns"].passed


def test_a_table_in_another_column_order_gives_the_same_results(tmp_path: Path) -> None:
    # The evaluation reads a scan in its own column order (reordering it costs the streaming
    # engine memory); counts, samples and their columns must not depend on that order.
    frame = defective_orders()
    path = tmp_path / "orders.parquet"
    frame.select(pl.lit(1).alias("extra"), *reversed(frame.columns)).write_parquet(path)
    in_order, reordered = _results(frame), _results(pl.scan_parquet(path))
    assert list(reordered) == list(in_order)
    for name, result in in_order.items():
        assert (reordered[name].passed, reordered[name].metadata) == (
            result.passed,
            result.metadata,
        ), name
    assert any("dy_failed_sample" in result.metadata for result in in_order.values())


def test_pyarrow_tables_are_converted() -> None:
    frame = defective_orders()
    counts = {
        name: _count(r)
        for name, r in _results(frame.to_arrow()).items()
        if name != "dy_schema__columns"
    }
    assert counts == {
        name: _count(r) for name, r in _results(frame).items() if name != "dy_schema__columns"
    }


def test_pandas_frames_are_converted() -> None:
    class Prices(dy.Schema):
        sku = dy.String(min_length=4)
        price = dy.Float64(min=0, nullable=True)

    frame = pl.DataFrame({"sku": ["MUG-1", "X", "TEE-2"], "price": [1.0, -2.0, None]})
    results = {
        r.check_name: r for r in check_results(Prices, frame.to_pandas(), asset_key="prices")
    }
    assert _count(results["dy_rule__sku__min_length"]) == 1
    assert _count(results["dy_rule__price__min"]) == 1


def test_a_value_that_is_no_table_is_refused_by_name() -> None:
    with pytest.raises(UnsupportedFrameError, match="Cannot validate a dict"):
        list(check_results(OrdersSchema, {"a": [1]}, asset_key="orders"))


def test_metadata_stays_small_for_a_wide_schema_and_long_values() -> None:
    wide = type(
        "Wide",
        (dy.Schema,),
        {f"c{i}": dy.String(max_length=1) for i in range(1000)},
    )
    frame = pl.DataFrame({f"c{i}": ["x" * 5000] * 3 for i in range(1000)})
    for granularity in ("rule", "schema"):
        for result in check_results(wide, frame, asset_key="w", check_granularity=granularity):
            size = len(dg.serialize_value(result.metadata)) + len(result.description or "")
            assert size < 8_000, result.check_name


def test_check_results_in_a_real_run_block_downstream_on_error_rules() -> None:
    key = dg.AssetKey("orders")

    @dg.asset
    def orders() -> pl.DataFrame:
        return defective_orders()

    @dg.multi_asset_check(specs=check_specs(OrdersSchema, asset=key))
    def orders_checks(orders: pl.DataFrame) -> Iterator[dg.AssetCheckResult]:
        yield from check_results(OrdersSchema, orders, asset_key=key)

    @dg.asset(deps=[orders])
    def report() -> None: ...

    result = dg.materialize([orders, orders_checks, report], raise_on_error=False)
    assert not result.success
    evaluated = evaluations(result)
    assert evaluated["dy_rule__primary_key"].severity == ERROR
    assert evaluated["dy_rule__amount__max"].severity == WARN
    assert evaluated["dy_rule__amount__max"].metadata["dy_failed_count"].value == 1
    assert "report" not in materialized(result)


def _never_called(series: pl.Series) -> pl.Series:
    raise AssertionError("the column-schema check must not collect the frame")


def test_dd_warn_is_the_decorator_of_the_root() -> None:
    assert dd.warn is dd._engine.severity.warn
