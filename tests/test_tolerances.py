"""Tolerances in real runs: a rule's check passes within its tolerance, fails at the level it
crossed (`WARN` or `ERROR`), blocks downstream only at `ERROR`, and reports its tolerance, its
failing fraction and its margin, on a parquet table read by the IO manager and on a DuckDB
table read through the resource (pushed down)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from hypothesis import given, settings
from hypothesis import strategies as st
from support import (
    evaluations,
    load_error,
    materialize_project,
    materialized,
    scaffold_checks,
    stored_table,
)

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidToleranceError

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
EMAIL, AMOUNT = "dy_rule__email__regex", "dy_rule__amount__min"


@dd.tolerate("email", warn_above=0, error_above="5%")
@dd.tolerate("amount|min", warn_above=5, error_above=10)
class Payments(dy.Schema):
    id = dy.Int64(primary_key=True)
    email = dy.String(nullable=True, regex="@")
    amount = dy.Int64(min=0)


def _payments(bad_emails: int = 3, negative: int = 20, rows: int = 100) -> pl.DataFrame:
    """`rows` payments: the first `bad_emails` without an `@`, the last `negative` below 0."""
    return pl.DataFrame(
        {
            "id": range(rows),
            "email": [f"p{i}" if i < bad_emails else f"p{i}@shop.eu" for i in range(rows)],
            "amount": [-1 if i >= rows - negative else i for i in range(rows)],
        },
        schema={"id": pl.Int64, "email": pl.String, "amount": pl.Int64},
    )


@dg.asset(deps=["payments"])
def downstream() -> None:
    """Reads the checked table; runs only when no blocking check failed at ERROR."""


def _run(tmp_path: Path, source: str, frame: pl.DataFrame, **settings: Any) -> Any:
    """Materialize `payments` (parquet through the IO manager, or a DuckDB table the asset
    writes itself), its checks with `settings`, and `downstream`."""
    stored, resources, reader = stored_table(tmp_path, source, "payments", frame)
    checks = dd.schema_checks(Payments, asset=stored, **reader, **settings)
    return dg.materialize([stored, checks, downstream], resources=resources, raise_on_error=False)


SOURCES = pytest.mark.parametrize("source", ["parquet", "duckdb"])


@SOURCES
def test_each_check_fails_at_the_level_it_crossed_and_only_error_blocks(
    tmp_path: Path, source: str
) -> None:
    result = _run(tmp_path, source, _payments(bad_emails=3, negative=20))

    checked = evaluations(result)
    assert (checked[EMAIL].passed, checked[EMAIL].severity) == (False, WARN)  # 3 > 0, <= 5%
    assert (checked[AMOUNT].passed, checked[AMOUNT].severity) == (False, ERROR)  # 20 > 10
    assert "downstream" not in materialized(result)
    if source == "duckdb":
        assert checked[AMOUNT].metadata["dy_engine"].value == "duckdb"


@SOURCES
def test_a_check_within_its_tolerance_passes_and_a_warn_does_not_block(
    tmp_path: Path, source: str
) -> None:
    result = _run(tmp_path, source, _payments(bad_emails=3, negative=5))

    checked = evaluations(result)
    assert checked[AMOUNT].passed  # 5 rows, warn above 5
    assert "passed within its tolerance" in checked[AMOUNT].metadata["dy_assessment"].value
    assert (checked[EMAIL].passed, checked[EMAIL].severity) == (False, WARN)
    assert "downstream" in materialized(result)


@SOURCES
def test_tolerate_overrides_the_schema_for_one_asset(tmp_path: Path, source: str) -> None:
    lenient = {"amount|min": dd.Tolerance(error_above="25%"), "email|regex": {"warn_above": 3}}

    result = _run(tmp_path, source, _payments(bad_emails=3, negative=20), tolerate=lenient)

    checked = evaluations(result)
    assert checked[AMOUNT].passed and checked[EMAIL].passed
    assert checked[AMOUNT].metadata["dy_tolerance"].value == "error above 25%"
    assert "downstream" in materialized(result)


def test_every_result_carries_the_tolerance_the_fraction_and_the_margin(tmp_path: Path) -> None:
    result = _run(tmp_path, "parquet", _payments(bad_emails=3, negative=20))

    amount = evaluations(result)[AMOUNT].metadata
    assert amount["dy_tolerance"].value == "warn above 5 rows, error above 10 rows"
    assert amount["dy_failed_fraction"] == dg.MetadataValue.float(0.2)
    assert amount["dy_tolerance_margin"].value == -10  # 10 rows above the error limit
    assert "(tolerance: warn above 5 rows, error above 10 rows)" in amount["dy_assessment"].value
    email = evaluations(result)[EMAIL].metadata
    assert email["dy_tolerance"].value == "warn above 0 rows, error above 5%"
    assert email["dy_tolerance_margin"].value == -3
    untolerated = evaluations(result)["dy_rule__amount__nullability"].metadata
    assert untolerated["dy_tolerance"].value == "error above 0 rows"
    assert untolerated["dy_failed_fraction"] == dg.MetadataValue.float(0.0)


@pytest.mark.parametrize(("negative", "level", "blocked"), [(20, ERROR, True), (8, WARN, False)])
def test_a_collapsed_check_reports_the_worst_level_its_rules_crossed(
    tmp_path: Path, negative: int, level: dg.AssetCheckSeverity, blocked: bool
) -> None:
    frame = _payments(bad_emails=3, negative=negative)

    result = _run(tmp_path, "parquet", frame, check_granularity="schema")

    (collapsed,) = [e for e in evaluations(result).values() if e.check_name != "dy_schema__columns"]
    assert (collapsed.passed, collapsed.severity) == (False, level)
    assert ("downstream" not in materialized(result)) == blocked
    assert collapsed.metadata["dy_tolerance"].value == "per rule, see dy_rules"


def test_a_collapsed_check_passes_when_every_rule_is_within_tolerance(tmp_path: Path) -> None:
    result = _run(
        tmp_path, "parquet", _payments(bad_emails=0, negative=4), check_granularity="column"
    )

    amount = evaluations(result)["dy_col__amount"]
    assert amount.passed and amount.metadata["dy_failed_count"].value == 4  # warn above 5
    assert amount.metadata["dy_tolerance_margin"].value == 0  # amount|nullability tolerates none


# ------------------------------------ definition time ----------------------------------- #


def test_an_unknown_rule_is_named_with_the_closest_names() -> None:
    with pytest.raises(InvalidToleranceError, match=r"'amount\|mn'.*Did you mean 'amount\|min'"):
        dd.schema_checks(
            Payments, asset="payments", tolerate={"amount|mn": dd.Tolerance(warn_above=1)}
        )
    with pytest.raises(InvalidToleranceError, match=r"dd.tolerate names 'emial'.*'email'"):
        dd.tolerate("emial", warn_above=1)(Payments)


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"warn_above": -1}, r"warn_above=-1 for 'amount\|min' of schema Payments is negative"),
        (
            {"error_above": 1.5},
            r"error_above=1.5 .* is a bare number: a percentage is text, \"1.5%\"",
        ),
        (
            {"error_above": 150.0},
            r"error_above=150.0 .* is a float: a count of rows is an int, 150",
        ),
        ({"error_above": "120%"}, r"'120%' .* outside 0% to 100%"),
        ({"error_above": "ten"}, r"'ten' .* no percentage"),
        ({"warn_above": True}, r"warn_above=True .* is a bool"),
        ({}, r"tolerates nothing: give warn_above=, error_above="),
        ({"warn_above": 10, "error_above": 5}, r"could never warn"),
    ],
)
def test_a_limit_no_rule_can_have_is_refused_with_the_rule_and_the_fix(
    limits: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidToleranceError, match=message):
        dd.schema_checks(Payments, asset="payments", tolerate={"amount|min": limits})


@pytest.mark.parametrize(
    ("limit", "readings"),
    [
        (1.0, "3 ways: as 1 row, or as 100% of the rows (a fraction), or as 1% (a percentage)"),
        (0.5, "2 ways: as 50% of the rows (a fraction), or as 0.5% (a percentage)"),
        (5.0, "2 ways: as 5 rows, or as 5% (a percentage)"),
    ],
)
def test_a_bare_number_whose_unit_would_be_a_guess_is_refused_with_the_forms_that_work(
    limit: float, readings: str
) -> None:
    with pytest.raises(InvalidToleranceError) as refused:
        dd.Tolerance(error_above=limit)
    assert str(refused.value) == (
        f"error_above={limit!r} for dd.Tolerance is a bare number that reads {readings}. "
        "Write the unit: a whole number of rows (10), or a percentage of the rows checked as "
        'text ("1%", "0.5%").'
    )
    with pytest.raises(InvalidToleranceError, match=r"'amount\|min' of schema Payments is a bare"):
        dd.tolerate("amount|min", warn_above=limit)(Payments)


def test_a_zero_float_reads_one_way_and_the_unambiguous_forms_work() -> None:
    assert (
        str(dd.Tolerance(warn_above=0.0, error_above=10))
        == "warn above 0 rows, error above 10 rows"
    )
    assert (
        str(dd.Tolerance(warn_above="0.5%", error_above="5%")) == "warn above 0.5%, error above 5%"
    )


def test_a_tolerance_built_directly_is_checked_when_built() -> None:
    with pytest.raises(InvalidToleranceError, match=r"error_above=-0.5 for dd.Tolerance is neg"):
        dd.Tolerance(error_above=-0.5)


@pytest.mark.parametrize("limit", ["29%", "29.0%", 29])
@pytest.mark.parametrize(("negative", "passed"), [(29, True), (30, False)])
def test_a_percentage_is_exact(limit: int | str, negative: int, passed: bool) -> None:
    # 0.29 * 100 is 28.999999999999996 in floating point: "29%" of 100 rows is still 29 rows
    frame = _payments(bad_emails=0, negative=negative, rows=100)
    tolerate = {"amount|min": dd.Tolerance(error_above=limit)}

    results = dd.wiring.check_results(Payments, frame, asset_key="payments", tolerate=tolerate)

    assert {r.check_name: r.passed for r in results}[AMOUNT] is passed


def test_a_warn_rule_cannot_tolerate_up_to_an_error() -> None:
    with pytest.raises(
        InvalidToleranceError, match=r"'amount\|min' .* is 'warn'.*Drop error_above="
    ):
        dd.schema_checks(Payments, asset="payments", warn="amount")


class Refunds(dy.Schema):
    id = dy.Int64(primary_key=True)
    reason = dy.String()


def test_a_with_schemas_tolerance_one_schema_refuses_says_how_to_scope_it_to_one_asset() -> None:
    """`tolerate=` of `dd.with_schemas` applies to every schema of the call: the error names
    the asset whose schema refused it, and the two ways to tolerate on one asset only."""
    defs = dg.Definitions(assets=[dg.AssetSpec("payments"), dg.AssetSpec("refunds")])

    with pytest.raises(InvalidToleranceError) as raised:
        dd.with_schemas(
            defs,
            {"payments": Payments, "refunds": Refunds},
            tolerate={"email": dd.Tolerance(warn_above=10)},
            source=dd.sources.DuckDBTableSource(),
        )

    message = str(raised.value)
    assert "tolerate= names 'email', neither a rule nor a column of schema Refunds." in message
    assert (
        "(asset refunds: dd.with_schemas's tolerate= applies to every schema of the call. To "
        "tolerate this on one asset only, declare it on that asset's schema with "
        "@dd.tolerate(...), or check refunds with its own dd.schema_checks(schema, "
        "asset='refunds', tolerate=...) and leave it out of the call.)"
    ) in message


def test_a_gated_asset_refuses_a_schema_with_tolerances() -> None:
    with pytest.raises(InvalidToleranceError, match=r"dd.asset has no quarantine.*quarantine=True"):
        dd.asset(Payments)(lambda: _payments())


# -------------------------------------- the Component ------------------------------------ #

ORDERS_ASSET = """\
import dagster as dg
import polars as pl

