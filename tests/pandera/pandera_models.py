"""Pandera polars models the migration tests import (and the CLI test imports by path).

No `from __future__ import annotations` here: Pandera evaluates string annotations with
`typing.get_type_hints`, which on Python 3.10 rejects the dtype instances `Orders` is annotated
with (`pl.Datetime(...)`); evaluated when the class is made, they reach Pandera as objects.
"""

import datetime as dt
from decimal import Decimal

import pandera.polars as pa
import polars as pl
from pandera.api.polars.types import PolarsData


class Orders(pa.DataFrameModel):
    """Orders of the storefront, one row per order."""

    order_id: int = pa.Field(ge=1, unique=True, title="Order", description="The order number")
    customer: str = pa.Field(str_matches=r"[A-Z]{2}-\d+", str_length={"max_value": 8})
    status: str = pa.Field(isin=["open", "paid", "shipped"])
    amount: float = pa.Field(in_range={"min_value": 0, "max_value": 10_000}, nullable=True)
    discount: float = pa.Field(ge=0, le=1, raise_warning=True)
    note: str = pa.Field(
        nullable=True, str_length={"min_value": 1, "max_value": 3}, metadata={"pii": False}
    )
    country: str = pa.Field(alias="CountryCode", notin=["XX"], str_startswith="D")
    placed_at: pl.Datetime(time_unit="ms", time_zone="UTC") = pa.Field(  # type: ignore[valid-type]
        ge=dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    )
    price: pl.Decimal(10, 2) = pa.Field(ge=Decimal("0.01"))  # type: ignore[valid-type]
    size: pl.Enum(["S", "M", "L"]) = pa.Field(nullable=True)  # type: ignore[valid-type]
    tags: pl.List(pl.String) = pa.Field(nullable=True)  # type: ignore[valid-type]
    quantity: pl.Int16 = pa.Field(gt=0, lt=100, ne=13)

    @pa.check("quantity")
    def quantity_even(cls, data: PolarsData) -> pl.LazyFrame:
        """Quantities come in pairs."""
        return data.lazyframe.select(pl.col(data.key) % 2 == 0)

    @pa.check("note", element_wise=True, raise_warning=True)
    def note_is_lowercase(cls, value: str) -> bool:
        return value == value.lower()

    @pa.dataframe_check
    def paid_orders_have_amount(cls, data: PolarsData) -> pl.LazyFrame:
        """A paid order has an amount."""
        return data.lazyframe.select((pl.col("status") != "paid") | pl.col("amount").is_not_null())

    @pa.dataframe_check(raise_warning=True)
    def few_cancellations(cls, data: PolarsData) -> bool:
        """At most half the orders are open (a whole-table check)."""
        frame = data.lazyframe.collect()
        return frame.filter(pl.col("status") == "open").height * 2 <= max(frame.height, 1)

    class Config:
        unique = ("customer", "placed_at")


def orders_frame() -> pl.DataFrame:
    """A frame with valid rows and rows breaking rules of `Orders`, most with nulls."""
    utc = dt.timezone.utc
    return pl.DataFrame(
        {
            "order_id": [1, 2, 3, 3, 0],
            "customer": ["DE-1", "DE-22", "xx-3", "FR-123456", "DE-1"],
            "status": ["paid", "paid", "open", "lost", "open"],
            "amount": [10.5, None, float("nan"), -1.0, float("inf")],
            "discount": [0.0, 0.5, 1.5, None, float("nan")],
            "note": ["ok", None, "Éé", "", "toolong"],
            "CountryCode": ["DE", "DX", "XX", "FR", None],
            "placed_at": [
                dt.datetime(2024, 1, 1, tzinfo=utc),
                dt.datetime(2024, 1, 2, tzinfo=utc),
                dt.datetime(2019, 1, 1, tzinfo=utc),
                None,
                dt.datetime(2024, 1, 1, tzinfo=utc),
            ],
            "price": [Decimal("1.00"), Decimal("0.00"), Decimal("2.50"), None, Decimal("3.00")],
            "size": ["S", None, "L", "M", "S"],
            "tags": [["a"], None, [], ["b", None], ["c"]],
            "quantity": [2, 13, 3, 100, None],
        },
        schema_overrides={
            "placed_at": pl.Datetime("ms", "UTC"),
            "price": pl.Decimal(10, 2),
            "size": pl.Enum(["S", "M", "L"]),
            "quantity": pl.Int16,
        },
    )


def _positive(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col(data.key) > 0)


#: A DataFrameSchema whose custom checks include lambdas: migrated source reaches them
#: through this object.
readings = pa.DataFrameSchema(
    {
        "sensor": pa.Column(str, pa.Check.str_contains("^s[0-9]+$")),
        "value": pa.Column(
            float,
            [
                pa.Check(_positive),
                pa.Check(lambda data: data.lazyframe.select(pl.col("value") < 100)),
                pa.Check(lambda value: value != 42.0, element_wise=True, name="not_42"),
            ],
            nullable=True,
        ),
    },
    checks=[pa.Check(lambda data: data.lazyframe.select(pl.col("sensor") != "s0"))],
    name="readings",
    unique=["sensor", "value"],
)


def readings_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "sensor": ["s1", "s1", "s0", "x1", "s2", "s3"],
            "value": [1.0, 1.0, 5.0, -2.0, 42.0, None],
        }
    )


def _no_zero_filter(data: PolarsData) -> pl.LazyFrame:
    return data.lazyframe.select(pl.col("filter") != 0)


#: Column names that are not attribute names; a rule named like a `dy.Schema` method.
awkward = pa.DataFrameSchema(
    {
        "filter": pa.Column(int, pa.Check.isin([1, 2, 3]), nullable=True),
        "class": pa.Column(float, pa.Check.notin([1.5])),
        "1st": pa.Column(str, pa.Check.str_endswith("x"), nullable=True),
        "first": pa.Column(pl.Duration("ms"), pa.Check.gt(dt.timedelta(0)), nullable=True),
    },
    checks=[pa.Check(_no_zero_filter, name="filter")],
    unique=[["filter"], ["1st", "class"]],
    description="Columns named like Python keywords and schema methods.",
)


def awkward_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "filter": [1, 4, 1, None],
            "class": [1.5, 0.0, 2.0, float("nan")],
            "1st": ["ax", "b", "ax", None],
            "first": [dt.timedelta(0), dt.timedelta(1), None, dt.timedelta(2)],
        },
        schema_overrides={"first": pl.Duration("ms")},
    )
