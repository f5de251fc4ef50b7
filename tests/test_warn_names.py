"""`warn="amount|min"`: a single string is one rule or column name, wherever `warn=` is taken,
never the characters of that name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from shop import Shop
from support import evaluations, scaffold_checks

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.errors import InvalidSeverityError

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
CHECK = "dy_rule__amount__min"  # `amount|min` fails on one row of `defective_orders()`


def _blocking(specs: Any) -> bool:
    (spec,) = [spec for spec in specs if spec.name == CHECK]
    return spec.blocking


def test_the_catalogue_and_the_check_specs_take_one_name() -> None:
    (rule,) = [
        r for r in dd.wiring.rules(OrdersSchema, warn="amount|min") if r.name == "amount|min"
    ]
    assert rule.severity == "warn"
    assert _blocking(dd.wiring.check_specs(OrdersSchema, asset="orders"))
    assert not _blocking(dd.wiring.check_specs(OrdersSchema, asset="orders", warn="amount|min"))


@pytest.mark.parametrize("name", ["amount|min", "amount"])  # a rule, or every rule of a column
def test_check_results_and_validation_results_take_one_name(name: str) -> None:
    checked = dd.wiring.check_results(OrdersSchema, defective_orders(), asset_key="o", warn=name)
    assert {r.check_name: r.severity for r in checked}[CHECK] == WARN

    validated = dd.wiring.validation_results(
        OrdersSchema,
        defective_orders(),
        valid_key="o",
        warn=name,
        quarantine_writer=lambda frame: "nowhere",
    )
    results = [e for e in validated if isinstance(e, dg.AssetCheckResult)]
    assert {r.check_name: r.severity for r in results}[CHECK] == WARN


def test_the_gated_asset_takes_one_name() -> None:
    @dd.asset(OrdersSchema, warn="amount|min")
    def orders() -> pl.DataFrame:
        return defective_orders()

    assert not _blocking(orders.check_specs)


def test_the_sidecar_takes_one_name_in_a_run(tmp_path: Path) -> None:
    @dg.asset(name="orders")
    def stored() -> pl.DataFrame:
        return defective_orders()

    result = dg.materialize(
        [stored, dd.schema_checks(OrdersSchema, asset="orders", warn="amount|min")],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )

    assert evaluations(result)[CHECK].severity == WARN
    assert evaluations(result)["dy_rule__order_id__regex"].severity == ERROR


def test_with_schemas_takes_one_name() -> None:
    defs = dd.with_schemas(
        dg.Definitions(assets=[dg.asset(name="orders")(storefront_orders)]),
        {"orders": OrdersSchema},
        warn="amount",
    )

    (checks,) = defs.asset_checks or []
    assert not _blocking(checks.check_specs)  # type: ignore[union-attr]


def test_the_component_takes_one_name_from_yaml(sandbox: DefsFolderSandbox) -> None:
    entry = {"asset": "orders", "schema": "dagster_dataframely.data:OrdersSchema"}
    path = scaffold_checks(
        sandbox,
        {
            "assets_outside_defs": True,  # no asset in this project: only specs are read
            "checks": [{**entry, "warn": "amount|min"}],
        },
    )

    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        (checks,) = defs.asset_checks or []
        assert not _blocking(checks.check_specs)  # type: ignore[union-attr]


def test_a_name_that_is_not_a_string_is_refused() -> None:
    with pytest.raises(InvalidSeverityError, match=r"got 3\. Pass one name"):
        dd.wiring.check_specs(OrdersSchema, asset="orders", warn=["amount|min", 3])  # type: ignore[list-item]


def test_a_misspelled_rule_names_the_closest_rules_and_columns() -> None:
    with pytest.raises(InvalidSeverityError) as raised:
        dd.schema_checks(OrdersSchema, asset="orders", warn=["amount|mn", "stats", "zzz"])

    message = str(raised.value)
    assert "'amount|mn', 'stats', 'zzz' are neither a rule nor a column" in message
    assert "Did you mean 'amount|min', " in message and "'status' for 'stats'?" in message
    assert "for 'zzz'" not in message


def test_a_misspelled_filter_names_the_closest_filters() -> None:
    with pytest.raises(InvalidSeverityError, match="Did you mean 'customer_exists' for"):
        dd.collection_checks(
            Shop, members={"customers": "c", "orders": "o", "lines": "l"}, warn="customer_exist"
        )


def test_the_rules_a_warn_typo_lists_are_bounded_on_a_wide_schema() -> None:
    wide = type(dy.Schema)("Wide", (dy.Schema,), {f"c{i}": dy.Int64() for i in range(200)})
    with pytest.raises(InvalidSeverityError) as raised:
        dd.wiring.check_specs(wide, asset="wide", warn="c1000")

    message = str(raised.value)
    assert "Did you mean 'c100'" in message and "… and 170 more" in message
    assert len(message) < 2000
