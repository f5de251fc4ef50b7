"""DuckDB pushdown's failure samples, fetched for many rules at once, in real runs.

DuckDB sends the samples of up to `BATCH` failing rules as one `UNION ALL BY NAME` query and
splits the rows by rule. Each rule check must still show exactly its own failing rows, with
its own columns and their types, as streaming (`pushdown=False`) shows them.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
from pathlib import Path
from typing import Any

import dataframely as dy
import duckdb
import polars as pl
from dagster_duckdb import DuckDBResource
from support import evaluations, logs
from test_pushdown import run_payments_checks

import dagster_dataframely as dd
from dagster_dataframely._engine.sql.samples import BATCH

WIDTH = BATCH + 4  # integer columns: more failing rules than one query holds
Wide: type[dy.Schema] = type(
    "Wide",
    (dy.Schema,),
    {
        "id": dy.Int64(primary_key=True),
        **{f"c{index}": dy.Int16(nullable=True, min=0) for index in range(WIDTH)},
        "label": dy.String(nullable=True, max_length=3),
        "ratio": dy.Float32(nullable=True, max=1.0),
        "day": dy.Date(nullable=True, min=dt.date(2024, 1, 1)),
    },
)
IDS = range(1, 7)
ROWS = pl.DataFrame(
    {
        "id": list(IDS),
        # Column `c{i}` fails on two rows, which differ from column to column; null passes.
        **{
            f"c{index}": [
                -1 if (id_ + index) % 3 == 0 else (None if id_ == 6 else id_) for id_ in IDS
            ]
            for index in range(WIDTH)
        },
        "label": ["abcd", "ab", None, "wxyz", "a", "abc"],
        "ratio": [0.5, 2.0, None, 0.25, 1.0, 0.0],
        "day": [dt.date(2024, 1, 2)] * 2 + [dt.date(2023, 12, 31)] + [dt.date(2024, 5, 1)] * 3,
    },
    schema={name: column.dtype for name, column in Wide.columns().items()},
)


def _database(path: Path) -> DuckDBResource:
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE SCHEMA finance")
        connection.register("frame", ROWS.to_arrow())
        connection.execute("CREATE TABLE finance.payments AS SELECT * FROM frame")
    return DuckDBResource(database=str(path))


def _samples(result: Any) -> dict[str, list[tuple[tuple[str, Any], ...]]]:
    """check name -> its failing sample's rows (sorted), for each check with one."""
    return {
        name: sorted(tuple(sorted(row.data.items())) for row in sample.records)
        for name, evaluation in evaluations(result).items()
        if (sample := evaluation.metadata.get("dy_failed_sample")) is not None
    }


def test_each_rule_shows_its_own_failing_rows_when_samples_share_a_query(
    tmp_path: Path,
) -> None:
    resources = {"duckdb": _database(tmp_path / "wide.duckdb")}

    instance, pushed = run_payments_checks(Wide, dd.sources.DuckDBTableSource(), resources)
    _, streamed = run_payments_checks(Wide, dd.sources.DuckDBTableSource(pushdown=False), resources)

    samples = _samples(pushed)
    assert samples == _samples(streamed)
    # Every rule failed: each check shows its own two (or one) rows, never another's.
    assert len(samples) == WIDTH + 3
    assert samples["dy_rule__c0__min"] == [
        (("c0", -1), ("id", 3)),
        (("c0", -1), ("id", 6)),
    ]
    assert samples["dy_rule__label__max_length"] == [
        (("id", 1), ("label", "abcd")),
        (("id", 4), ("label", "wxyz")),
    ]
    engines = {
        name: evaluation.metadata["dy_engine"].value
        for name, evaluation in evaluations(pushed).items()
        if "dy_engine" in evaluation.metadata
    }
    # Every rule ran in DuckDB, the key too: a small table's key is grouped there.
    assert engines.pop("dy_rule__primary_key") == "duckdb"
    assert set(engines.values()) == {"duckdb"}
    # The row rules' samples went in two queries, not one each.
    sent = [line for line in logs(instance, pushed) if "UNION ALL BY NAME" in line]
    assert len(sent) == 2
