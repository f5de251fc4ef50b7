"""Differential tests: the translated schema rejects exactly the rows Pandera rejects.

For generated frames (nulls, NaN, infinities, empty strings, multi-byte characters,
duplicates), the rows Pandera's own `validate(lazy=True)` rejects through its non-warning
checks equal the rows `Schema.filter` rejects through the translated `"error"` rules: for
every built-in check of Pandera's polars backend, and for custom checks of each kind.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

import pandera.polars as pa
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pandera.api.polars.types import PolarsData
from pandera_support import dataframely_rejects, frames, pandera_rejects

from dagster_dataframely.pandera import to_dataframely
from dagster_dataframely.wiring import rules

INT, F, S = pl.Int64, pl.Float64, pl.String


@dataclass(frozen=True)
class Case:
    id: str
    dtype: Any
    checks: list[pa.Check] = field(default_factory=list)
    nullable: bool = True
    unique: bool = False

    def schema(self) -> pa.DataFrameSchema:
        column = pa.Column(self.dtype, self.checks, nullable=self.nullable, unique=self.unique)
        return pa.DataFrameSchema({"x": column}, name=f"case_{self.id}")


C = pa.Check
CASES = [
    # comparisons, on integers and floats (NaN compares greater than every number)
    *(
        Case(f"{name}-{dtype}-{'null' if nullable else 'nonnull'}", dtype, [check], nullable)
        for name, check in [
            ("ge", C.ge(3)),
            ("gt", C.gt(3)),
            ("le", C.le(7)),
            ("lt", C.lt(7)),
            ("eq", C.eq(3)),
            ("ne", C.ne(3)),
        ]
        for dtype in (INT, F)
        for nullable in (True, False)
    ),
    *(
        Case(f"in_range-{lo}-{hi}-{dtype}", dtype, [C.in_range(2, 8, lo, hi)])
        for lo in (True, False)
        for hi in (True, False)
        for dtype in (INT, F)
    ),
    Case("in_range-float-bounds", F, [C.in_range(-0.0, 1.5)], nullable=False),
    Case("isin-int", INT, [C.isin([1, 3, 5])]),
    Case("isin-float", F, [C.isin([0.0, 1.5, math.inf])]),
    Case("isin-str", S, [C.isin(["a", "é", "", "ab"])]),
    Case("isin-chars", S, [C.isin("aé")]),
    Case("notin-int", INT, [C.notin([1, 3, 5])], nullable=False),
    Case("notin-str", S, [C.notin(["a", ""])]),
    Case("eq-str", S, [C.eq("a")]),
    Case("ne-str", S, [C.ne("")], nullable=False),
    # strings: Pandera's str_matches is anchored at the start (alternation included)
    Case("str_matches", S, [C.str_matches("a|b")]),
    Case("str_matches-anchored", S, [C.str_matches("^é+$")]),
    Case("str_contains", S, [C.str_contains("b$")]),
    Case("str_contains-multibyte", S, [C.str_contains("€|😀")], nullable=False),
    Case("str_startswith", S, [C.str_startswith("a")]),
    Case("str_endswith", S, [C.str_endswith("é")]),
    Case("str_length-exact", S, [C.str_length(2)]),
    Case("str_length-range", S, [C.str_length(1, 2)]),
    Case("str_length-min", S, [C.str_length(min_value=2)]),
    Case("str_length-max", S, [C.str_length(max_value=1)], nullable=False),
    Case("unique_values_eq-int", INT, [C.unique_values_eq([1, 2])]),
    Case("unique_values_eq-str", S, [C.unique_values_eq(["a"])]),
    # columns: nullability (NaN is null for a float column), uniqueness
    Case("nullable-float", F, nullable=False),
    Case("unique-int", INT, unique=True),
    Case("unique-float", F, unique=True, nullable=False),
    Case("unique-str", S, unique=True),
    # check options: ignore_na=False, warnings, several checks of one kind, `name=`
    Case("ignore_na-false", F, [C.ge(0, ignore_na=False)]),
    Case("ignore_na-false-str", S, [C.str_length(1, 2, ignore_na=False)]),
    Case("warning", INT, [C.ge(5, raise_warning=True), C.le(9)]),
    Case("same-kind", INT, [C.ge(0), C.ge(2), C.le(9), C.le(8)]),
    Case("regexes", S, [C.str_matches("a"), C.str_contains("b"), C.str_matches("é")]),
    Case("renamed", INT, [C.gt(1, name="positive"), C.gt(2, name="positive")]),
    Case("int8-bound", pl.Int16, [C.ge(-100_000), C.isin([1, 2])]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_builtin_checks_reject_the_same_rows(case: Case, data: st.DataObject) -> None:
    schema = case.schema()
    df = data.draw(frames({"x": case.dtype}))
    assert dataframely_rejects(to_dataframely(schema), df) == pandera_rejects(schema, df)


# ------------------------------------ custom checks ------------------------------------- #


def _even(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col(data.key) % 2 == 0)


def _below_ten(data: PolarsData) -> pl.LazyFrame:
    # Collects: cannot be traced, so it runs on the rows (batched).
    values = data.lazyframe.collect()[data.key]
    return pl.LazyFrame({"ok": values < 10, "not_nan": ~values.is_nan()})


def _below_the_mean(data: PolarsData) -> pl.LazyFrame:
    # Reads rows, then selects: the selection holds a value computed from the data.
    mean = data.lazyframe.select(pl.col(data.key).mean()).collect().item()
    return data.lazyframe.select(pl.col(data.key) <= (mean if mean is not None else 0))


def _i_below_f(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col("i") < pl.col("f"), pl.col("s").str.len_chars() < 3)


def _all_non_negative(data: PolarsData) -> pl.LazyFrame:
    # `pl.col("*")` yields several columns, which Pandera folds with `&`.
    return data.lazyframe.select(pl.col("i", "f") >= 0)


def _has_rows(data: PolarsData) -> bool:
    return data.lazyframe.collect().height > 3


MIXED = {"i": INT, "f": F, "s": S}
CUSTOM = {
    "traced": pa.DataFrameSchema(
        {"i": pa.Column(INT, [C(_even)], nullable=True), "f": pa.Column(F, nullable=True)}
    ),
    "traced-ignore-na-false": pa.DataFrameSchema(
        {"i": pa.Column(INT, [C(_even, ignore_na=False)], nullable=True)}
    ),
    "batched": pa.DataFrameSchema({"f": pa.Column(F, [C(_below_ten)], nullable=True)}),
    "data-dependent": pa.DataFrameSchema(
        {"i": pa.Column(INT, [C(_below_the_mean)], nullable=True)}
    ),
    "element-wise": pa.DataFrameSchema(
        {"s": pa.Column(S, [C(lambda v: "a" in v, element_wise=True)], nullable=True)}
    ),
    "element-wise-dataframe": pa.DataFrameSchema(
        {"i": pa.Column(INT, nullable=True), "f": pa.Column(F, nullable=True)},
        checks=[C(lambda v: v != 3, element_wise=True)],
    ),
    "dataframe": pa.DataFrameSchema(
        {c: pa.Column(t, nullable=True) for c, t in MIXED.items()}, checks=[C(_i_below_f)]
    ),
    "dataframe-star": pa.DataFrameSchema(
        {c: pa.Column(t, nullable=True) for c, t in MIXED.items() if c != "s"},
        checks=[C(_all_non_negative)],
    ),
    "dataframe-bool": pa.DataFrameSchema(
        {"i": pa.Column(INT, nullable=True)}, checks=[C(_has_rows)]
    ),
    "dataframe-builtin": pa.DataFrameSchema(
        {c: pa.Column(t, nullable=True) for c, t in MIXED.items() if c != "s"},
        checks=[C.ge(0)],
    ),
    "unique-primary-key": pa.DataFrameSchema(
        {c: pa.Column(t) for c, t in MIXED.items()}, unique=["i", "s"]
    ),
    "unique-nullable": pa.DataFrameSchema(
        {c: pa.Column(t, nullable=True) for c, t in MIXED.items()}, unique=["i", "s"]
    ),
    "warning-custom": pa.DataFrameSchema(
        {"i": pa.Column(INT, [C(_even, raise_warning=True), C.ge(0)], nullable=True)}
    ),
}


@pytest.mark.parametrize("name", list(CUSTOM))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_custom_checks_reject_the_same_rows(name: str, data: st.DataObject) -> None:
    schema = CUSTOM[name]
    df = data.draw(frames({c: MIXED[c] for c in schema.columns}))
    assert dataframely_rejects(to_dataframely(schema), df) == pandera_rejects(schema, df)


class Kitchen(pa.DataFrameModel):
    """Many checks on several columns at once, with warnings among them."""

    i: int = pa.Field(ge=0, lt=10, nullable=True, unique=True)
    f: float = pa.Field(in_range={"min_value": -1, "max_value": 8}, ne=1.5)
    s: str = pa.Field(str_length={"max_value": 2}, str_matches="a", nullable=True)

    @pa.check("i")
    def i_even(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col(data.key) % 2 == 0)

    @pa.check("s", raise_warning=True)
    def s_short(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col(data.key).str.len_bytes() <= 2)

    @pa.dataframe_check
    def i_below_f(cls, data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("i") <= pl.col("f"))


@settings(max_examples=150, deadline=None)
@given(df=frames(MIXED, max_rows=12))
def test_a_model_with_many_checks_rejects_the_same_rows(df: pl.DataFrame) -> None:
    assert dataframely_rejects(to_dataframely(Kitchen), df) == pandera_rejects(Kitchen, df)


def test_datetime_bounds_with_time_zones_reject_the_same_rows() -> None:
    utc = dt.timezone.utc
    schema = pa.DataFrameSchema(
        {
            "t": pa.Column(
                pl.Datetime("ms", "UTC"),
                [
                    C.ge(dt.datetime(2024, 1, 1, tzinfo=utc)),
                    C.lt(dt.datetime(2025, 1, 1, tzinfo=utc)),
                ],
                nullable=True,
            ),
            "d": pa.Column(pl.Date, [C.in_range(dt.date(2024, 1, 1), dt.date(2024, 12, 31))]),
        }
    )
    df = pl.DataFrame(
        {
            "t": [
                dt.datetime(2023, 12, 31, 23, tzinfo=utc),
                dt.datetime(2024, 1, 1, tzinfo=utc),
                None,
                dt.datetime(2025, 1, 1, tzinfo=utc),
            ],
            "d": [
                dt.date(2024, 1, 1),
                dt.date(2023, 1, 1),
                dt.date(2024, 12, 31),
                dt.date(2025, 1, 1),
            ],
        },
        schema={"t": pl.Datetime("ms", "UTC"), "d": pl.Date},
    )
    translated = to_dataframely(schema)
    assert dataframely_rejects(translated, df) == pandera_rejects(schema, df) == {0, 1, 3}
    names = {rule.name for rule in rules(translated)}
    assert {"t|min", "t|max_exclusive", "d|min", "d|max"} <= names


def test_several_unique_groups_each_get_a_rule() -> None:
    """Pandera stops at the first `unique` group with duplicates; every group is a rule here.

    The verdicts agree whenever at most one group has duplicates; with more, the translated
    schema also rejects the duplicates of the later groups (Pandera reports them once the
    first group is fixed).
    """
    schema = pa.DataFrameSchema({"a": pa.Column(INT), "b": pa.Column(INT)}, unique=[["a"], ["b"]])
    translated = to_dataframely(schema)
    only_b = pl.DataFrame({"a": [1, 2, 3], "b": [1, 1, 2]})
    assert dataframely_rejects(translated, only_b) == pandera_rejects(schema, only_b) == {0, 1}
    both = pl.DataFrame({"a": [1, 1, 3], "b": [5, 2, 2]})
    assert pandera_rejects(schema, both) == {0, 1}
    assert dataframely_rejects(translated, both) == {0, 1, 2}
