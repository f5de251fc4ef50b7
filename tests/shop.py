"""A three-table collection for the cross-table tests: customers, orders and order lines.

Orders and lines share the primary key column `order_id`; customers are keyed by
`customer_id`, so they are `ignored_in_filters` (filters read them but remove none of their
rows). `shop_frames()` holds rows that break each filter, a member rule and a primary key.
"""

# No `from __future__ import annotations`: Dataframely reads the member annotations.
from typing import Annotated, Any

import dagster as dg
import dataframely as dy
import polars as pl

import dagster_dataframely as dd


class Customers(dy.Schema):
    customer_id = dy.Int64(primary_key=True)
    name = dy.String(nullable=True)


class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    customer_id = dy.Int64(nullable=True)
    amount = dy.Float64(nullable=True, min=0)


class OrderLines(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    line_no = dy.Int64(primary_key=True, min=1)
    quantity = dy.Int64(nullable=True, min=1)


def shop_collection(
    customer: type[dy.Schema], order: type[dy.Schema], line: type[dy.Schema]
) -> type[dy.Collection]:
    """Define the shop's collection over these member schemas: its filters are the same
    whatever store hands the tables back (the dbt tests' models come back as Int32)."""

    class ShopCollection(dy.Collection):
        customers: Annotated[dy.LazyFrame[customer], dy.CollectionMember(ignored_in_filters=True)]
        orders: dy.LazyFrame[order]
        lines: dy.LazyFrame[line]

        @dy.filter()
        def order_has_lines(self) -> pl.LazyFrame:
            """Every order has at least one line, and every line belongs to an order."""
            return self.orders.join(self.lines, on="order_id", how="semi")

        @dy.filter()
        def customer_exists(self) -> pl.LazyFrame:
            """Every order's customer is a known customer."""
            return self.orders.join(self.customers, on="customer_id", how="semi")

    return ShopCollection


@dd.warn("customer_exists")
class Shop(shop_collection(Customers, Orders, OrderLines)):
    """The shop's tables as the tests store them."""


MEMBERS = {"customers": "customers", "orders": "orders", "lines": "order_lines"}

#: (member, check name) -> failed rows in `shop_frames()`, as `Shop.filter` counts them.
SHOP_FAILURES = {
    ("orders", "dy_rule__amount__min"): 1,  # order 5
    # order 3 has no line; order 2's only line is a duplicated key, so is no valid line
    ("orders", "dy_filter__order_has_lines"): 2,
    ("orders", "dy_filter__customer_exists"): 2,  # order 4 (customer 9), order 6 (null)
    ("lines", "dy_rule__primary_key"): 2,  # (2, 1) twice
    ("lines", "dy_filter__order_has_lines"): 2,  # order 7 is no order; order 5 is invalid
    # lines of orders 4 and 6, and of orders 5 (invalid) and 7 (none) the filter never keeps
    ("lines", "dy_filter__customer_exists"): 4,
}


def failing_by_member(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], tuple[Any, Any]]:
    """(member, check name) -> (failed count, severity) of the run's failing checks."""
    members = {asset: member for member, asset in MEMBERS.items()}
    return {
        (members[e.asset_key.to_user_string()], e.check_name): (
            e.metadata["dy_failed_count"].value,
            e.severity,
        )
        for e in result.get_asset_check_evaluations()
        if not e.passed
    }


def expected_failures() -> dict[tuple[str, str], tuple[int, dg.AssetCheckSeverity]]:
    """`SHOP_FAILURES` with the severity each check reports (`customer_exists` is warned)."""
    error, warn = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
    return {
        key: (count, warn if key[1] == "dy_filter__customer_exists" else error)
        for key, count in SHOP_FAILURES.items()
    }


def shop_frames() -> dict[str, pl.DataFrame]:
    return {
        "customers": pl.DataFrame(
            {"customer_id": [1, 2], "name": ["Ada", None]},
            schema=Customers.create_empty().schema,
        ),
        "orders": pl.DataFrame(
            {
                "order_id": [1, 2, 3, 4, 5, 6],
                "customer_id": [1, 2, 1, 9, 1, None],
                "amount": [10.0, 5.0, 1.0, 3.0, -1.0, 2.0],
            },
            schema=Orders.create_empty().schema,
        ),
        "lines": pl.DataFrame(
            {
                "order_id": [1, 1, 2, 2, 4, 5, 6, 7],
                "line_no": [1, 2, 1, 1, 1, 1, 1, 1],
                "quantity": [1, 2, 1, 1, 1, 1, None, 1],
            },
            schema=OrderLines.create_empty().schema,
        ),
    }


class Returns(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    reason = dy.String(nullable=True)


class ShopWithReturns(Shop):
    """`Shop` with an optional member, which the checks may leave out."""

    returns: dy.LazyFrame[Returns] | None

    @dy.filter()
    def returns_have_orders(self) -> pl.LazyFrame:
        """Returned orders exist (without returns, every order is kept)."""
        if self.returns is None:
            return self.orders
        return self.orders.join(self.returns, on="order_id", how="semi")


def unkeyed_collection() -> type[dy.Collection]:
    """Define a collection whose members share no primary key column, yet have a filter."""

    class Unkeyed(dy.Collection):
        customers: dy.LazyFrame[Customers]
        orders: dy.LazyFrame[Orders]

        @dy.filter()
        def anything(self) -> pl.LazyFrame:
            return self.orders

    return Unkeyed
