"""Characterization of the Dataframely internals `_engine/dataframely_internals.py` reads.

If one of these fails after a Dataframely upgrade, the package's check names, counts or
rule descriptions would silently change: fix `_engine/dataframely_internals.py`, not the
user's assets.
"""

from __future__ import annotations

import dataframely as dy
import polars as pl
from shop import Shop, ShopWithReturns, shop_frames

from dagster_dataframely._engine.dataframely_internals import (
    collection_filters,
    collection_instance,
    rule_expressions,
    schema_rule_function,
)
from dagster_dataframely.data import OrdersSchema, defective_orders


class _Small(dy.Schema):
    key = dy.Int64(primary_key=True)
    amount = dy.Float64(min=0)

    @dy.rule()
    def positive_total(cls) -> pl.Expr:
        """The amounts sum to something positive."""
        return pl.col("amount").sum() > 0


def test_rule_expressions_are_exactly_the_rules_filter_evaluates() -> None:
    # Decision resting on it: check names and quarantine rule columns are these names, and
    # counts must equal `failure.counts()` for exactly these rules.
    failure = OrdersSchema.filter(defective_orders(), cast=False).failure
    assert list(rule_expressions(OrdersSchema)) == failure._rule_columns
    assert set(failure.counts()) <= set(rule_expressions(OrdersSchema))


def test_rule_expressions_use_dataframely_rule_names() -> None:
    # Decision resting on it: `<column>|<rule>` names give each column rule its owner.
    assert list(rule_expressions(_Small)) == [
        "positive_total",
        "primary_key",
        "key|nullability",
        "amount|nullability",
        "amount|min",
        "amount|inf",
        "amount|nan",
    ]


def test_a_schema_rule_keeps_its_function_on_the_class() -> None:
    # Decision resting on it: a `@dy.rule` docstring becomes the check's description.
    function = schema_rule_function(_Small, "positive_total")
    assert function is not None
    assert function.__doc__ == "The amounts sum to something positive."
    assert schema_rule_function(_Small, "primary_key") is None


def test_collection_filters_are_the_filters_filter_evaluates() -> None:
    # Decision resting on it: one `dy_filter__<name>` check per name, its description from
    # the function's docstring, and `Collection.filter`'s failure counts use the same names.
    filters = collection_filters(Shop)
    assert list(filters) == ["order_has_lines", "customer_exists"]
    assert filters["order_has_lines"].__doc__ == (
        "Every order has at least one line, and every line belongs to an order."
    )
    counts = Shop.filter(shop_frames(), cast=False).failure["orders"].counts()
    assert set(filters) <= set(counts)


def test_collection_instance_hands_filters_the_frames_as_given() -> None:
    # Decision resting on it: filters run on the lazy valid rows the checks computed (no
    # validation, no collect), and an optional member left out is None.
    frames = {name: frame.lazy() for name, frame in shop_frames().items()}
    instance = collection_instance(ShopWithReturns, frames)
    assert instance.orders is frames["orders"]
    assert instance.returns is None
    kept = collection_filters(ShopWithReturns)["order_has_lines"](instance)
    assert isinstance(kept, pl.LazyFrame)
