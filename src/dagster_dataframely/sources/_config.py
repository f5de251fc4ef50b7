"""A source as YAML describes it (the Component's `source:`), turned into a `Source`.

```yaml
source: {kind: duckdb_table, resource_key: duckdb, partition_expr: order_date, pushdown: false}
source: {kind: sql, resource_key: warehouse, dialect: postgres, partition_expr: order_date}
source: {kind: spark, resource_key: spark, table: sales.orders, partition_expr: order_date}
source: {kind: spark, path: /lake/orders, format: delta}
source: {kind: parquet, path: "s3://bucket/orders/*.parquet"}
source: {kind: delta, path: /lake/orders}
source: {kind: function, function: my_project.readers:orders, resource_keys: [lake]}
```
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Literal

from ..errors import InvalidSourceError
from ._base import Source
from ._callable import CallableSource
from ._duckdb import DuckDBTableSource
from ._files import DeltaSource, ParquetSource
from ._io_manager import IOManagerSource
from ._spark import SparkTableSource
from ._sql import SQLTableSource

SourceKind = Literal["io_manager", "duckdb_table", "sql", "spark", "parquet", "delta", "function"]

#: The fields each kind takes, beyond `kind`.
_FIELDS: Mapping[str, frozenset[str]] = {
    "io_manager": frozenset({"io_manager_key"}),
    "duckdb_table": frozenset({"resource_key", "table", "partition_expr", "pushdown"}),
    "sql": frozenset({"resource_key", "dialect", "table", "partition_expr"}),
    "spark": frozenset({"resource_key", "table", "path", "format", "partition_expr"}),
    "parquet": frozenset({"path", "partition_expr", "storage_options"}),
    "delta": frozenset({"path", "partition_expr", "storage_options"}),
    "function": frozenset({"function", "resource_keys"}),
}


def source_from_config(kind: str, fields: Mapping[str, Any]) -> Source:
    """The source `kind` with `fields` (the keys set in YAML)."""
    given = {name: value for name, value in fields.items() if value not in (None, (), [], {})}
    stray = sorted(set(given) - _FIELDS[kind])
    if stray:
        raise InvalidSourceError(
            f"source kind {kind!r} takes {', '.join(sorted(_FIELDS[kind]))}; it does not take "
            f"{', '.join(stray)}."
        )
    if kind in ("parquet", "delta") and "path" not in given:
        raise InvalidSourceError(f"source kind {kind!r} needs a path (a file, glob or URL).")
    if kind == "function":
        if "function" not in given:
            raise InvalidSourceError("source kind 'function' needs function: 'module:name'.")
        return CallableSource(
            _import(given["function"]), resource_keys=tuple(given.get("resource_keys", ()))
        )
    if kind == "io_manager":
        return IOManagerSource(**given)
    if kind == "duckdb_table":
        return DuckDBTableSource(**given)
    if kind == "sql":
        missing = [name for name in ("resource_key", "dialect") if name not in given]
        if missing:
            raise InvalidSourceError(
                f"source kind 'sql' needs {' and '.join(missing)}, e.g. "
                "{kind: sql, resource_key: warehouse, dialect: postgres}."
            )
        return SQLTableSource(**given)
    if kind == "spark":
        return SparkTableSource(**given)
    return (ParquetSource if kind == "parquet" else DeltaSource)(**given)


def _import(reference: str) -> Any:
    module_name, colon, attribute = reference.partition(":")
    if not colon:
        raise InvalidSourceError(
            f"function: {reference!r} is not a reference: write 'package.module:function'."
        )
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        raise InvalidSourceError(f"function: {reference!r} cannot be imported: {error}.") from None
    if not callable(target):
        raise InvalidSourceError(f"function: {reference!r} is not callable.")
    return target
