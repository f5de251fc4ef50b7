"""The package adds no noise to a user's output: loading definitions passes on no warning
it causes (the checks of a partitioned asset use a Dagster preview parameter the user never
wrote), and a run leaves no resource for the garbage collector to close with a traceback.

pyproject's pytest `filterwarnings` ignores `PreviewWarning`; each test records every
warning itself, so that setting cannot hide one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from shop import MEMBERS, Shop

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, storefront_orders

DAYS = dg.DailyPartitionsDefinition(start_date="2024-05-01")


def _asset(partitions_def: dg.PartitionsDefinition | None) -> Any:
    @dd.asset(OrdersSchema, partitions_def=partitions_def, quarantine=True)
    def orders() -> pl.DataFrame:
        return storefront_orders()

    return orders


def _with_schemas(partitions_def: dg.PartitionsDefinition | None) -> Any:
    @dg.asset(name="orders", partitions_def=partitions_def)
    def orders() -> pl.DataFrame:
        return storefront_orders()

    return dd.with_schemas(dg.Definitions(assets=[orders]), {"orders": OrdersSchema})


DEFINITIONS: dict[str, Callable[[dg.PartitionsDefinition | None], Any]] = {
    "dd.asset": _asset,
    "dd.schema_checks": lambda p: dd.schema_checks(OrdersSchema, asset="o", partitions_def=p),
    "dd.collection_checks": lambda p: dd.collection_checks(Shop, members=MEMBERS, partitions_def=p),
    "dd.with_schemas": _with_schemas,
}


@pytest.mark.parametrize("partitions_def", [None, DAYS], ids=["unpartitioned", "daily"])
@pytest.mark.parametrize("entry_point", list(DEFINITIONS))
def test_loading_definitions_emits_no_preview_warning(
    entry_point: str, partitions_def: dg.PartitionsDefinition | None
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = DEFINITIONS[entry_point](partitions_def)
        if isinstance(built, dg.Definitions):
            built.get_repository_def()

    assert built is not None
    assert [str(w.message) for w in caught if issubclass(w.category, dg.PreviewWarning)] == []


#: A failing sidecar check read back through dagster-duckdb's IO manager, as a user's script.
SIDECAR_RUN = """\
import gc

import dagster as dg
import polars as pl
from dagster_duckdb_polars import DuckDBPolarsIOManager

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, storefront_orders


@dg.asset
def orders() -> pl.DataFrame:
    return storefront_orders()


io = {"io_manager": DuckDBPolarsIOManager(database=%r)}
# DuckDB hands the Enum back as a String: dy_schema__columns fails, and the step with it.
checks = dd.schema_checks(OrdersSchema, asset="orders")
result = dg.materialize([orders, checks], resources=io, raise_on_error=False)
assert not result.success
gc.collect()  # as a long-lived process (a code server, a test session) does
"""


def test_a_sidecar_run_leaves_nothing_to_close_behind_it(tmp_path: Path) -> None:
    script = textwrap.dedent(SIDECAR_RUN % str(tmp_path / "warehouse.duckdb"))
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )

    assert run.returncode == 0, run.stderr[-2000:]
    # The contexts that load the table build resources (an ephemeral Dagster instance); left
    # open, they are closed at exit after their sqlite database, printing a traceback each.
    assert "Cannot operate on a closed database" not in run.stderr
    assert "Exception during reset" not in run.stderr