from dagster_dataframely.data import defective_orders


@dg.asset
def orders() -> pl.DataFrame:
    return defective_orders()
"""
ORDERS = "dagster_dataframely.data:OrdersSchema"


def test_the_component_takes_tolerances_per_entry(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    (sandbox.defs_folder_path / "assets.py").write_text(ORDERS_ASSET)
    tolerate = {"primary_key": {"warn_above": 1, "error_above": "50%"}, "amount": {"warn_above": 1}}
    scaffold_checks(
        sandbox, {"checks": [{"asset": "orders", "schema": ORDERS, "tolerate": tolerate}]}
    )

    result = materialize_project(sandbox, tmp_path)

    checked = evaluations(result)
    assert (checked["dy_rule__primary_key"].passed, checked["dy_rule__primary_key"].severity) == (
        False,
        WARN,
    )  # 2 of 13 rows: above 1, within 50%
    assert checked["dy_rule__amount__min"].passed  # 1 row, warn above 1
    assert checked["dy_rule__amount__min"].metadata["dy_tolerance"].value == "warn above 1 row"


@pytest.mark.parametrize(
    ("limit", "problem"),
    [
        (-3, "is negative"),
        (0.5, "is a bare number that reads 2 ways: as 50% of the rows (a fraction), or as 0.5%"),
    ],
)
def test_a_bad_tolerance_in_yaml_names_the_file_the_entry_and_the_rule(
    sandbox: DefsFolderSandbox, limit: float, problem: str
) -> None:
    (sandbox.defs_folder_path / "assets.py").write_text(ORDERS_ASSET)
    entry = {"asset": "orders", "schema": ORDERS, "tolerate": {"amount|min": {"warn_above": limit}}}
    path = scaffold_checks(sandbox, {"checks": [entry]})

    error = load_error(sandbox, path)

    assert isinstance(error, InvalidToleranceError)
    assert str(error).startswith(
        f"{path / 'defs.yaml'}: checks[0] (asset orders, schema OrdersSchema): warn_above={limit} "
        f"for 'amount|min' of schema OrdersSchema {problem}"
    )


# ------------------------------------- the property ------------------------------------- #

_LIMIT = st.one_of(
    st.none(),
    st.integers(0, 30),  # a count
    st.integers(0, 100).map(lambda p: f"{p}%"),  # a percentage
    st.integers(0, 1000).map(lambda p: f"{p / 10}%"),  # a percentage with a decimal
)


def _crosses(count: int, rows: int, bound: int | str | None) -> bool:
    """Whether `count` failing rows of `rows` exceed `bound`, in exact arithmetic."""
    if bound is None:
        return False
    if isinstance(bound, int):
        return count > bound
    return count * 100 > Fraction(bound.removesuffix("%")) * rows


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(0, 60),
    bad=st.data(),
    limits=st.tuples(_LIMIT, _LIMIT, _LIMIT, _LIMIT),
)
def test_each_verdict_follows_from_dataframelys_own_counts(
    rows: int, bad: st.DataObject, limits: tuple[Any, ...]
) -> None:
    frame = _payments(
        bad_emails=bad.draw(st.integers(0, rows)),
        negative=bad.draw(st.integers(0, rows)),
        rows=rows,
    )
    tolerate = {}
    for rule, (warn, error) in {"email|regex": limits[:2], "amount|min": limits[2:]}.items():
        if warn is None and error is None:
            continue
        if None not in (warn, error) and isinstance(warn, int) == isinstance(error, int):
            warn, error = sorted((warn, error), key=_ordered)  # warn_above <= error_above
        tolerate[rule] = {"warn_above": warn, "error_above": error}

    results = dd.wiring.check_results(Payments, frame, asset_key="payments", tolerate=tolerate)

    counts = Payments.filter(frame, cast=False).failure.counts()
    checked = {r.check_name: r for r in results}
    levels = []
    for rule, check in {"email|regex": EMAIL, "amount|min": AMOUNT}.items():
        count = counts.get(rule, 0)
        warn, error = (
            (tolerate[rule]["warn_above"], tolerate[rule]["error_above"])
            if rule in tolerate
            else {"email|regex": (0, "5%"), "amount|min": (5, 10)}[rule]
        )
        expected = (
            ERROR if _crosses(count, rows, error) else WARN if _crosses(count, rows, warn) else None
        )
        levels.append(expected)
        result = checked[check]
        assert result.passed == (expected is None), (rule, count, rows, warn, error)
        if expected is not None:
            assert result.severity == expected
        assert result.metadata["dy_failed_count"].value == count
        assert result.metadata["dy_failed_fraction"].value == (count / rows if rows else 0.0)

    # one collapsed check: the worst level of its rules (the others never fail here)
    (collapsed,) = [
        r
        for r in dd.wiring.check_results(
            Payments, frame, asset_key="payments", tolerate=tolerate, check_granularity="schema"
        )
        if r.check_name == "dy_schema__rules"
    ]
    worst = ERROR if ERROR in levels else WARN if WARN in levels else None
    assert collapsed.passed == (worst is None)
    if worst is not None:
        assert collapsed.severity == worst


def _ordered(bound: int | str) -> Fraction:
    """A count as itself, a percentage as the exact fraction it means."""
    if isinstance(bound, str):
        return Fraction(bound.removesuffix("%")) / 100
    return Fraction(bound)
