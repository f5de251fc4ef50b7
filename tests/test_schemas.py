"""What is not a schema is refused by what it is, in a message of a few lines, whatever its
repr: a frame passed where its schema belongs is named by its type, not printed."""

from __future__ import annotations

import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely.data import storefront_orders
from dagster_dataframely.errors import UnsupportedSchemaError


@pytest.mark.parametrize(
    ("frame", "named"),
    [
        (pl.concat([storefront_orders()] * 500), "a polars.DataFrame is not a schema"),
        (storefront_orders().lazy(), "a polars.LazyFrame is not a schema"),
        (storefront_orders().to_pandas(), "a pandas.DataFrame is not a schema"),
    ],
)
def test_a_frame_passed_as_a_schema_is_named_by_its_type(frame: object, named: str) -> None:
    for define in (
        lambda: dd.schema_checks(frame, asset="orders"),
        lambda: dd.asset(frame)(lambda: None),
    ):
        with pytest.raises(UnsupportedSchemaError) as raised:
            define()
        message = str(raised.value)
        assert message.startswith(named) and "dataframely.Schema" in message
        assert "order_id" not in message and len(message) < 300


def test_anything_else_is_named_by_a_short_repr_and_its_type() -> None:
    with pytest.raises(UnsupportedSchemaError) as raised:
        dd.schema_checks("x" * 100_000, asset="orders")
    assert len(str(raised.value)) < 300 and "(a str) is not a schema" in str(raised.value)
    with pytest.raises(UnsupportedSchemaError, match=r"^class builtins\.dict is not a schema"):
        dd.schema_checks(dict, asset="orders")
