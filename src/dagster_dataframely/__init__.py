"""dagster-dataframely: a table's Dataframely schema as Dagster's single source of data quality.

`import dagster_dataframely as dd`; the hand-wiring parts are in `dd.wiring`.
"""

from . import data, errors, wiring
from ._asset import asset
from ._component import SchemaChecksComponent
from ._definitions import with_schemas
from ._severity import warn
from ._sidecar import schema_checks
from .io import ParquetIOManager

__all__ = [
    "ParquetIOManager",
    "SchemaChecksComponent",
    "asset",
    "data",
    "errors",
    "schema_checks",
    "warn",
    "wiring",
    "with_schemas",
]
