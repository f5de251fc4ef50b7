"""`CallableSource`: any function `(context) -> frame`, for every table no other source reads."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from .._engine.display import shorten, type_name
from .._engine.evaluate import as_lazy
from ..errors import DagsterDataframelyError, SourceReadError, UnsupportedFrameError
from ._base import Source


@dataclass(frozen=True)
class CallableSource(Source):
    """`function(context)` returns the table: a polars DataFrame or LazyFrame, a pandas
    DataFrame or a pyarrow Table. It reads the run's partition itself (`context.partition_key`)
    and the resources it names in `resource_keys` (`context.resources.<key>`).

    Whatever the function raises, when called or when its LazyFrame is collected, fails the
    checks with `SourceReadError` naming the asset and the function, the error as its cause.
    """

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
        asset = asset_key.to_user_string()
        with self._failures(asset, "raised"):
            value = self.function(context)
        frame = self._table(value, asset)
        context.log.info(f"Read asset {asset} from {self.describe()}.")
        if not isinstance(value, pl.LazyFrame):
            yield frame
            return
        # A LazyFrame's plan is the function's: a failure to collect it is the function's too
        # (the package's own errors, a column mismatch among them, pass as they are).
        with self._failures(asset, "returned a LazyFrame that failed when collected"):
            yield frame

    @contextmanager
    def _failures(self, asset: str, what: str) -> Iterator[None]:
        try:
            yield
        except DagsterDataframelyError:
            raise
        except Exception as error:
            raise SourceReadError(
                f"Could not read asset {asset} from {self.describe()} (the checks' source=): "
                f"it {what}: {type(error).__name__}: {shorten(str(error)).rstrip('.')}. Fix the "
                "function; the cause below shows where it failed."
            ) from error

    def _table(self, value: Any, asset: str) -> pl.LazyFrame:
        try:
            return as_lazy(value, asset=asset)
        except UnsupportedFrameError:
            returned = "None (no return statement?)" if value is None else f"a {type_name(value)}"
            raise UnsupportedFrameError(
                f"{self.describe()}, the source= of the checks of asset {asset}, returned "
                f"{returned}, which is not a table. Make it return the table: a polars "
                "DataFrame or LazyFrame, a pandas DataFrame or a pyarrow Table (for a dict of "
                "columns, pl.DataFrame(the_dict))."
            ) from None
