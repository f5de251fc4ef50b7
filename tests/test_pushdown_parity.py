"""Property: the SQL backend run in DuckDB counts what the polars evaluator counts.

Generated tables (nulls, NaN, ±inf, -0.0, float32 rounding, multi-byte and newline strings,
duplicate and null keys, empty tables) go into a DuckDB table; every rule kind is evaluated
by pushdown and by polars, and the counts must be equal. Every rule but the one whose regex
has `\\d` (Unicode digits in polars) must have run in DuckDB, so the property is about SQL, not
about the fallback: the keys too are grouped in DuckDB (`grouping_keys`), not counted in polars
as beside an embedded DuckDB.
"""

from __future__ import annotations

import datetime as dt

import dataframely as dy
import duckdb
import polars as pl
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlglot import exp
from support import grouping_keys

from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.evaluate import evaluate
from dagster_dataframely._engine.sql.backend import SQLTable


class Everything(dy.Schema):
    id = dy.Int64(primary_key=True)
    ref = dy.String(nullable=True, unique=True)
    amount = dy.Float64(
        nullable=True, min=-1.5, max_exclusive=100.0, check={"small": lambda c: c.is_between(0, 50)}
    )
    ratio = dy.Float32(nullable=True, min_exclusive=0.1, max=1e6, allow_nan=True)
    code = dy.String(nullable=True, min_length=1, max_length=5, regex=r"^[a-c]+$")
    digits = dy.String(nullable=True, regex=r"^\d+$")  # `\d` is Unicode in polars: fallback
    level = dy.Int16(nullable=True, is_in=[1, 2, 3])
    day = dy.Date(nullable=True, min=dt.date(2020, 1, 1), max_exclusive=dt.date(2030, 1, 1))
    at = dy.Datetime(nullable=True, max=dt.datetime(2030, 1, 1, 12, 30))

    @dy.rule()
    def levelled_codes(cls) -> pl.Expr:
        """A level above 1 carries a code."""
        return (pl.col("level") + 1 <= 2) | pl.col("code").is_not_null()

    @dy.rule()
    def known_refs(cls) -> pl.Expr:
        """A known ref, or a small amount."""
        return pl.col("ref").is_in(["a", "b"]) | ~(pl.col("amount") * 2 > 3.0)


#: `level + 1` may wrap in polars' Int16 (at 32767), where DuckDB would widen or raise.
FALLBACK = {"digits|regex", "levelled_codes"}
FLOATS = [None, float("nan"), float("inf"), float("-inf"), 0.0, -0.0, -1.5, 0.1, 50.0, 100.0]
STRINGS = [None, "", "a", "abc", "abcab", "abcabc", "é", "aé", "日本", "a\nb", "٣", "12", "b"]
SCHEMA = {
    "id": pl.Int64,
    "ref": pl.String,
    "amount": pl.Float64,
    "ratio": pl.Float32,
    "code": pl.String,
    "digits": pl.String,
    "level": pl.Int16,
    "day": pl.Date,
    "at": pl.Datetime("us"),
}
ROW = st.fixed_dictionaries(
    {
        "id": st.sampled_from([None, 1, 2, 3, 4]),
        "ref": st.sampled_from(STRINGS),
        "amount": st.sampled_from(FLOATS),
        "ratio": st.sampled_from([*FLOATS, 1e6, 1e7]),
        "code": st.sampled_from(STRINGS),
        "digits": st.sampled_from(STRINGS),
        "level": st.sampled_from([None, 0, 1, 2, 3, 4]),
        "day": st.sampled_from(
            [None, dt.date(2019, 12, 31), dt.date(2020, 1, 1), dt.date(2030, 1, 1)]
        ),
        "at": st.sampled_from(
            [None, dt.datetime(2030, 1, 1, 12, 30), dt.datetime(2030, 1, 1, 12, 30, 0, 1)]
        ),
    }
)
CONNECTION = duckdb.connect()


def _in_duckdb(frame: pl.DataFrame) -> SQLTable:
    CONNECTION.execute("DROP TABLE IF EXISTS generated")
    CONNECTION.register("generated_arrow", frame.to_arrow())
    CONNECTION.execute("CREATE TABLE generated AS SELECT * FROM generated_arrow")
    CONNECTION.unregister("generated_arrow")
    table = SQLTable.of(
        exp.select(exp.Star()).from_("generated"),
        dialect="duckdb",
        run=lambda sql: CONNECTION.sql(sql).pl(),
    )
    return grouping_keys(table)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(rows=[])
@given(rows=st.lists(ROW, max_size=12))
def test_pushdown_counts_equal_the_polars_evaluator(rows: list[dict[str, object]]) -> None:
    frame = pl.DataFrame(rows, schema=SCHEMA, orient="row")
    catalogue = rules(Everything)
    table = _in_duckdb(frame)

    pushed = table.evaluate(frame.lazy(), catalogue, max_failure_samples=3, identify=["id"])
    reference = evaluate(frame.lazy(), catalogue, max_failure_samples=3, identify=["id"])

    assert pushed.row_count == reference.row_count == frame.height
    assert dict(pushed.failed) == dict(reference.failed)
    assert {
        name for name, engine in pushed.engines.items() if engine.startswith("polars")
    } == FALLBACK
    assert set(pushed.engines) == {rule.name for rule in catalogue}
    for name, sample in pushed.samples.items():
        assert 0 < sample.height <= 3
        assert sample.height == reference.samples[name].height
