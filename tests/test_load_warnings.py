"""Loading definitions passes on no warning the package causes: the checks of a partitioned
asset are partitioned through a Dagster preview parameter the user never wrote.

pyproject's pytest `filterwarnings` ignores `PreviewWarning`; each test records every
warning itself, so that setting cannot hide one."""

from __future__ import annotations

import warnings
from collections.abc import Callable
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
