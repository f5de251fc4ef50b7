"""dagster-dataframely: a table's Dataframely schema as Dagster's single source of data quality.

`import dagster_dataframely as dd`; the hand-wiring parts are in `dd.wiring`, the Pandera
compatibility layer in `dd.pandera` (extra `dagster-dataframely[pandera]`), schemas written
from tables and dbt projects in `dd.infer` (`dd.infer_schema`); `dd.check_report` writes the
report of the checks' history in a Dagster instance.
"""

from importlib import import_module
from typing import Any

from . import data, errors, sources, testing, wiring
from ._engine.severity import warn
from ._engine.table_checks import ExpectFresh, ExpectRows, expect_fresh, expect_rows
from ._engine.tolerance import Tolerance, tolerate
from ._engine.trends import Trends
from ._gated.asset import asset
from ._report import check_report
from ._sidecar.checks_job import checks_job
from ._sidecar.collection_checks import collection_checks
from ._sidecar.component import SchemaChecksComponent
from ._sidecar.failures_asset import failures_asset
from ._sidecar.schema_checks import schema_checks
from ._sidecar.with_schemas import with_schemas
from .io import ParquetIOManager

__all__ = [
    "ExpectFresh",
    "ExpectRows",
    "ParquetIOManager",
    "SchemaChecksComponent",
    "Tolerance",
    "Trends",
    "asset",
    "check_report",
    "checks_job",
    "collection_checks",
    "data",
    "errors",
    "expect_fresh",
    "expect_rows",
    "failures_asset",
    "infer",
    "infer_schema",
    "pandera",
    "schema_checks",
    "sources",
    "testing",
    "tolerate",
    "warn",
    "wiring",
    "with_schemas",
]


def __getattr__(name: str) -> Any:
    # `dd.pandera` imports Pandera, an optional dependency, and `dd.infer` sqlglot and the
    # readers it infers with: load them on first use only.
    if name in ("pandera", "infer"):
        return import_module(f"{__name__}.{name}")
    if name == "infer_schema":
        return import_module(f"{__name__}.infer").infer_schema
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
