"""What each database can express exactly, one class per dialect, one module each.

A dialect says how a rule that SQL has no single portable form for is written there (NaN,
byte length, regex search) and which rules it cannot express with Dataframely's verdicts, so
they fall back to polars. sqlglot renders everything else. DuckDB's class is the reference
the others refine; adding a database means adding one class here.
"""

from __future__ import annotations

from .bigquery import BigQueryDialect
from .databricks import DatabricksDialect
from .duckdb import Dialect
from .postgres import PostgresDialect
from .redshift import RedshiftDialect
from .snowflake import SnowflakeDialect
from .spark import SparkDialect
from .trino import AthenaDialect, TrinoDialect

__all__ = [
    "DIALECTS",
    "AthenaDialect",
    "BigQueryDialect",
    "DatabricksDialect",
    "Dialect",
    "PostgresDialect",
    "RedshiftDialect",
    "SnowflakeDialect",
    "SparkDialect",
    "TrinoDialect",
    "described",
]

DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect
    for dialect in (
        Dialect(),
        PostgresDialect(),
        SnowflakeDialect(),
        BigQueryDialect(),
        SparkDialect(),
        DatabricksDialect(),
        RedshiftDialect(),
        TrinoDialect(),
        AthenaDialect(),
    )
}


def described(name: str) -> Dialect:
    """The Dialect that reads dialect `name`'s descriptions and writes its wall-clock type:
    its own, or for a dialect this package pushes nothing down to, the reference's (sqlglot's
    and the driver's own readings)."""
    return DIALECTS.get(name, DIALECTS["duckdb"])
