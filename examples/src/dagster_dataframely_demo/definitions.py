"""The demo code location: both ways to put a schema on a table.

- `orders` is gated: `dd.asset` validates what the function returns before the write; rows
  that fail an `"error"` rule go to `orders_quarantine`, the rest to the table.
- `legacy_orders` is an ordinary asset the team does not want to touch: `dd.with_schemas`
  gives it the schema's Columns tab and sidecar checks that read its stored table back and
  report one check per rule beside it.
"""

import os
import tempfile

import dagster as dg
import polars as pl

import dagster_dataframely as dd
from dagster_dataframely.data import defective_orders

from ._data import storefront_orders
from .schema import Orders

#: Where the demo's parquet files go; a fresh temporary folder unless set.
STORAGE = os.environ.get("DEMO_STORAGE") or tempfile.mkdtemp(prefix="dagster_dataframely_demo_")


@dg.asset
def raw_orders() -> pl.DataFrame:
    """Today's order lines as they arrive: mostly good, some broken."""
    return pl.concat([storefront_orders(), defective_orders()])


@dd.asset(Orders, quarantine=True)
def orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
    """Order lines that satisfy every "error" rule; the others wait in the quarantine."""
    return raw_orders


@dg.asset
def legacy_orders() -> pl.LazyFrame:
    """An existing asset, written without validation; checked afterwards by its sidecar."""
    return defective_orders().lazy()


defs = dd.with_schemas(
    dg.Definitions(
        assets=[raw_orders, orders, legacy_orders],
        resources={"io_manager": dd.ParquetIOManager(base_dir=STORAGE)},
    ),
    {"legacy_orders": Orders},
    blocking=False,  # report the legacy table's failures without stopping the run
)
