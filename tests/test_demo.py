"""`make demo` runs `python -m dagster_dataframely_demo`: it must succeed and show the outcome."""

import subprocess
import sys
from pathlib import Path

import polars as pl

from dagster_dataframely.data import OrdersSchema
from dagster_dataframely.wiring import rules


def test_the_demo_writes_valid_rows_quarantines_the_rest_and_reports_checks(
    tmp_path: Path,
) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "dagster_dataframely_demo"],
        env={"DEMO_STORAGE": str(tmp_path), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Run succeeded" in run.stdout
    assert "legacy_orders: 12 checks passed, 10 failed" in run.stdout
    orders = pl.read_parquet(tmp_path / "orders.parquet")
    quarantine = pl.read_parquet(tmp_path / "orders_quarantine.parquet")
    failed = OrdersSchema.filter(orders, cast=False).failure.counts()
    errors = {rule.name for rule in rules(OrdersSchema) if rule.severity == "error"}
    assert not errors & set(failed)  # the table holds no row failing an "error" rule
    assert orders.height + quarantine.height == 25
    assert "dy_rule__amount__min" in quarantine.columns
