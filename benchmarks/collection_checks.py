"""Benchmark: `dd.collection_checks`' evaluation vs reading the members and `Collection.filter`.

    .venv/bin/python benchmarks/collection_checks.py [--lines 10_000_000] [--repeat 3]

Writes parquet files of generated customers, orders (a quarter as many as lines) and order
lines (in a temporary directory, deleted afterwards), then measures, each in its own
subprocess with the same imports:

- checks: the evaluation a `dd.collection_checks` step runs, on the `pl.scan_parquet` scans
  `dd.ParquetIOManager` (or a `ParquetSource`) hands it (members' own rules and both
  filters, every check selected);
- checks_duckdb: the same evaluation, every member read from a DuckDB file (the same tables)
  the way `DuckDBTableSource(pushdown=False)` reads it: Arrow record batches, a cursor per
  query;
- pushdown: the same tables as `DuckDBTableSource` checks them by default: the members'
  rules and both filters run in DuckDB, as SQL;
- filter: `pl.read_parquet` of every member + `Collection.filter(cast=False)` (eager, its
  default) + `failure.counts()`.

For each: seconds after imports and peak RSS, the median of `--repeat` runs, and whether the
failing-row counts agree.
"""

# No `from __future__ import annotations`: Dataframely reads the collection's annotations.
import argparse
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

from _measure import child_figures, dispatch, interleaved, measured

TARGET_MEMORY = 0.5
MEMBERS = {"customers": "customers", "orders": "orders", "lines": "order_lines"}


def collection() -> Any:
    import dataframely as dy
    import polars as pl

    class Customers(dy.Schema):
        customer_id = dy.Int64(primary_key=True)
        name = dy.String()

    class Orders(dy.Schema):
        order_id = dy.Int64(primary_key=True)
        customer_id = dy.Int64(nullable=True)
        amount = dy.Float64(min=0)

    class OrderLines(dy.Schema):
        order_id = dy.Int64(primary_key=True)
        line_no = dy.Int64(primary_key=True, min=1)
        sku = dy.String(min_length=4)
        quantity = dy.Int64(min=1)

    class Shop(dy.Collection):
        customers: Annotated[dy.LazyFrame[Customers], dy.CollectionMember(ignored_in_filters=True)]
        orders: dy.LazyFrame[Orders]
        lines: dy.LazyFrame[OrderLines]

        @dy.filter()
        def order_has_lines(self) -> pl.LazyFrame:
            """Every order has a line and every line an order."""
            return self.orders.join(self.lines, on="order_id", how="semi")

        @dy.filter()
        def customer_exists(self) -> pl.LazyFrame:
            """Every order's customer is known."""
            return self.orders.join(self.customers, on="customer_id", how="semi")

    return Shop


# ------------------------------------- data ------------------------------------- #


