"""Wide schemas: hundreds of columns, nearly every rule failing, some only at the frame's end.

The evaluator samples from one bounded head of the frame and queries the rules whose failing
rows lie further on; either way a rule's sample is its first failing rows in frame order.
"""

from __future__ import annotations

from pathlib import Path

import dataframely as dy
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.evaluate import evaluate, rule_columns
from dagster_dataframely.wiring import check_results

WIDTH = 300
ROWS = 3_000
LIMIT = 4


def _schema() -> type[dy.Schema]:
    values = {f"v{i}": dy.Int64(min=0, max=9) for i in range(WIDTH)}
    return type("WideSchema", (dy.Schema,), {"id": dy.Int64(primary_key=True), **values})


def _frame() -> pl.DataFrame:
    """Every column breaks its bounds and has nulls; every tenth column breaks its bounds
    only in the last rows; one key in 500 repeats."""
    n = pl.int_range(ROWS, dtype=pl.Int64)

    def value(i: int) -> pl.Expr:
        late = pl.when(n >= ROWS - 50).then(-5).otherwise(n % 10)
        broken = (n * (i + 1) + i) % 13 - 1 if i % 10 else late
        return pl.when((n + i) % 17 == 0).then(None).otherwise(broken)

    return pl.select(
        pl.when(n % 500 == 499).then(n - 1).otherwise(n).alias("id"),
        *(value(i).alias(f"v{i}") for i in range(WIDTH)),
    )


@pytest.fixture(scope="module")
def wide() -> tuple[type[dy.Schema], pl.DataFrame]:
    return _schema(), _frame()


def test_wide_schema_counts_equal_dataframely_on_a_parquet_scan(wide, tmp_path: Path) -> None:
    schema, frame = wide
    frame.write_parquet(tmp_path / "wide.parquet")
    scan = pl.scan_parquet(tmp_path / "wide.parquet")
    results = list(check_results(schema, scan, asset_key="wide", max_failure_samples=LIMIT))
    counts = {
        result.check_name: result.metadata["dy_failed_count"].value
        for result in results
        if result.check_name != "dy_schema__columns"
    }
    expected = schema.filter(frame, cast=False).failure.counts()
    assert len(expected) > 2 * WIDTH  # nearly every rule fails
    assert counts == {rule.check_name: expected.get(rule.name, 0) for rule in rules(schema)}
    for result in results:
        if "dy_failed_sample" in result.metadata:
            sample = result.metadata["dy_failed_sample"].value
            assert 0 < len(sample.records) <= LIMIT  # type: ignore[attr-defined]


def test_wide_schema_samples_are_the_first_failing_rows_wherever_they_lie(wide) -> None:
    schema, frame = wide
    catalogue = rules(schema)
    evaluation = evaluate(frame.lazy(), catalogue, max_failure_samples=LIMIT, identify=["id"])
    flags = rule_columns(frame.lazy(), catalogue).collect()
    failing = [rule for rule in catalogue if evaluation.failed[rule.name]]
    assert set(evaluation.samples) == {rule.name for rule in failing}
    late = {f"v{i}|min" for i in range(0, WIDTH, 10)}
    assert late <= set(evaluation.samples)
    for rule in failing:
        sample = evaluation.samples[rule.name]
        if rule.name == "primary_key":
            assert sample.height == LIMIT
            assert set(sample["id"]) <= set(frame["id"].filter(frame["id"].is_duplicated()))
            continue
        first = frame.filter(~flags[rule.check_name]).select("id", rule.column).head(LIMIT)
        assert_frame_equal(sample, first)
    assert evaluation.samples["v0|min"]["id"].min() >= ROWS - 50  # from past the head


def test_rules_failing_on_the_same_rows_each_sample_their_own_columns() -> None:
    # Rules failing on the same first rows share one gather of them; each sample still
    # shows the key and its own rule's column, with its own values.
    schema = type(
        "Shared",
        (dy.Schema,),
        {"id": dy.Int64(primary_key=True)} | {f"a{i}": dy.Int64(min=0) for i in range(6)},
    )
    n = pl.int_range(40, dtype=pl.Int64)
    broken = n.is_in([3, 7, 11, 30])
    frame = pl.select(
        n.alias("id"), *(pl.when(broken).then(-n - i).otherwise(i).alias(f"a{i}") for i in range(6))
    )
    evaluation = evaluate(frame.lazy(), rules(schema), max_failure_samples=3, identify=["id"])
    for i in range(6):
        expected = frame.select("id", f"a{i}").filter(pl.col("id").is_in([3, 7, 11]))
        assert_frame_equal(evaluation.samples[f"a{i}|min"], expected)
