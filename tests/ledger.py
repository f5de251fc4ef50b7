"""A collection whose filters use every plan shape the SQL translation knows (semi, anti,
inner and left joins, a filter on a joined column, `unique()`), a member that propagates its
failing rows, and one filter with no SQL form (an aggregation), for the pushdown tests."""

# No `from __future__ import annotations`: Dataframely reads the member annotations.
from typing import Annotated

import dataframely as dy
import polars as pl

import dagster_dataframely as dd


class Clients(dy.Schema):
    customer_id = dy.Int64(primary_key=True)
    name = dy.String(nullable=True)


class Invoices(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    customer_id = dy.Int64(nullable=True)
    amount = dy.Float64(nullable=True, min=0)


class Items(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    line_no = dy.Int64(primary_key=True, min=1)
    quantity = dy.Int64(nullable=True, min=1)


class Payments(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    paid = dy.Float64(nullable=True, min=0)


@dd.warn("not_blocked")
class Ledger(dy.Collection):
    clients: Annotated[dy.LazyFrame[Clients], dy.CollectionMember(ignored_in_filters=True)]
    invoices: dy.LazyFrame[Invoices]
    items: dy.LazyFrame[Items]
    payments: Annotated[dy.LazyFrame[Payments], dy.CollectionMember(propagate_row_failures=True)]

    @dy.filter()
    def invoice_has_items(self) -> pl.LazyFrame:
        """Every invoice has an item."""
        return self.invoices.join(self.items, on="order_id", how="semi")

    @dy.filter()
    def items_of_invoices(self) -> pl.LazyFrame:
        """The orders of items that belong to an invoice."""
        return self.items.join(self.invoices, on="order_id", how="semi").select("order_id").unique()

    @dy.filter()
    def paid_in_full(self) -> pl.LazyFrame:
        """Invoices paid at least their amount, by a payment of at least 1."""
        payments = self.payments.filter(pl.col("paid") >= 1.0)
        return self.invoices.join(payments, on="order_id").filter(
            pl.col("paid") >= pl.col("amount")
        )

    @dy.filter()
    def unpaid_or_positive(self) -> pl.LazyFrame:
        """Invoices without a payment, or with a positive one."""
        joined = self.invoices.join(self.payments, on="order_id", how="left")
        return joined.filter(pl.col("paid").is_null() | (pl.col("paid") > 0))

    @dy.filter()
    def not_blocked(self) -> pl.LazyFrame:
        """No invoice of a blocked client."""
        blocked = self.clients.filter(pl.col("name") == "blocked")
        return self.invoices.join(blocked, on="customer_id", how="anti")

    @dy.filter()
    def few_items(self) -> pl.LazyFrame:
        """At most two items per order (an aggregation: no SQL form here)."""
        return self.items.group_by("order_id").agg(pl.len()).filter(pl.col("len") <= 2)


#: The filter that runs in polars whatever the members' database, and its `dy_engine`: an
#: aggregation has no exact SQL form in the filter compiler.
POLARS_FILTERS = {"few_items": "polars (filter: GroupBy)"}
MEMBERS = {"clients": "clients", "invoices": "invoices", "items": "items", "payments": "payments"}


def ledger_frames() -> dict[str, pl.DataFrame]:
    """Rows that break every filter, a member rule, a primary key and a propagated row."""
    return {
        "clients": pl.DataFrame(
            {"customer_id": [1, 2], "name": ["Ada", "blocked"]},
            schema=Clients.create_empty().schema,
        ),
        "invoices": pl.DataFrame(
            {
                "order_id": [1, 2, 3, 4, 5, 6, 7],
                "customer_id": [1, 2, 1, None, 1, 9, 1],
                "amount": [10.0, 5.0, 1.0, 3.0, -1.0, 2.0, 4.0],
            },
            schema=Invoices.create_empty().schema,
        ),
        "items": pl.DataFrame(
            {
                "order_id": [1, 1, 1, 2, 2, 3, 4, 5, 6, 8],
                "line_no": [1, 2, 3, 1, 1, 1, 1, 1, 1, 1],
                "quantity": [1, 2, 1, 1, 1, None, 1, 1, 1, 1],
            },
            schema=Items.create_empty().schema,
        ),
        "payments": pl.DataFrame(
            {"order_id": [1, 2, 3, 4, 6], "paid": [10.0, 5.0, 0.5, -3.0, 2.0]},
            schema=Payments.create_empty().schema,
        ),
    }
