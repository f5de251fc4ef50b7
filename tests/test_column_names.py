"""Columns whose names Dagster cannot carry in a check name (`"order id"`, `"größe"`, `"数量"`)
are supported: every surface runs on them under a derived check name, and two names that
derive the same check name are refused, naming both."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from conftest import Storage
from support import evaluations, failed, materialization

import dagster_dataframely as dd
from dagster_dataframely._engine.naming import column_check_name
from dagster_dataframely._sidecar.schema_checks import step_name
from dagster_dataframely.errors import CheckNameCollisionError
from dagster_dataframely.wiring import check_name, rules, table_schema

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


@dd.warn("größe")
class Lines(dy.Schema):
    order_id = dy.Int64(alias="order id", primary_key=True, min=1)
    size = dy.Float64(alias="größe", nullable=True, min=0, allow_nan=True, allow_inf=True)
    quantity = dy.Int64(alias="数量", min=1)


#: The check name of each rule of `Lines`: readable where the letters allow it.
CHECK_NAMES = {
    "order id|nullability": "dy_rule__order_id__nullability",
    "order id|min": "dy_rule__order_id__min",
    "größe|min": "dy_rule__grosse__min",
    "数量|nullability": "dy_rule__u6570u91cf__nullability",
    "数量|min": "dy_rule__u6570u91cf__min",
    "primary_key": "dy_rule__primary_key",
}


def lines() -> pl.DataFrame:
    """Row 1 valid, row 0 fails `order id|min`, row 2 only the warn rule `größe|min`, row 3
    fails `数量|min`."""
    return pl.DataFrame(
        {"order id": [1, 0, 2, 3], "größe": [1.0, 2.0, -1.0, None], "数量": [2, 1, 3, 0]}
    )


def test_each_rule_gets_a_valid_readable_check_name() -> None:
    assert {rule.name: rule.check_name for rule in rules(Lines)} == CHECK_NAMES
    assert check_name("order id|min") == "dy_rule__order_id__min"
    assert check_name("amount|min") == "dy_rule__amount__min"  # valid names stay as they were


def test_the_columns_tab_shows_the_columns_under_their_own_names() -> None:
    columns = {column.name: column for column in table_schema(Lines).columns}

    assert list(columns) == ["order id", "größe", "数量"]
    assert columns["größe"].constraints.other == ["größe >= 0 (warn)"]


def test_a_gated_asset_quarantines_by_check_name_and_reports_the_rule_name(
    filesystem: Storage,
) -> None:
    @dd.asset(Lines, quarantine=True, key=["shop", "lines"])
    def _lines() -> pl.DataFrame:
        return lines()

    result = filesystem.materialize([_lines])

    assert result.success
    written = filesystem.read(["shop", "lines"])
    assert written is not None and written["order id"].to_list() == [1, 2]
    assert {name: count for name, (count, _) in failed(result).items()} == {
        "dy_rule__order_id__min": 1,
        "dy_rule__grosse__min": 1,
        "dy_rule__u6570u91cf__min": 1,
    }
    assert failed(result)["dy_rule__grosse__min"][1] == WARN
    evaluated = evaluations(result)
    assert evaluated["dy_rule__order_id__min"].metadata["dy_rule"].value == "order id|min"
    quarantined = filesystem.read(["shop", "lines_quarantine"])
    assert quarantined is not None
    assert quarantined.columns == [
        "order id",
        "größe",
        "数量",
        *(r.check_name for r in rules(Lines)),
    ]
    assert quarantined.sort("order id").select(
        "order id", "dy_rule__order_id__min", "dy_rule__u6570u91cf__min"
    ).rows() == [(0, "invalid", "valid"), (3, "valid", "invalid")]
    groups = materialization(result, "shop/lines")["invalid_by_rules"]
    assert {record.data["rules"] for record in groups.records} == {"order id|min", "数量|min"}
    spec = _lines.specs_by_key[dg.AssetKey(["shop", "lines"])]
    columns = spec.metadata["dagster/column_schema"].columns
    assert [column.name for column in columns] == ["order id", "größe", "数量"]


@pytest.mark.parametrize(
    ("granularity", "expected"),
    [
        (
            "rule",
            {"dy_rule__order_id__min": 1, "dy_rule__grosse__min": 1, "dy_rule__u6570u91cf__min": 1},
        ),
        ("column", {"dy_col__order_id": 1, "dy_col__grosse": 1, "dy_col__u6570u91cf": 1}),
        ("schema", {"dy_schema__rules": 3}),
    ],
)
def test_the_sidecar_evaluates_them_at_every_granularity(
    filesystem: Storage, granularity: str, expected: dict[str, int]
) -> None:
    @dg.asset(name="lines")
    def stored() -> pl.DataFrame:
        return lines()

    checks = dd.schema_checks(Lines, asset="lines", check_granularity=granularity)
    result = filesystem.materialize([stored, checks])

    assert {name: count for name, (count, _) in failed(result).items()} == expected
    if granularity == "column":
        rule_table = evaluations(result)["dy_col__order_id"].metadata["dy_rules"].value
        assert {r.data["rule"] for r in rule_table.records} == {  # type: ignore[attr-defined]
            "order id|nullability",
            "order id|min",
        }


def test_warn_takes_their_rule_and_column_names() -> None:
    warned = {
        rule.name for rule in rules(Lines, warn=["order id|min", "数量"]) if rule.severity == "warn"
    }
    assert warned == {"größe|min", "order id|min", "数量|nullability", "数量|min"}


# --------------------------------------- collisions --------------------------------------- #


def test_two_columns_deriving_one_rule_check_name_are_refused_naming_both() -> None:
    class Clash(dy.Schema):
        spaced = dy.Int64(alias="order id", min=1)
        plain = dy.Int64(alias="order_id", min=1)

    with pytest.raises(CheckNameCollisionError) as raised:
        dd.schema_checks(Clash, asset="orders")
    message = str(raised.value)
    assert "'order id|min', 'order_id|min'" in message
    assert "'dy_rule__order_id__min'" in message
    assert "Rename one of them" in message


def test_two_columns_deriving_one_column_check_name_are_refused_naming_both() -> None:
    class Clash(dy.Schema):
        spaced = dy.Int64(alias="größe", nullable=True, min=1)  # only `größe|min`
        plain = dy.Int64(alias="grosse", nullable=True, max=9)  # only `grosse|max`

    assert len(dd.wiring.check_specs(Clash, asset="sizes")) == 3  # distinct per rule
    with pytest.raises(CheckNameCollisionError) as raised:
        dd.wiring.check_specs(Clash, asset="sizes", check_granularity="column")
    assert "'dy_col__grosse' <- 'größe', 'grosse'" in str(raised.value)


# ------------------------------------- stable names ------------------------------------- #


def test_derived_names_are_the_same_in_another_process() -> None:
    """A check name keys the check's history, a step name the runs that selected it: a new
    process (another hash seed) must derive the same ones."""
    script = (
        "import json, dagster as dg\n"
        "from dagster_dataframely._engine.naming import check_name, column_check_name\n"
        "from dagster_dataframely._sidecar.schema_checks import step_name\n"
        "print(json.dumps([check_name('größe|min'), column_check_name('数量 (stk)'),\n"
        "    step_name(dg.AssetKey(['sales-eu', 'orders'])),\n"
        "    step_name(dg.AssetKey(['sales.eu', 'orders']))]))\n"
    )
    here = [
        check_name("größe|min"),
        column_check_name("数量 (stk)"),
        step_name(dg.AssetKey(["sales-eu", "orders"])),
        step_name(dg.AssetKey(["sales.eu", "orders"])),
    ]
    env = {**os.environ, "PYTHONHASHSEED": "1"}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == here
    assert here[:2] == ["dy_rule__grosse__min", "dy_col__u6570u91cf_stk_"]
