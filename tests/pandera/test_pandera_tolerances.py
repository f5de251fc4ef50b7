"""A Pandera model has no tolerance of its own, but takes the package's: `tolerate=` names its
rules as the migrated Dataframely schema names them, in a real sidecar run."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from support import evaluations, materialized
from test_pandera_surfaces import Payments, valid_payments

import dagster_dataframely as dd

CHECK = "dy_rule__amount__min_exclusive"
ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN


@pytest.mark.parametrize(
    ("tolerate", "passed", "severity", "downstream_runs"),
    [
        (None, False, ERROR, False),
        ({"amount": dd.Tolerance(warn_above=0, error_above=1)}, False, WARN, True),
        ({"amount|min_exclusive": {"warn_above": "50%"}}, True, WARN, True),
    ],
)
def test_a_pandera_models_rule_takes_a_tolerance(
    tmp_path: Path,
    tolerate: dict[str, object] | None,
    passed: bool,
    severity: dg.AssetCheckSeverity,
    downstream_runs: bool,
) -> None:
    @dg.asset(name="payments")
    def stored() -> pl.DataFrame:
        return valid_payments().with_columns(amount=pl.Series([10.0, 0.0, 99.0]))  # 1 of 3

    @dg.asset(deps=[stored])
    def downstream() -> None:
        """Runs unless a blocking check failed at ERROR."""

    result = dg.materialize(
        [stored, downstream, dd.schema_checks(Payments, asset=stored, tolerate=tolerate)],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path))},
        raise_on_error=False,
    )

    check = evaluations(result)[CHECK]
    assert (check.passed, check.severity) == (passed, severity)
    assert check.metadata["dy_failed_count"].value == 1
    assert ("downstream" in materialized(result)) is downstream_runs
