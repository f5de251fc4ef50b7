"""Sources: where the sidecar reads an asset's table when it is not (only) the IO manager.

`source=` on `dd.schema_checks`, `dd.with_schemas` and the Component takes one of these, or a
plain function `(context) -> frame`. Each source hands the checks a `pl.LazyFrame` over the
run's partition and declares the resource keys it reads through, so the run's resources (and
their run config) reach it. The default is the asset's own IO manager.

This package may import the engine (`_evaluate`, `errors`) and `_loading`, never an entry
point (`_sidecar`, `_definitions`, `_component`).
"""

from __future__ import annotations

from ..errors import InvalidSourceError
from ._base import Source, SourceLike, reading
from ._callable import CallableSource
from ._config import SourceKind, source_from_config
from ._databricks import DatabricksSQLResource
from ._duckdb import DuckDBTableSource
from ._files import DeltaSource, ParquetSource
from ._io_manager import IOManagerSource
from ._spark import SparkTableSource
from ._sql import SQLTableSource

__all__ = [
    "CallableSource",
    "DatabricksSQLResource",
    "DeltaSource",
    "DuckDBTableSource",
    "IOManagerSource",
    "ParquetSource",
    "SQLTableSource",
    "Source",
    "SourceKind",
    "SourceLike",
    "SparkTableSource",
    "as_source",
    "reading",
    "source_from_config",
]


def as_source(source: SourceLike | None, *, io_manager_key: str | None = None) -> Source:
    """`source` as a `Source`: None is the asset's IO manager (under `io_manager_key`), a
    function `(context) -> frame` becomes a `CallableSource`."""
    if source is None:
        return IOManagerSource(io_manager_key=io_manager_key)
    if isinstance(source, Source):
        return source
    if callable(source):
        return CallableSource(source)
    raise InvalidSourceError(
        f"source={source!r} is not a source. Pass one of dd.sources (DuckDBTableSource, "
        "ParquetSource, DeltaSource, IOManagerSource) or a function (context) -> frame."
    )
