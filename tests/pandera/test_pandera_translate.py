"""`to_dataframely`: names, severities, dtypes, metadata and caching of translated schemas."""

from __future__ import annotations

import warnings
from typing import Any

import dataframely as dy
import pandera.polars as pa
import polars as pl
import pytest
from pandera.api.polars.types import PolarsData
from pandera_models import Orders, readings

from dagster_dataframely._engine.schemas import as_dataframely
from dagster_dataframely.errors import UnsupportedSchemaError
from dagster_dataframely.pandera import run_pandera_check, to_dataframely
from dagster_dataframely.wiring import rules


def severities(schema: Any) -> dict[str, str]:
    return {rule.name: rule.severity for rule in rules(schema)}


def test_the_same_model_gives_the_same_class() -> None:
    assert to_dataframely(Orders) is to_dataframely(Orders)
    assert to_dataframely(readings) is to_dataframely(readings)
    assert as_dataframely(Orders) is to_dataframely(Orders)
    assert to_dataframely(Orders).__name__ == "Orders"
    assert to_dataframely(readings).__name__ == "Readings"
    assert issubclass(to_dataframely(Orders), dy.Schema)


def test_a_schema_changed_in_place_is_translated_as_it_now_is() -> None:
    schema = pa.DataFrameSchema({"amount": pa.Column(int)})
    frame = pl.DataFrame({"amount": [1, -1]})
    assert to_dataframely(schema).is_valid(frame)
    schema.columns["amount"].checks.append(pa.Check.gt(0))
    with pytest.raises(pa.errors.SchemaErrors):
        schema.validate(frame, lazy=True)
    assert not to_dataframely(schema).is_valid(frame)
    assert to_dataframely(schema) is to_dataframely(schema)
    schema.strict = True
    with pytest.raises(UnsupportedSchemaError, match="strict=True"):
        to_dataframely(schema)


def test_rule_names_follow_the_naming_scheme() -> None:
    assert severities(Orders) == {
        "paid_orders_have_amount": "error",
        "few_cancellations": "warn",
        "primary_key": "error",
        "order_id|nullability": "error",
        "order_id|unique": "error",
        "order_id|min": "error",
        "customer|nullability": "error",
        "customer|check__str_length": "error",
        "customer|regex": "error",
        "status|nullability": "error",
        "status|check__isin": "error",
        "amount|min": "error",
        "amount|max": "error",
        "discount|nullability": "error",
        "discount|min": "warn",
        "discount|max": "warn",
        "discount|nan": "error",
        "note|check__str_length": "error",
        "note|check__note_is_lowercase": "warn",
        "CountryCode|nullability": "error",
        "CountryCode|check__notin": "error",
        "CountryCode|check__str_startswith": "error",
        "placed_at|nullability": "error",
        "placed_at|min": "error",
        "price|nullability": "error",
        "price|check__greater_than_or_equal_to": "error",
        "quantity|nullability": "error",
        "quantity|check__not_equal_to": "error",
        "quantity|check__quantity_even": "error",
        "quantity|min_exclusive": "error",
        "quantity|max_exclusive": "error",
    }


def test_repeated_names_are_numbered_and_schema_rules_avoid_taken_names() -> None:
    def filter(data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("x") > 0)

    def x(data: PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("x") < 9)

    schema = pa.DataFrameSchema(
        {
            "x": pa.Column(
                int,
                [
                    pa.Check.ge(0),
                    pa.Check.ge(1),
                    pa.Check.ge(2),
                    pa.Check(lambda d: d.lazyframe.select(pl.col("x") != 3)),
                    pa.Check(lambda d: d.lazyframe.select(pl.col("x") != 4)),
                    pa.Check.le(5, name="small"),
                    pa.Check.le(6, name="small"),
                ],
            ),
        },
        checks=[pa.Check(filter), pa.Check(x), pa.Check(x)],
    )
    assert list(severities(schema)) == [
        "filter_2",
        "x_2",
        "x_3",
        "x|nullability",
        "x|check__greater_than_or_equal_to",
        "x|check__greater_than_or_equal_to_2",
        "x|check__check",
        "x|check__check_2",
        "x|check__small",
        "x|min",
        "x|max",
    ]


def test_several_unique_groups_or_nullable_ones_become_rules() -> None:
    schema = pa.DataFrameSchema(
        {"a": pa.Column(int), "b": pa.Column(int, nullable=True), "c": pa.Column(str)},
        unique=[["a", "b"], ["c"]],
    )
    assert [r.name for r in rules(schema) if r.column is None] == ["unique_a_b", "unique_c"]


