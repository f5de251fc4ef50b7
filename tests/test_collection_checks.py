"""`dd.collection_checks` in real runs: three related assets (customers, orders, order
lines) stored through `ParquetIOManager` and through DuckDB, checked by one multi-asset
check that reports each member's rules and each filter on each member it removes rows from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dataframely.exc import ImplementationError
from shop import (
    MEMBERS,
    Orders,
    Shop,
    ShopWithReturns,
    expected_failures,
    failing_by_member,
    shop_frames,
    unkeyed_collection,
)
from support import failed, logs, materialized

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    CollectionMemberError,
    InvalidSeverityError,
    UnknownAssetError,
    UnsupportedSchemaError,
)
from dagster_dataframely.io import ParquetIOManager

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
_ASSET = {"customers": "customers", "orders": "orders", "lines": "order_lines"}


def _shop_assets(frames: dict[str, Any], **kwargs: Any) -> list[dg.AssetsDefinition]:
    def member(name: str) -> dg.AssetsDefinition:
        @dg.asset(name=_ASSET[name], **kwargs)
        def stored() -> Any:
            return frames[name]

        return stored

    return [member(name) for name in ("customers", "orders", "lines")]


@dg.asset(deps=["orders"])
def order_report() -> pl.DataFrame:
    return pl.DataFrame({"orders": [1]})


def _run(assets: list[Any], resources: dict[str, Any]) -> tuple[dg.ExecuteInProcessResult, Any]:
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(assets, resources=resources, instance=instance, raise_on_error=False)
    return result, instance


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_filters_report_their_counts_and_block_downstream(store: str, tmp_path: Path) -> None:
    io_manager = (
        ParquetIOManager(base_dir=str(tmp_path))
        if store == "parquet"
        else DuckDBPolarsIOManager(database=str(tmp_path / "shop.duckdb"))
    )
    checks = dd.collection_checks(Shop, members=MEMBERS)
    result, instance = _run(
        [*_shop_assets(shop_frames()), checks, order_report], {"io_manager": io_manager}
    )

    assert failing_by_member(result) == expected_failures()
    # `order_has_lines` is an "error" filter on orders: blocking, so the report never runs.
    assert "order_report" not in materialized(result)
    how = "streaming" if store == "parquet" else "in memory"
    loaded = [m for m in logs(instance, result) if m.startswith("Loaded ")]
    assert sorted(loaded) == sorted(
        f"Loaded {asset} through IO manager 'io_manager' as a "
        f"polars.{'LazyFrame' if store == 'parquet' else 'DataFrame'}; evaluating {how}."
        for asset in _ASSET.values()
    )


def test_a_filter_check_shows_the_removed_rows_and_the_filter_docstring(tmp_path: Path) -> None:
    checks = dd.collection_checks(Shop, members=MEMBERS)
    result, _ = _run(
        [*_shop_assets(shop_frames()), checks],
        {"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
    )

    (lines,) = [
        e
        for e in result.get_asset_check_evaluations()
        if e.check_name == "dy_filter__order_has_lines" and e.asset_key.path == ["order_lines"]
    ]
    sample = lines.metadata["dy_failed_sample"].value
    assert sorted(row.data["order_id"] for row in sample.records) == [5, 7]  # type: ignore[attr-defined]
    assert (
        lines.description
        == "Every order has at least one line, and every line belongs to an order."
    )
    assert lines.metadata["dy_rule"].value == "order_has_lines"
    spec = {s.key.name: s for s in checks.check_specs if s.asset_key.path == ["orders"]}
    assert spec["dy_filter__order_has_lines"].blocking
    assert not spec["dy_filter__customer_exists"].blocking


def test_customers_ignored_in_filters_get_schema_checks_but_no_filter_checks() -> None:
    checks = dd.collection_checks(Shop, members=MEMBERS)
    by_asset: dict[str, set[str]] = {}
    for key in checks.check_keys:
        by_asset.setdefault(key.asset_key.to_user_string(), set()).add(key.name)
    schema_checks = {
        k.name for k in dd.schema_checks(Shop.member_schemas()["customers"], asset="x").check_keys
    }
    assert by_asset["customers"] == schema_checks
    filters = {"dy_filter__order_has_lines", "dy_filter__customer_exists"}
    assert filters <= by_asset["orders"] and filters <= by_asset["order_lines"]


def test_valid_tables_pass_every_check_and_downstream_runs(tmp_path: Path) -> None:
    frames = shop_frames()
    valid = Shop.filter(frames, cast=False).result.to_dict()
    checks = dd.collection_checks(Shop, members=MEMBERS)
    result, _ = _run(
        [*_shop_assets({k: v.collect() for k, v in valid.items()}), checks, order_report],
        {"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
    )

    assert result.success and failed(result) == {}
    assert "order_report" in materialized(result)
    assert len(result.get_asset_check_evaluations()) == len(checks.check_keys)


# ---------------------------------- definition time ---------------------------------- #


def test_unknown_and_missing_members_are_refused_with_the_members_listed() -> None:
    with pytest.raises(CollectionMemberError) as raised:
        dd.collection_checks(Shop, members={"orders": "orders", "order_lines": "order_lines"})
    message = str(raised.value)
    assert "not members of the collection: order_lines" in message
    assert "required members missing: customers, lines" in message
    assert "The collection's members are customers, orders, lines" in message


def test_a_member_on_a_key_nothing_declares_fails_the_definitions() -> None:
    checks = dd.collection_checks(Shop, members={**MEMBERS, "lines": "order_line"})
    defs = dg.Definitions(assets=_shop_assets(shop_frames()), asset_checks=[checks])

    with pytest.raises(UnknownAssetError) as raised:
        dg.Definitions.validate_loadable(defs)

    message = str(raised.value)
    assert message.startswith("dd.collection_checks(Shop, members={...: 'order_line'}) checks")
    assert "Closest declared keys: order_lines, orders." in message


def test_an_optional_member_may_be_left_out(tmp_path: Path) -> None:
    checks = dd.collection_checks(ShopWithReturns, members=MEMBERS)
    result, _ = _run(
        [*_shop_assets(shop_frames()), checks],
        {"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
    )
    # Without returns the filter keeps every valid order: it removes only the lines of
    # orders 5 (invalid) and 7 (absent), as Dataframely's own filter does.
    failure = ShopWithReturns.filter(shop_frames(), cast=False).failure
    assert failure["lines"].counts()["returns_have_orders"] == 2
    assert "returns_have_orders" not in failure["orders"].counts()
    assert failing_by_member(result) == {
        **expected_failures(),
        ("lines", "dy_filter__returns_have_orders"): (2, ERROR),
    }


def test_an_unknown_filter_in_warn_is_refused() -> None:
    with pytest.raises(InvalidSeverityError, match="'no_such' is not a filter of collection Shop"):
        dd.collection_checks(Shop, members=MEMBERS, warn=["no_such"])
    with pytest.raises(InvalidSeverityError, match="Filters: order_has_lines, customer_exists"):
        dd.warn("amount")(Shop)


def test_warn_makes_a_filter_non_blocking_at_warn_severity(tmp_path: Path) -> None:
    checks = dd.collection_checks(Shop, members=MEMBERS, warn=["order_has_lines"])
    result, _ = _run(
        [*_shop_assets(shop_frames()), checks, order_report],
        {"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
    )
    found = failing_by_member(result)
    assert found["orders", "dy_filter__order_has_lines"] == (2, WARN)
    # Orders still fail `amount|min`, an "error" rule: downstream stays blocked.
    assert found["orders", "dy_rule__amount__min"] == (1, ERROR)
    assert "order_report" not in materialized(result)


def test_a_collection_without_a_shared_primary_key_is_refused_by_dataframely() -> None:
    # The "member without a primary key where a filter needs one" mistake never reaches
    # collection_checks: Dataframely refuses to define the class.
    with pytest.raises(ImplementationError, match="overlapping primary key"):
        unkeyed_collection()


def test_a_schema_is_not_a_collection() -> None:
    with pytest.raises(UnsupportedSchemaError, match=r"use dd\.schema_checks"):
        dd.collection_checks(Orders, members={})  # type: ignore[arg-type]


# ------------------------------ members already checked ------------------------------ #


def test_skip_schema_checks_leaves_a_member_to_its_own_checks(tmp_path: Path) -> None:
    checks = dd.collection_checks(Shop, members=MEMBERS, skip_schema_checks=["orders"])
    own = dd.schema_checks(Orders, asset="orders")
    on_orders = {k.name for k in checks.check_keys if k.asset_key.path == ["orders"]}
    assert on_orders == {"dy_filter__order_has_lines", "dy_filter__customer_exists"}

    result, _ = _run(
        [*_shop_assets(shop_frames()), checks, own],
        {"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
    )
    # Both definitions load together (no duplicate check keys) and the counts are unchanged.
    assert failing_by_member(result) == expected_failures()


def test_a_mismatched_member_is_one_failure_and_one_warning_names_the_checks_not_run(
    tmp_path: Path,
) -> None:
    frames = shop_frames()
    frames["lines"] = frames["lines"].with_columns(pl.col("quantity").cast(pl.String))
    checks = dd.collection_checks(Shop, members=MEMBERS)
    result, instance = _run(
        [*_shop_assets(frames), checks],
        {"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
    )
    evaluations = result.get_asset_check_evaluations()
    failing = {(e.asset_key.path[0], e.check_name) for e in evaluations if not e.passed}
    assert failing == {("order_lines", "dy_schema__columns")}
    # The checks that could not run get no result (not one failure each); one warning says so.
    (skipped,) = [m for m in logs(instance, result) if "check(s) not evaluated" in m]
    assert f"{len(checks.check_keys) - len(evaluations)} check(s) not evaluated" in skipped
    assert "so no check of collection Shop is reported" in skipped
    assert "order_lines:dy_filter__order_has_lines" in skipped
    (failure,) = [e for e in result.get_step_failure_events()]
    assert "Member 'lines' (asset order_lines)" in str(failure.step_failure_data.error)


# ------------------------------------ partitions ------------------------------------ #

_DAYS = dg.StaticPartitionsDefinition(["mon", "tue"])


def test_partitioned_members_are_checked_per_partition(tmp_path: Path) -> None:
    checks = dd.collection_checks(Shop, members=MEMBERS, partitions_def=_DAYS)
    result, _ = _run_partition(
        [*_shop_assets(shop_frames(), partitions_def=_DAYS), checks], tmp_path, "tue"
    )
    assert failing_by_member(result) == expected_failures()
    assert {e.partition for e in result.get_asset_check_evaluations()} == {"tue"}


def test_members_partitioned_differently_are_refused(tmp_path: Path) -> None:
    assets = _shop_assets(shop_frames(), partitions_def=_DAYS)
    unpartitioned = _shop_assets(shop_frames())
    checks = dd.collection_checks(Shop, members=MEMBERS, partitions_def=_DAYS)
    result, _ = _run_partition([assets[0], assets[1], checks], tmp_path, "mon", unpartitioned[2])
    error = result.get_step_failure_events()[0].step_failure_data.error
    assert error is not None
    assert "MemberPartitionsError" in error.to_string()
    assert "order_lines: unpartitioned" in error.to_string()


def _run_partition(
    assets: list[Any], tmp_path: Path, partition: str, *others: Any
) -> tuple[dg.ExecuteInProcessResult, Any]:
    instance = dg.DagsterInstance.ephemeral()
    io_manager = ParquetIOManager(base_dir=str(tmp_path))
    for other in others:
        dg.materialize([other], resources={"io_manager": io_manager}, instance=instance)
    result = dg.materialize(
        [*assets, *others],
        selection=[a.key for a in assets if isinstance(a, dg.AssetsDefinition) and a.keys]
        if others
        else None,
        partition_key=partition,
        resources={"io_manager": io_manager},
        instance=instance,
        raise_on_error=False,
    )
    return result, instance
