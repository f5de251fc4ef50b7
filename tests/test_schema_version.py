"""`dd.asset`'s code version: the user's, combined with a stable hash of the schema, so a
changed schema marks the asset changed and an unchanged one never does."""

from __future__ import annotations

import os
import subprocess
import sys

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely._engine.schema_version import schema_version
from dagster_dataframely.data import OrdersSchema, storefront_orders


def _schema(
    *, key: type = dy.Int64, nullable: bool = True, odd: int = -1, rule: bool = False
) -> type[dy.Schema]:
    """A small schema; each argument changes what it accepts. `odd` replaces one value in
    the middle of a 500-value list, which `str()` of the expression cuts."""
    codes = [f"c{i}" if i != odd else "x" for i in range(500)]
    body: dict[str, object] = {
        "id": key(primary_key=True),
        "code": dy.String(nullable=nullable, check=lambda c: c.is_in(codes)),
    }
    if rule:
        body["small_ids"] = dy.rule()(lambda cls: pl.col("id") < 10)
    return type("Variant", (dy.Schema,), body)


def _schemas() -> dict[str, type[dy.Schema]]:
    return {
        "base": _schema(),
        "same": _schema(),
        "dtype": _schema(key=dy.Int32),
        "nullable": _schema(nullable=False),
        "list": _schema(odd=250),
        "rule": _schema(rule=True),
    }


def test_a_change_to_columns_dtypes_or_rules_changes_the_version() -> None:
    versions = {name: schema_version(schema) for name, schema in _schemas().items()}
    assert versions["same"] == versions["base"]
    others = [v for name, v in versions.items() if name not in ("base", "same")]
    assert len(set(others)) == len(others) and versions["base"] not in others


def test_a_rule_made_warn_changes_the_version() -> None:
    assert schema_version(OrdersSchema) != schema_version(OrdersSchema, warn=("sku",))


def test_a_tolerance_changes_the_version_and_no_tolerance_keeps_it() -> None:
    """A tolerance decides what a gated asset writes (its circuit breaker), so changing one
    marks the asset changed; an empty `tolerate=` changes nothing."""
    base = schema_version(OrdersSchema)
    tolerated = schema_version(OrdersSchema, tolerate={"amount|min": dd.Tolerance(error_above=5)})
    wider = schema_version(OrdersSchema, tolerate={"amount|min": dd.Tolerance(error_above=50)})
    assert len({base, tolerated, wider}) == 3
    assert schema_version(OrdersSchema, tolerate={}) == base


@pytest.mark.parametrize("seed", ["1", "2"])
def test_the_version_is_the_same_in_another_python_process(seed: str) -> None:
    script = (
        "from dagster_dataframely._engine.schema_version import schema_version\n"
        "from dagster_dataframely.data import OrdersSchema\n"
        "print(schema_version(OrdersSchema))"
    )
    other = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": seed},
    )
    assert other.stdout.strip() == schema_version(OrdersSchema)


def test_dd_asset_combines_the_users_code_version_with_the_schemas() -> None:
    @dd.asset(OrdersSchema)
    def plain() -> pl.DataFrame:
        return storefront_orders()

    @dd.asset(OrdersSchema, code_version="7")
    def versioned() -> pl.DataFrame:
        return storefront_orders()

    digest = schema_version(OrdersSchema)
    assert plain.code_versions_by_key[plain.key] == f"schema.{digest}"
    assert versioned.code_versions_by_key[versioned.key] == f"7+schema.{digest}"


def test_a_run_records_the_combined_code_version() -> None:
    @dd.asset(OrdersSchema, code_version="7")
    def orders() -> pl.DataFrame:
        return storefront_orders()

    result = dg.materialize([orders])
    (event,) = result.get_asset_materialization_events()
    assert event.materialization.tags is not None
    assert event.materialization.tags["dagster/code_version"] == (
        f"7+schema.{schema_version(OrdersSchema)}"
    )
