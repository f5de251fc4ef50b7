"""Spark SQL: Java regexes, Spark 4's collations and the session settings a check pins."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import polars as pl
from sqlglot import exp

from .. import catalog
from ..columns import ColumnFacts
from ..regex import JAVA
from ..sessions import Current, Value, text
from .duckdb import Dialect


class SparkDialect(Dialect):
    """NaN equals itself and sorts above every number, as in polars (checked on a local
    Spark); strings compare by their UTF-8 bytes unless a column has a collation
    (`UTF8_LCASE`, `UNICODE_CI`, ...), which `COLLATE UTF8_BINARY` overrides."""

    name = "spark"
    title = "Spark"
    keys_streamed_from = None  # a server: its keys are grouped where they are
    #: How Spark rounds a double cast to a `DECIMAL` is not known to be polars' way.
    float_to_decimal = False
    #: `TIMESTAMP_NTZ` (microseconds) is the wall clock; `TIMESTAMP` is an instant.
    timestamp_types: ClassVar[dict[str, str]] = {"us": "TIMESTAMP_NTZ"}
    float_tests = False  # no `isinf`, and `isnan(NULL)` is false: NaN equality and the list
    regex_engine = JAVA  # `RLIKE`
    binary_collation = "UTF8_BINARY"
    materialized_cte = False  # no MATERIALIZED keyword
    union_by_name = False  # no `UNION ALL BY NAME` in its SQL
    #: A sample query is a Spark job of its own (and each branch of a `UNION ALL` a stage).
    shared_samples = True
    #: Failing rows are kept in files (Spark selects them): Spark SQL has no transaction
    #: (`BEGIN`) to replace a partition's rows in, `DELETE` only on a v2 table (Delta), and a
    #: failed `CREATE TABLE ... AS` leaves its warehouse folder, which a later one refuses.
    keeps_failing_rows = False
    #: The collation a text column without one has, which compares bytes.
    binary_collations: ClassVar[frozenset[str]] = frozenset({"UTF8_BINARY"})

    def catalog_query(self, table: exp.Table) -> exp.Expr:
        """`DESCRIBE SELECT * FROM table`: the columns' types (a collation is part of a
        string's type) for every relation a query reads, a temporary view and a
        `parquet.\\`path\\`` included, which have no `information_schema`."""
        return exp.Describe(this=exp.select(exp.Star()).from_(table.copy()))

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        return catalog.spark_facts(rows, self.binary_collations)

    #: `spark.sql.ansi.enabled`: integer overflow and invalid casts raise (with it off they
    #: wrap or give null, which a count would not show); `spark.sql.session.timeZone`: the
    #: zone a `TIMESTAMP` reaches polars in and is cast to a date in;
    #: `spark.sql.timestampType`: a bare `TIMESTAMP` (in a `partition_expr`) is the instant
    #: sqlglot reads it as; `spark.sql.parser.escapedStringLiterals`: a backslash in a
    #: literal (a regex's `\\z`) is an escape, as sqlglot writes it;
    #: `spark.sql.caseSensitive`: a quoted column name means exactly that column;
    #: `spark.sql.session.collation.default`: a literal compares by bytes. Pinned with
    #: `SET` for the check and put back after it (see `sessions`).
    session_settings: ClassVar[dict[str, Value]] = {
        "spark.sql.ansi.enabled": True,
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.timestampType": "TIMESTAMP_LTZ",
        "spark.sql.parser.escapedStringLiterals": False,
        "spark.sql.caseSensitive": True,
        "spark.sql.session.collation.default": "UTF8_BINARY",
    }
    #: Every query of a `SparkSession` shares its settings.
    cursors_are_sessions = False
    #: The settings are a session's runtime configuration, which a `SparkSession` reads and
    #: sets through `spark.conf` without a SQL statement (see `sources._pins`).
    session_conf = True

    def set_session(self, settings: Mapping[str, Value | None]) -> list[exp.Expr]:
        """`SET name = value`, the value unquoted as Spark reads it (a quoted one keeps its
        quotes); None: `RESET name`, back to what the session inherits (sqlglot reads
        `RESET` as a command)."""
        return [
            exp.Command(this="RESET", expression=name)
            if value is None
            else exp.Set(
                expressions=[
                    exp.SetItem(this=exp.EQ(this=exp.var(name), expression=exp.var(text(value))))
                ]
            )
            for name, value in settings.items()
        ]

    def read_session(self, names: list[str]) -> exp.Expr:
        """`SET`: the settings the session was given (by `SET` or its builder), each with its
        value (sqlglot reads it as a command). `SET -v` would list defaults too, but not
        the internal settings (`spark.sql.caseSensitive`)."""
        return exp.Command(this="SET", expression="")

    def current_session(
        self, rows: list[dict[str, Any]], inherited: Mapping[str, str] | None = None
    ) -> dict[str, Current]:
        """The settings the session was given (`rows`, as `SET` lists them), as it has them;
        every other one it inherits, with its value where it was read (`inherited`, from
        `spark.conf`: a setting the session does not know is left out), else unread (so it
        is pinned, then `RESET`). Flags are compared as Spark reads them (`TRUE` is
        `true`)."""
        given = {row["key"]: _normal(str(row["value"])) for row in rows}
        if inherited is None:  # `SET` lists only what was given: the rest is unread
            inherited = dict.fromkeys(self.session_settings, "")
        return {
            name: Current(given[name])
            if name in given
            else Current(_normal(inherited[name]), own=False)
            for name in self.session_settings
            if name in given or name in inherited
        }

    def wall_clock(self) -> exp.DataType:
        return exp.DataType.build("TIMESTAMP_NTZ", dialect=self.name)

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])  # LENGTH counts characters

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


def _normal(value: str) -> str:
    """A setting's value as `sessions.text` writes it: a flag in lower case."""
    return value.lower() if value.lower() in ("true", "false") else value
