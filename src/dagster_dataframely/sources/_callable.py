"""`CallableSource`: any function `(context) -> frame`, for every table no other source reads."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from .._engine.evaluate import as_lazy
from ._base import Source


@dataclass(frozen=True)
class CallableSource(Source):
    """`function(context)` returns the table: a polars DataFrame or LazyFrame, a pandas
    DataFrame or a pyarrow Table. It reads the run's partition itself (`context.partition_key`)
    and the resources it names in `resource_keys` (`context.resources.<key>`)."""

    function: Callable[[dg.AssetCheckExecutionContext], Any]
    resource_keys: Sequence[str] = ()

    @property
    def required_resource_keys(self) -> frozenset[str]:
        return frozenset(self.resource_keys)

    def describe(self) -> str:
        return f"function {getattr(self.function, '__qualname__', repr(self.function))}"

    @contextmanager
    def open(
        self, context: dg.AssetCheckExecutionContext, asset_key: dg.AssetKey
    ) -> Iterator[pl.LazyFrame]:
        value = self.function(context)
        context.log.info(f"Read asset {asset_key.to_user_string()} from {self.describe()}.")
        yield as_lazy(value)
