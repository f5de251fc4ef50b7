"""BigQuery: IEEE NaN, dataset-scoped information schema, no binary collation."""

from __future__ import annotations

from typing import ClassVar

import polars as pl
from sqlglot import exp

from .. import catalog
from ..columns import ColumnFacts
from ..regex import RE2
from ..sessions import Value
from .duckdb import Dialect
from .forms import count_case


class BigQueryDialect(Dialect):
    name = "bigquery"
    title = "BigQuery"
    keys_streamed_from = None  # a server: its keys are grouped where they are
    #: Its client reports legacy names: `INTEGER` and `FLOAT` are 64 bits.
    reported_types: ClassVar[dict[str, str]] = {"INTEGER": "INT64", "FLOAT": "FLOAT64"}
    #: Its client describes a `NUMERIC` without precision and scale: read as a float.
    described_precision = False
    #: NaN compares false with every value, itself included (IEEE 754).
    nan_is_largest = False
    float_to_decimal = False
    #: Its SQL (ZetaSQL) reports a floating point overflow as an error.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {}
    regex_engine = RE2  # `REGEXP_CONTAINS`
    #: No collation compares bytes: a collated (`und:ci`) column's rules fall back.
    binary_collation = None
    materialized_cte = False  # a CTE is computed again for each reference
    union_by_name = False  # each sample is a query of its own
    #: BigQuery writes an uncollated column's collation as the text `NULL`.
    binary_collations: ClassVar[frozenset[str]] = frozenset({"", "null"})

    def info_schema(self, view: str, table: exp.Table, alias: str | None = None) -> exp.Table:
        """The `INFORMATION_SCHEMA` views live in the table's dataset."""
        return exp.Table(
            this=exp.to_identifier(f"INFORMATION_SCHEMA.{view.upper()}", quoted=True),
            db=table.args.get("db"),
            catalog=table.args.get("catalog"),
            alias=exp.TableAlias(this=exp.to_identifier(alias)) if alias else None,
        )

    def catalog_query(self, table: exp.Table) -> exp.Select:
        """The dataset's `INFORMATION_SCHEMA.COLUMNS`: each column's type and collation."""
        return catalog.information_schema(self.info_schema("columns", table), table, schema=False)

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        return catalog.information_schema_facts(rows, self.binary_collations)

    #: Nothing pinned: BigQuery has no session settings that change a check's query.
    session_settings: ClassVar[dict[str, Value]] = {}
    cursors_are_sessions = False

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="BYTE_LENGTH", expressions=[value])

    #: No `isinf`: the `±inf` list, exact under IEEE NaN too (NaN is in no list).
    float_tests = False

    def is_nan(self, value: exp.Expr) -> exp.Expr:
        """`IS_NAN`: NaN equals nothing here, itself included."""
        return exp.Anonymous(this="IS_NAN", expressions=[value])

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        return count_case(condition)  # no FILTER clause

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None
