"""A quarantined `dd.asset` is selected by the table's own name, in every way users select
assets: Python selections (a list, a string, `orders*`), a job, a schedule's job, and the
`dagster` CLI with a DAGSTER_HOME (one partition too). Every such run writes the quarantine and
records its materialization; selecting the quarantine without the table runs the pair, so the
quarantine's status in the catalog stays true; selecting the checks alone is refused with the fix.
Real runs, real storage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from conftest import Storage
from dagster_dataframely_demo._webserver import webserver
from support import evaluations, materialization, materialized, step_error

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders
from dagster_dataframely.wiring import rules

VENV = Path(sys.executable).parent.parent
CHECKS = {"dy_schema__columns", *(rule.check_name for rule in rules(OrdersSchema))}
QUARANTINED_ROWS = 7  # the rows of defective_orders() failing an "error" rule


@dd.asset(OrdersSchema, quarantine=True)
def orders() -> pl.DataFrame:
    return defective_orders()


@dg.asset(deps=[orders])
def revenue() -> None:
    return None


@dg.asset
def quarantine_report(orders_quarantine: pl.DataFrame) -> pl.DataFrame:
    """Downstream of the quarantine: reads what the run held back."""
    return orders_quarantine.select(pl.len().alias("rows"))


ASSETS = [orders, revenue, quarantine_report]


def assert_table_and_quarantine_written(result: dg.ExecuteInProcessResult, storage: Storage):
    assert result.success
    assert {"orders", "orders_quarantine"} <= materialized(result)
    assert set(evaluations(result)) == CHECKS
    quarantine = materialization(result, "orders_quarantine")
    assert quarantine["dagster/row_count"] == QUARANTINED_ROWS
    assert quarantine["dy_quarantine_of"] == "orders"
    assert materialization(result, "orders")["dy_quarantine"] == quarantine["dy_quarantine"]
    held_back = storage.read("orders_quarantine")
    assert held_back is not None and held_back.height == QUARANTINED_ROWS
    written = storage.read("orders")
    assert written is not None and written.height == 6


@pytest.mark.parametrize(
    "selection",
    [["orders"], "orders", [dg.AssetKey("orders")], dg.AssetSelection.assets("orders")],
    ids=["list", "string", "key", "AssetSelection"],
)
def test_selecting_the_table_alone_writes_its_quarantine(storage: Storage, selection: Any):
    result = storage.materialize(ASSETS, selection=selection)

    assert_table_and_quarantine_written(result, storage)
    assert materialized(result) == {"orders", "orders_quarantine"}


def test_selecting_the_table_and_its_downstream_writes_its_quarantine(storage: Storage):
    result = storage.materialize(ASSETS, selection="orders*")

    assert_table_and_quarantine_written(result, storage)
    assert materialized(result) == {"orders", "orders_quarantine", "revenue"}


@pytest.mark.parametrize(
    "selection",
    [None, ["orders", "orders_quarantine"], ["orders", "orders_quarantine", "quarantine_report"]],
    ids=["everything", "both", "both and the quarantine's downstream"],
)
def test_selecting_both_still_runs_them_together(storage: Storage, selection: Any):
    result = storage.materialize(ASSETS, selection=selection)

    assert_table_and_quarantine_written(result, storage)
    if selection is None or "quarantine_report" in selection:
        # the quarantine is an output of the step: its downstream loads what was written
        assert result.output_for_node("quarantine_report")["rows"].to_list() == [QUARANTINED_ROWS]


def test_selecting_the_quarantine_alone_runs_the_pair(storage: Storage):
    result = storage.materialize(ASSETS, selection=["orders_quarantine"])

    assert result.success
    assert materialized(result) == {"orders", "orders_quarantine"}
    table = materialization(result, "orders")
    assert table["dagster/row_count"] == 6
    assert table["dy_quarantine"] == materialization(result, "orders_quarantine")["dy_quarantine"]
    assert set(evaluations(result)) == CHECKS  # the table's checks judged what was written
    assert storage.read("orders").height == 6
    assert storage.read("orders_quarantine").height == QUARANTINED_ROWS


def test_selecting_the_checks_alone_is_refused_with_the_fix(storage: Storage):
    defs = dg.Definitions(
        assets=ASSETS,
        jobs=[dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets(orders))],
        resources={"io_manager": storage.io_manager()},
    )

    result = defs.resolve_job_def("checks").execute_in_process(raise_on_error=False)

    assert not result.success
    name, message = step_error(result)
    assert name == "QuarantineSelectionError"
    assert "checks of orders without the asset orders" in message
    assert 'selection=["orders"]' in message
    assert storage.read("orders") is None and storage.read("orders_quarantine") is None


def test_a_job_and_a_schedule_over_the_table_write_its_quarantine(storage: Storage):
    job = dg.define_asset_job("orders_job", selection="orders")
    defs = dg.Definitions(
        assets=ASSETS,
        jobs=[job],
        schedules=[dg.ScheduleDefinition(name="nightly", job=job, cron_schedule="0 3 * * *")],
        resources={"io_manager": storage.io_manager()},
    )

    scheduled = defs.resolve_schedule_def("nightly").job_name
    for name in ("orders_job", scheduled):
        result = defs.resolve_job_def(name).execute_in_process(raise_on_error=False)
        assert_table_and_quarantine_written(result, storage)


def test_the_old_selection_of_the_pair_still_works(storage: Storage):
    pair = dg.AssetSelection.assets("orders").required_multi_asset_neighbors()
    defs = dg.Definitions(
        assets=ASSETS,
        jobs=[dg.define_asset_job("pair", selection=pair)],
        resources={"io_manager": storage.io_manager()},
    )

    result = defs.resolve_job_def("pair").execute_in_process(raise_on_error=False)

    assert_table_and_quarantine_written(result, storage)


# --------------------------------- the dagster CLI --------------------------------- #

CODE = """\
import dagster as dg
import polars as pl

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders

