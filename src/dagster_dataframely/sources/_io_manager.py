"""`IOManagerSource`: the asset's own IO manager, the default source (see `_loading`)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass

import dagster as dg
import polars as pl

from ._base import Source
from ._loading import stored_table

DEFAULT_IO_MANAGER_KEY = "io_manager"


@dataclass(frozen=True)
class IOManagerSource(Source):
    """The stored table, loaded through the asset's IO manager (lazily where it can).

    `io_manager_key` is the asset's IO manager key: the check requires it, so the run's
    resource (with its run config) loads the table. `dd.with_schemas` fills it in from the
    asset; left out, the check requires `"io_manager"` and an asset stored under another key
    is loaded by an IO manager built from its definition.
    """

    io_manager_key: str | None = None

    @property
    def required_resource_keys(self) -> frozenset[str]:
        return frozenset({self.io_manager_key or DEFAULT_IO_MANAGER_KEY})

    def describe(self) -> str:
        return f"IO manager '{self.io_manager_key or DEFAULT_IO_MANAGER_KEY}'"

    def open(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> AbstractContextManager[pl.LazyFrame]:
        return stored_table(context, asset_key)
