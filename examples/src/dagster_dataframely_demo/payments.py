"""The payments team's Pandera model, in use before the migration to Dataframely.

`card_payments` is still checked against this model; `invoice_payments` against its migrated
twin in `payments_migrated.py` (`dagster-dataframely migrate-pandera
dagster_dataframely_demo.payments:Payments` wrote it). Both report the same check names, so
a check's history in Dagster survives the migration.
"""

import pandera.polars as pa
import polars as pl


class Payments(pa.DataFrameModel):
    """One captured payment of a storefront order."""

    payment_id: str = pa.Field(unique=True, str_matches=r"PAY-\d{6}$")
    order_id: str = pa.Field(str_matches=r"ORD-\d{5}$", raise_warning=True)
    method: str = pa.Field(isin=["card", "paypal", "invoice"])
    amount: float = pa.Field(gt=0, description="What was charged, in EUR.")
    captured_at: pl.Datetime(time_zone="UTC")  # type: ignore[valid-type]
