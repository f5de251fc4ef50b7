"""Dataframely schema `Payments`, migrated from a Pandera model.

Migrated from `dagster_dataframely_demo.payments:Payments` by `dagster-dataframely
migrate-pandera`. Each rule keeps the name dagster-dataframely gave the Pandera check,
so Dagster check names (and their history) stay the same.
"""

import dataframely as dy

import dagster_dataframely as dd


@dd.warn("order_id|regex")
class Payments(dy.Schema):
    """One captured payment of a storefront order."""

    payment_id = dy.String(
        nullable=False,
        unique=True,
        # str_matches: Pandera anchors the pattern at the start
        regex="^PAY-\\d{6}$",
    )
    order_id = dy.String(
        nullable=False,
        # str_matches: Pandera anchors the pattern at the start
        regex="^ORD-\\d{5}$",
    )
    method = dy.String(
        nullable=False,
        check={
            # Dataframely has `is_in` only for integer columns
            "isin": lambda col: col.is_in(["card", "paypal", "invoice"]),
        },
    )
    amount = dy.Float64(
        nullable=False,
        allow_inf=True,
        # Pandera treats NaN as null: only a nullable column may hold NaN
        allow_nan=False,
        min_exclusive=0,
        description="What was charged, in EUR.",
    )
    captured_at = dy.Datetime(time_unit="us", time_zone="UTC", nullable=False)
