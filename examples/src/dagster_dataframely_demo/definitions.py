"""The demo code location: a storefront's pipeline with every way to put a schema on a table.

- `products` and `customers` are ordinary assets stored in an embedded DuckDB file;
  `dd.with_schemas` gives them a Columns tab and checks that read the stored table back. The
  asset functions are untouched. The payments tables, `card_payments` and
  `invoice_payments` (stored as parquet), are declared in the defs folder, `defs/payments/`,
  and get both from YAML alone: checks from a `dd.SchemaChecksComponent` (one on a Pandera
  model, one on its migrated twin), the Columns tab from the folder's `post_processing`.
- `customers` has two rows breaking an `"error"` rule, so its blocking check fails and
  `customer_segments`, downstream of it, is not materialized in that run. Its checks run
  inside DuckDB and keep the failing rows there (`customers__dy_failures`).
- `raw_orders` is the large table, stored as parquet by `dd.ParquetIOManager`. `orders` is a
  gated `dd.asset`: rows failing an `"error"` rule go to `orders_quarantine`, rows failing
  only `"warn"` rules are written with the valid ones and reported.
- `daily_sales` is partitioned by day; its checks are partitioned too and check the
  partition a run wrote.

Everything is written under `DEMO_STORAGE` (default: `.demo/data` in the working directory).
"""

import os
from pathlib import Path

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource
from dagster_duckdb_polars import DuckDBPolarsIOManager

import dagster_dataframely as dd

from . import defs as yaml_defs
from ._data import generate
from .schema import Customers, DailySales, Orders, Products

#: Where the demo's tables go: a DuckDB file and a folder of parquet files.
STORAGE = Path(os.environ.get("DEMO_STORAGE") or Path(".demo", "data")).absolute()
STORAGE.mkdir(parents=True, exist_ok=True)  # DuckDB creates the file, not its folder

DAYS = dg.DailyPartitionsDefinition(start_date="2024-05-01", end_date="2024-05-15")
WAREHOUSE = "warehouse"  # the DuckDB IO manager's key
LAKE = "lake"  # the parquet IO manager's key


@dg.asset(io_manager_key=WAREHOUSE, group_name="catalogue")
def products() -> pl.DataFrame:
    """The product catalogue, as the shop system exports it."""
    return generate().products


@dg.asset(io_manager_key=WAREHOUSE, group_name="customers")
def customers() -> pl.DataFrame:
    """The customer register, as the CRM exports it."""
    return generate().customers


@dg.asset(io_manager_key=WAREHOUSE, group_name="customers")
def customer_segments(customers: pl.DataFrame) -> pl.DataFrame:
    """Customers by country; needs a clean register, so a failing blocking check stops it."""
    return customers.group_by("country").len("customers").sort("country")


@dg.asset(io_manager_key=LAKE, group_name="orders")
def raw_orders() -> pl.LazyFrame:
    """Two weeks of order lines as the storefront's feed delivers them: mostly good."""
    return generate().order_lines.lazy()


@dd.asset(Orders, quarantine=True, io_manager_key=LAKE, group_name="orders")
def orders(raw_orders: pl.LazyFrame) -> pl.LazyFrame:
    """Order lines that satisfy every "error" rule; the others wait in the quarantine."""
    return raw_orders


@dg.asset(io_manager_key=LAKE, group_name="reporting", partitions_def=DAYS)
def daily_sales(context: dg.AssetExecutionContext, orders: pl.LazyFrame) -> pl.LazyFrame:
    """Revenue per product for the run's day, from the valid order lines."""
    day = DAYS.time_window_for_partition_key(context.partition_key).start.date()
    return (
        orders.filter(pl.col("ordered_at").dt.date() == day)
        .group_by(pl.col("ordered_at").dt.date().alias("day"), "sku")
        .agg(pl.len().alias("lines"), pl.col("amount").sum().alias("revenue"))
        .sort("sku")
    )


defs = dg.Definitions.merge(
    # customers are checked inside DuckDB, where their failing rows are kept too.
    dd.with_schemas(
        dd.with_schemas(
            dg.Definitions(
                assets=[
                    products,
                    customers,
                    customer_segments,
                    raw_orders,
                    orders,
                    daily_sales,
                ],
                # Every step in the process of the run, which has loaded this module already:
                # its steps take seconds, and a step process would first import the code
                # location.
                executor=dg.in_process_executor,
                resources={
                    WAREHOUSE: DuckDBPolarsIOManager(
                        database=str(STORAGE / "warehouse.duckdb"), schema="storefront"
                    ),
                    LAKE: dd.ParquetIOManager(base_dir=str(STORAGE / "lake")),
                    "duckdb": DuckDBResource(database=str(STORAGE / "warehouse.duckdb")),
                },
            ),
            {"products": Products, "daily_sales": DailySales},
        ),
        {"customers": Customers},
        source=dd.sources.DuckDBTableSource(table="storefront.customers"),
        keep_failing_rows=True,
    ),
    dg.load_defs(defs_root=yaml_defs, project_root=Path(__file__).parent),
)
