"""The gated table's `dy_statistics` describe the rows written to the table, and only those:
not the quarantined rows, whose values (the extreme ones a rule catches) would otherwise show
as the table's min, max, nulls or longest string. Real runs, storing parquet with
`dd.ParquetIOManager`, for a returned `LazyFrame` (the counting pass aggregates them) and a
returned `DataFrame`, with and without a failing primary key (whose rows the counting pass
does not tell apart, so the statistics take a pass of their own over the written rows). The
row sample is the head of the stored table, wherever the first valid rows lie."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import materialization

import dagster_dataframely as dd
from dagster_dataframely._engine.display import table
from dagster_dataframely._engine.statistics import statistics
from dagster_dataframely.data import OrdersSchema, defective_orders


@dd.warn("label|max_length")
class Readings(dy.Schema):
    id = dy.Int64(primary_key=True)
    value = dy.Float64(min=0, nullable=True)
    label = dy.String(max_length=5, nullable=True)


READINGS = pl.DataFrame(
    {
        "id": [1, 2, 3, 4, 5],
        "value": [1.0, None, -100.0, 3.0, -5.0],  # 3 and 5 break `value|min` ("error")
        "label": ["ab", "abcdefgh", None, "abc", "abcdefghijklmno"],  # 2 only "warn"
    }
)
#: Rows 1, 4 and the warn-only row 2 are written.
WRITTEN = {
    "id": {"nulls": 0, "min": "1", "max": "4", "mean": None},  # an identifier: no mean
    "value": {"nulls": 1, "min": "1.0", "max": "3.0", "mean": "2.0"},
    "label": {"nulls": 0, "max_length": 8},
}


def gated(schema: type[dy.Schema], source: Path, *, lazy: bool) -> dg.AssetsDefinition:
    @dd.asset(schema, quarantine=True, name="readings")
    def readings() -> pl.LazyFrame | pl.DataFrame:
        scan = pl.scan_parquet(source)
        return scan if lazy else scan.collect()

    return readings


def run(asset: dg.AssetsDefinition, store: Path) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [asset], resources={"io_manager": dd.ParquetIOManager(base_dir=str(store))}
    )


def statistics_of(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    records = materialization(result, "readings")["dy_statistics"].records
    return {r.data["column"]: r.data for r in records}


@pytest.mark.parametrize("lazy", [True, False], ids=["LazyFrame", "DataFrame"])
@pytest.mark.parametrize("repeated_key", [False, True], ids=["keys-distinct", "key-repeated"])
def test_the_statistics_describe_the_written_rows_not_the_quarantined_ones(
    tmp_path, lazy, repeated_key
):
    repeated = pl.DataFrame({"id": [6, 6], "value": [1000.0, 7.0], "label": [None, "x"]})
    frame = pl.concat([READINGS, repeated]) if repeated_key else READINGS  # quarantined by
    # `primary_key`, which has no flag in the counting pass
    source = tmp_path / "readings.parquet"
    frame.write_parquet(source)

    result = run(gated(Readings, source, lazy=lazy), tmp_path / "store")

    assert materialization(result, "readings")["dagster/row_count"] == 3
    found = statistics_of(result)
    for column, expected in WRITTEN.items():
        assert {name: found[column][name] for name in expected} == expected, column


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(picks=st.lists(st.integers(0, 12), min_size=1, max_size=30), lazy=st.booleans())
def test_the_statistics_equal_those_of_the_stored_table(tmp_path_factory, picks, lazy):
    tmp_path = tmp_path_factory.mktemp("stats")
    source = tmp_path / "orders.parquet"
    defective_orders()[picks].write_parquet(source)
    store = tmp_path / "store"

    @dd.asset(OrdersSchema, quarantine=True, name="readings")
    def readings() -> pl.LazyFrame | pl.DataFrame:
        scan = pl.scan_parquet(source)
        return scan if lazy else scan.collect()

    result = dg.materialize(
        [readings],
        resources={"io_manager": dd.ParquetIOManager(base_dir=str(store))},
        raise_on_error=False,
    )

    written = store / "readings.parquet"
    if not written.exists():  # every row was quarantined: no table, no statistics
        assert not result.success
        return
    stored = pl.read_parquet(written)
    described = statistics(stored, identifiers=OrdersSchema.primary_key())
    expected = {r.data["column"]: r.data for r in table(described).records}
    assert statistics_of(result) == expected


def test_a_mean_is_shown_unless_the_column_is_an_identifier(tmp_path):
    """An identifier's mean means nothing: the primary key's (gaps or not) and an integer
    column's whose values fill their range as a sequence does are left out; a measure's
    mean, a sparse integer's and a dense float's are shown, of the written rows only."""

    class Events(dy.Schema):
        id = dy.Int64(primary_key=True)
        sequence = dy.Int64()  # 1..n, not declared a key: still an identifier
        sparse = dy.Int64()  # distinct, but far apart: a measure as far as can be told
        count = dy.Int32(min=0)  # repeats: a measure
        ratio = dy.Float64()

    rows = 40
    frame = pl.DataFrame(
        {
            "id": [3 * i for i in range(rows)],  # gaps: a key all the same
            "sequence": list(range(1, rows + 1)),
            "sparse": [1_000 * i * i for i in range(rows)],
            "count": [i % 4 - (1 if i == 7 else 0) for i in range(rows)],  # row 7 breaks min
            "ratio": [float(i) for i in range(rows)],
        },
        schema_overrides={"count": pl.Int32},
    )
    source = tmp_path / "events.parquet"
    frame.write_parquet(source)

    @dd.asset(Events, quarantine=True, name="readings")
    def readings() -> pl.LazyFrame:
        return pl.scan_parquet(source)

    found = statistics_of(run(readings, tmp_path / "store"))
    written = frame.filter(pl.col("count") >= 0)
    assert found["id"]["mean"] is None
    assert found["sequence"]["mean"] is None
    assert float(found["sparse"]["mean"]) == round(written["sparse"].mean(), 2)  # type: ignore[arg-type]
    assert float(found["count"]["mean"]) == round(written["count"].mean(), 2)  # type: ignore[arg-type]
    assert float(found["ratio"]["mean"]) == round(written["ratio"].mean(), 2)  # type: ignore[arg-type]


def test_the_longest_string_is_counted_in_bytes_as_the_max_length_rule_counts(tmp_path):
    """`max_length` in the statistics is the bound Dataframely's `max_length` rule checks:
    'Größe' is 5 characters and 7 bytes, so `label|max_length` (5) fails it, a warn rule here,
    and the statistics say 7, not 5."""
    source = tmp_path / "readings.parquet"
    pl.DataFrame({"id": [1, 2], "value": [1.0, 2.0], "label": ["abc", "Größe"]}).write_parquet(
        source
    )

    result = run(gated(Readings, source, lazy=True), tmp_path / "store")

    assert statistics_of(result)["label"]["max_length"] == len("Größe".encode()) == 7


def _readings(*kinds: tuple[str, int]) -> pl.DataFrame:
    """Rows of `Readings` in runs: `("valid", n)`, `("invalid", n)` (breaking `value|min`,
    an "error" rule) or `("warned", n)` (breaking only `label|max_length`, a "warn" rule)."""
    labels = {"valid": "ok", "invalid": "bad", "warned": "too long"}
    kind = [k for k, n in kinds for _ in range(n)]
    return pl.DataFrame(
        {
            "id": range(len(kind)),
            "value": [-1.0 if k == "invalid" else float(i) for i, k in enumerate(kind)],
            "label": [labels[k] for k in kind],
        }
    )


@pytest.mark.parametrize(
    "kinds",
    [
        [("valid", 2), ("invalid", 1), ("valid", 20)],
        [("invalid", 10_001), ("valid", 8)],  # no valid row among the first 10,000
        [("warned", 2), ("valid", 2), ("invalid", 3), ("warned", 2)],  # fewer valid than 5
    ],
    ids=["valid-first", "invalid-prefix", "few-valid"],
)
def test_the_row_sample_is_the_head_of_the_stored_table(tmp_path, kinds):
    source = tmp_path / "readings.parquet"
    _readings(*kinds).write_parquet(source)
    store = tmp_path / "store"

    result = run(gated(Readings, source, lazy=True), store)

    shown = materialization(result, "readings")["dy_row_sample"].records
    stored = pl.read_parquet(store / "readings.parquet").head(5)
    assert [r.data for r in shown] == [r.data for r in table(stored, null="null").records]