DAYS = dg.DailyPartitionsDefinition(start_date="2024-05-01", end_date="2024-05-04")


@dd.asset(OrdersSchema, quarantine=True)
def orders() -> pl.DataFrame:
    return defective_orders()


@dd.asset(OrdersSchema, quarantine=True, partitions_def=DAYS)
def daily_orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
    return defective_orders().with_columns(note=pl.lit(context.partition_key))


defs = dg.Definitions(
    assets=[orders, daily_orders],
    resources={"io_manager": dd.ParquetIOManager(base_dir=dg.EnvVar("SHOP_WAREHOUSE"))},
)
"""


def _materialize(tmp_path: Path, *args: str) -> tuple[dg.DagsterRun, set[str], Path]:
    """`dagster asset materialize -f shop.py <args>` with a DAGSTER_HOME; the run it wrote,
    the (asset, partition) pairs it materialized and the warehouse."""
    (tmp_path / "shop.py").write_text(textwrap.dedent(CODE))
    home, warehouse = tmp_path / "dagster_home", tmp_path / "warehouse"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "DAGSTER_HOME": str(home), "SHOP_WAREHOUSE": str(warehouse)}
    completed = subprocess.run(
        [str(VENV / "bin" / "dagster"), "asset", "materialize", "-f", "shop.py", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    with dg.DagsterInstance.from_config(str(home)) as instance:
        (run,) = instance.get_runs(limit=1)
        events = [
            entry.dagster_event
            for entry in instance.all_logs(run.run_id)
            if entry.dagster_event is not None
            and entry.dagster_event.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION
        ]
    assert completed.returncode == 0, completed.stderr[-3000:]
    written = {
        f"{e.asset_key.to_user_string()}:{e.partition}"  # type: ignore[union-attr]
        for e in events
    }
    return run, written, warehouse


def test_the_cli_materializes_the_table_by_its_name(tmp_path: Path):
    run, written, warehouse = _materialize(tmp_path, "--select", "orders")

    assert run.status == dg.DagsterRunStatus.SUCCESS
    assert written == {"orders:None", "orders_quarantine:None"}
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == QUARANTINED_ROWS
    assert pl.read_parquet(warehouse / "orders.parquet").height == 6


def test_the_cli_materializes_one_partition_of_the_table(tmp_path: Path):
    run, written, warehouse = _materialize(
        tmp_path, "--select", "daily_orders", "--partition", "2024-05-02"
    )

    assert run.status == dg.DagsterRunStatus.SUCCESS
    assert written == {"daily_orders:2024-05-02", "daily_orders_quarantine:2024-05-02"}
    held_back = pl.read_parquet(warehouse / "daily_orders_quarantine" / "2024-05-02.parquet")
    assert held_back.height == QUARANTINED_ROWS and set(held_back["note"]) == {"2024-05-02"}


def _latest_info(url: str, keys: list[str]) -> dict[str, tuple[str, str]]:
    """asset -> (status of its latest run, run of its latest materialization), as the
    webserver's GraphQL gives the catalog."""
    paths = ", ".join(f'{{path: ["{key}"]}}' for key in keys)
    query = (
        f"{{ assetsLatestInfo(assetKeys: [{paths}]) {{ assetKey {{ path }} "
        "latestRun { status } latestMaterialization { runId } } }"
    )
    request = urllib.request.Request(
        f"{url}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        infos = json.load(response)["data"]["assetsLatestInfo"]
    return {
        "/".join(info["assetKey"]["path"]): (
            info["latestRun"]["status"],
            info["latestMaterialization"]["runId"],
        )
        for info in infos
    }


def test_the_cli_run_of_the_quarantine_alone_keeps_its_status_true(tmp_path: Path):
    """After a run of the table, a run selecting the quarantine (its Materialize button)
    succeeds and writes the pair: the catalog, read from the webserver, shows both assets
    materialized by that run, and its status SUCCESS."""
    _materialize(tmp_path, "--select", "orders")
    run, written, warehouse = _materialize(tmp_path, "--select", "orders_quarantine")

    assert run.status == dg.DagsterRunStatus.SUCCESS
    assert written == {"orders:None", "orders_quarantine:None"}
    with webserver(tmp_path, target=["-f", str(tmp_path / "shop.py")]) as url:
        latest = _latest_info(url, ["orders", "orders_quarantine"])
    assert latest == {key: ("SUCCESS", run.run_id) for key in ("orders", "orders_quarantine")}
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == QUARANTINED_ROWS
    assert pl.read_parquet(warehouse / "orders.parquet").height == 6


def test_the_cli_run_of_one_partition_of_the_quarantine_writes_that_partition_of_both(
    tmp_path: Path,
):
    run, written, warehouse = _materialize(
        tmp_path, "--select", "daily_orders_quarantine", "--partition", "2024-05-02"
    )

    assert run.status == dg.DagsterRunStatus.SUCCESS
    assert written == {"daily_orders:2024-05-02", "daily_orders_quarantine:2024-05-02"}
    table = pl.read_parquet(warehouse / "daily_orders" / "2024-05-02.parquet")
    assert table.height == 6 and set(table["note"]) == {"2024-05-02"}