@pytest.mark.parametrize(
    "dtype",
    [
        *(pl.Int8(), pl.Int16(), pl.Int32(), pl.Int64()),
        *(pl.UInt8(), pl.UInt16(), pl.UInt32(), pl.UInt64()),
        *(pl.Float32(), pl.Float64(), pl.String(), pl.Boolean(), pl.Binary()),
        *(pl.Date(), pl.Time(), pl.Datetime("ms", "Europe/Berlin"), pl.Datetime("ns")),
        *(pl.Duration("ms"), pl.Decimal(10, 2), pl.Enum(["b", "a"]), pl.Categorical()),
        pl.List(pl.Datetime("us", "UTC")),
        pl.Array(pl.Float32(), 3),
        pl.Struct({"x": pl.Int32(), "y": pl.List(pl.String())}),
    ],
    ids=str,
)
def test_dtypes_map_exactly(dtype: pl.DataType) -> None:
    translated = to_dataframely(pa.DataFrameSchema({"x": pa.Column(dtype, nullable=True)}))
    column = translated.columns()["x"]
    assert column.dtype == dtype
    assert column.validate_dtype(dtype)
    assert [r.name for r in rules(translated)] == []  # nested values carry no rules


def test_a_close_dtype_is_not_accepted() -> None:
    column = to_dataframely(
        pa.DataFrameSchema({"x": pa.Column(pl.Datetime("ms", "UTC"))})
    ).columns()["x"]
    assert not column.validate_dtype(pl.Datetime("us", "UTC"))
    assert not column.validate_dtype(pl.Datetime("ms"))


def test_descriptions_titles_and_metadata_carry_over() -> None:
    columns = to_dataframely(Orders).columns()
    assert columns["order_id"].description == "The order number"
    assert columns["order_id"].metadata == {"title": "Order"}
    assert columns["note"].metadata == {"pii": False}
    assert to_dataframely(Orders).__doc__ == "Orders of the storefront, one row per order."
    described = {rule.name: rule.description for rule in rules(Orders)}
    assert described["quantity|check__quantity_even"] == "Quantities come in pairs."
    assert described["paid_orders_have_amount"] == "A paid order has an amount."
    assert "slow" in described["note|check__note_is_lowercase"]


def test_data_checks_run_for_a_lazyframe() -> None:
    """Pandera validates only a LazyFrame's schema by default; the translation checks data."""
    schema = pa.DataFrameSchema({"x": pa.Column(int, pa.Check.ge(0))})
    lazy = pl.LazyFrame({"x": [1, -1]})
    schema.validate(lazy, lazy=True).collect()  # Pandera: no data checks, no error
    _, failure = to_dataframely(schema).filter(lazy, cast=False).collect_all()
    assert failure.counts() == {"x|min": 1}


def _key_is_even(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col(data.key) % 2 == 0)


def _collected(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.collect().select(pl.col(data.key) % 2 == 0).lazy()


def _positive_mean(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col(data.key).mean() > 0)


FRAME = {"x": pl.Int64()}


def test_a_check_that_selects_from_its_frame_becomes_a_plain_expression() -> None:
    expr = run_pandera_check(_key_is_even, "x", FRAME)
    assert expr.meta.eq((pl.col("x") % 2) == 0)


def test_other_checks_run_on_the_rows() -> None:
    expr = run_pandera_check(_collected, "x", FRAME)
    assert "python_udf" in str(expr)
    verdicts = pl.DataFrame({"x": [1, 2, None]}).select(expr).to_series().to_list()
    assert verdicts == [False, True, None]


def _below_the_maximum(data: PolarsData) -> pl.LazyFrame:
    top = data.lazyframe.select(pl.col("x").max()).collect().item()
    return data.lazyframe.select(pl.col("x") < (top if top is not None else 0))


def test_a_check_that_reads_rows_runs_on_the_rows() -> None:
    """Traced on no rows, its selection would hold a value computed from nothing."""
    expr = run_pandera_check(_below_the_maximum, "x", FRAME).alias("verdict")
    verdicts = pl.DataFrame({"x": [1, 5, 3]}).with_columns(expr)["verdict"]
    assert verdicts.to_list() == [True, False, True]


def test_element_wise_checks_map_each_value_quietly() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expr = run_pandera_check(lambda v: v > 1, "x", FRAME, element_wise=True)
    assert pl.DataFrame({"x": [1, 2]}).select(expr).to_series().to_list() == [False, True]


def test_a_verdict_for_the_whole_table_applies_to_every_row() -> None:
    """An aggregate check fails every row (Pandera reports its one failure at row 0)."""
    frame = pl.DataFrame({"x": [-5, 1, 2]})
    for check in (_positive_mean, lambda data: False):
        verdict = run_pandera_check(check, "x", FRAME).alias("verdict")
        assert frame.with_columns(verdict)["verdict"].to_list() == [False, False, False]


def test_ignore_na_false_makes_a_null_verdict_fail() -> None:
    expr = run_pandera_check(_key_is_even, "x", FRAME, ignore_na=False)
    assert pl.DataFrame({"x": [None]}, schema=FRAME).select(expr).item() is False
