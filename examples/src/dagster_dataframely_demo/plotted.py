"""A code location for the picture of a plotted `dy_failed_fraction` (`make screenshots`).

`payments` is a daily export whose e-mail addresses are mostly well formed; its sidecar
observes each check's failing fraction (`observe_fractions=True`), which the asset's Plots tab
graphs over time. `materialize_days` runs it once per day of `BAD_EMAILS` against an instance,
as a scheduled run would: a quiet week, then the day the upstream form broke.
"""

import dagster as dg
import dataframely as dy
import polars as pl

import dagster_dataframely as dd

ROWS = 2_000
#: Rows without an `@`, per day.
BAD_EMAILS = [24, 31, 19, 28, 22, 26, 410, 35]


@dd.tolerate("email", warn_above="2%", error_above="10%")
class Payments(dy.Schema):
    payment_id = dy.Int64(primary_key=True)
    email = dy.String(regex="@")
    amount = dy.Int64(min=0)


class Day(dg.Config):
    day: int = 0


@dg.asset
def payments(config: Day) -> pl.DataFrame:
    """The day's payments, as the payment provider exports them."""
    bad = BAD_EMAILS[config.day]
    return pl.DataFrame(
        {
            "payment_id": range(ROWS),
            "email": [f"p{i}" if i < bad else f"p{i}@shop.eu" for i in range(ROWS)],
            "amount": [(i * 37) % 500 for i in range(ROWS)],
        }
    )


payments_checks = dd.schema_checks(Payments, asset=payments, observe_fractions=True)


def resources(base_dir: str) -> dict[str, dg.ConfigurableIOManager]:
    return {"io_manager": dd.ParquetIOManager(base_dir=base_dir)}


defs = dg.Definitions(
    assets=[payments], asset_checks=[payments_checks], resources=resources(".demo/data/plotted")
)


def materialize_days(instance: dg.DagsterInstance, base_dir: str) -> None:
    """One run of `payments` and its checks per day of `BAD_EMAILS`, in `instance`."""
    for day in range(len(BAD_EMAILS)):
        dg.materialize(
            [payments, payments_checks],
            instance=instance,
            resources=resources(base_dir),
            run_config={"ops": {"payments": {"config": {"day": day}}}},
            raise_on_error=False,
        )
