"""`Figures`: one check's figures read back from a real run's evaluations, alike from the
`MetadataValue`s the instance stores and from their plain values (as JSON carries them)."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from dataclasses import replace
from pathlib import Path

from defective import DEFECTIVE_COUNTS
from support import evaluations
from test_failing_rows import _on_duckdb
from test_sources import _check, _warehouse

import dagster_dataframely as dd
from dagster_dataframely._checks.figures import Figures
from dagster_dataframely.data import defective_orders


def test_figures_read_a_failing_and_a_passing_check_of_a_real_run(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())
    result = _check(_on_duckdb(database, tolerate={"amount|max": dd.Tolerance(warn_above="10%")}))
    checked = evaluations(result)
    rows = defective_orders().height

    failing = Figures.of(checked["dy_rule__amount__min"])
    assert failing.asset == "orders"
    assert failing.check == "dy_rule__amount__min"
    assert failing.verdict == "failed"
    assert failing.rule == "amount|min"
    assert (failing.failed_count, failing.row_count) == (DEFECTIVE_COUNTS["amount|min"], rows)
    assert failing.failed_fraction == DEFECTIVE_COUNTS["amount|min"] / rows
    assert failing.tolerance == "error above 0 rows"
    assert failing.engine == "duckdb"
    assert failing.kept == '"sales"."orders__dy_failures"'
    assert failing.kept_query is not None and "orders__dy_failures" in failing.kept_query
    assert [row["amount"] for row in failing.sample] == ["-20.0"]

    warned = Figures.of(checked["dy_rule__note__max_length"])
    assert warned.verdict == "warned"

    tolerated = Figures.of(checked["dy_rule__amount__max"])
    assert tolerated.verdict == "passed"
    assert tolerated.failed_count == DEFECTIVE_COUNTS["amount|max"]
    assert tolerated.tolerance == "warn above 10%"
    assert tolerated.kept is None


def test_figures_read_plain_values_as_an_instance_returns_them(tmp_path: Path) -> None:
    database = _warehouse(tmp_path / "shop.duckdb", defective_orders())
    evaluation = evaluations(_check(_on_duckdb(database)))["dy_rule__amount__min"]
    plain = {key: value.value for key, value in evaluation.metadata.items()}
    plain["dy_failed_sample"] = {"records": [r.data for r in plain["dy_failed_sample"].records]}

    read = Figures.from_metadata(plain, asset="orders", check=evaluation.check_name)

    assert read == replace(Figures.of(evaluation), passed=None, severity=None)
    assert read.failed_count == DEFECTIVE_COUNTS["amount|min"]
    assert read.sample == Figures.of(evaluation).sample != ()