def generate(directory: Path, lines: int) -> None:
    """About 1% of orders with an unknown customer, 1 in 100k lines without an order, and
    a duplicated line key every 1M lines."""
    import polars as pl

    orders = lines // 4
    n = pl.col("i")
    pl.select(pl.int_range(0, orders // 25, dtype=pl.Int64).alias("customer_id")).with_columns(
        name=pl.format("customer {}", pl.col("customer_id"))
    ).write_parquet(directory / "customers.parquet")
    pl.select(pl.int_range(0, orders + 1_000, dtype=pl.Int64).alias("i")).select(
        order_id=n,
        customer_id=(n * 2_654_435_761) % (orders // 25 + orders // 2_500),
        amount=(n % 500).cast(pl.Float64) + 0.5,
    ).write_parquet(directory / "orders.parquet")
    pl.select(pl.int_range(0, lines, dtype=pl.Int64).alias("i")).select(
        order_id=pl.when(n % 100_000 == 77).then(n + 10 * lines).otherwise(n // 4),
        line_no=pl.when(n % 1_000_000 == 5).then(n % 4).otherwise(n % 4 + 1),
        sku=pl.format("SKU-{}", n % 9_973),
        quantity=n % 7 + 1,
    ).write_parquet(directory / "order_lines.parquet")
    import duckdb

    with duckdb.connect(str(directory / "shop.duckdb")) as connection:
        for asset in MEMBERS.values():
            path = directory / f"{asset}.parquet"
            connection.execute(f"create table {asset} as select * from read_parquet('{path}')")


# ---------------------------------- measurements ---------------------------------- #


def measure(method: str, directory: str) -> dict[str, float]:
    """Run one method in this process and report its time and memory (JSON on stdout)."""
    import dagster as dg
    import polars as pl

    from dagster_dataframely._engine.settings import CheckSettings
    from dagster_dataframely._sidecar.collection_checks import collection_checks, collection_run
    from dagster_dataframely._sidecar.collection_evaluate import collection_results
    from dagster_dataframely.sources._duckdb import scan_duckdb

    shop = collection()
    paths = {member: Path(directory) / f"{asset}.parquet" for member, asset in MEMBERS.items()}
    keys = set(collection_checks(shop, members=MEMBERS).check_keys)
    run = collection_run(shop, members=MEMBERS, settings=CheckSettings())

    def checked(scans: dict[str, pl.LazyFrame], pushdowns: dict[str, Any] | None = None) -> int:
        return sum(
            int(r.metadata["dy_failed_count"].value)  # type: ignore[call-overload]
            for r in collection_results(run, scans, keys, pushdowns=pushdowns)
            if not r.passed and isinstance(r, dg.AssetCheckResult)
        )

    with measured() as figures:
        if method == "checks":
            failed = checked({member: pl.scan_parquet(path) for member, path in paths.items()})
        elif method in ("checks_duckdb", "pushdown"):
            import duckdb

            from dagster_dataframely.sources._duckdb_pushdown import pushdown, relation

            with ExitStack() as stack:
                connection = stack.enter_context(duckdb.connect(f"{directory}/shop.duckdb"))
                scans = {
                    member: stack.enter_context(scan_duckdb(connection, f"SELECT * FROM {asset}"))
                    for member, asset in MEMBERS.items()
                }
                pushdowns = {
                    member: pushdown(
                        connection,
                        relation(connection, asset, None, None),
                        lambda _: None,
                        resource_key="duckdb",
                    )
                    for member, asset in MEMBERS.items()
                }
                failed = checked(scans, pushdowns if method == "pushdown" else None)
        else:
            frames = {member: pl.read_parquet(path) for member, path in paths.items()}
            failure = shop.filter(frames, cast=False).failure
            failed = sum(sum(info.counts().values()) for info in failure.values())
    return {**figures, "failed": failed}


def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="dd-bench-") as directory:
        generate(Path(directory), args.lines)

        def run(method: str) -> dict[str, float]:
            return child_figures(__file__, method, directory, label=method)

        medians = interleaved(["checks", "checks_duckdb", "pushdown", "filter"], args.repeat, run)
    eager = medians["filter"]
    print(f"{args.lines // 1_000_000}M order lines, {args.lines // 4 // 1_000_000}M orders")
    print(f"{'':24} {'seconds':>8} {'peak MB':>8} {'failed rows':>12}")
    for name, method in (
        ("collection checks", "checks"),
        ("  members from DuckDB", "checks_duckdb"),
        ("  in DuckDB (pushdown)", "pushdown"),
        ("Collection.filter", "filter"),
    ):
        figures = medians[method]
        print(
            f"{name:24} {figures['seconds']:8.2f} {figures['peak_mb']:8.0f} "
            f"{int(figures['failed']):12d}"
        )
    for name, method in (
        ("parquet", "checks"),
        ("DuckDB", "checks_duckdb"),
        ("pushdown", "pushdown"),
    ):
        checks = medians[method]
        print(
            f"{name}: peak memory {checks['peak_mb'] / eager['peak_mb']:.2f}x of "
            f"Collection.filter (target <= {TARGET_MEMORY}x), time "
            f"{checks['seconds'] / eager['seconds']:.2f}x; counts agree: "
            f"{checks['failed'] == eager['failed']}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    dispatch(parser, measure, main, ("METHOD", "DIRECTORY"))
