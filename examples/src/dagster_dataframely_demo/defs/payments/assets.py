"""The payments tables, as the payment provider's export delivers them, stored as parquet."""

import dagster as dg
import polars as pl
from dagster_dataframely_demo._data import generate

LAKE = "lake"  # the parquet IO manager's key, bound in definitions.py


@dg.asset(io_manager_key=LAKE, group_name="payments")
def card_payments() -> pl.DataFrame:
    """Payments taken by card or PayPal."""
    return generate().payments.filter(pl.col("method") != "invoice")


@dg.asset(io_manager_key=LAKE, group_name="payments")
def invoice_payments() -> pl.DataFrame:
    """Payments of invoices."""
    return generate().payments.filter(pl.col("method") == "invoice")
