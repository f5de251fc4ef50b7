"""Databricks: Spark SQL with Unity Catalog's grants and a SQL warehouse's parameters."""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

from ..sessions import Value
from .spark import SparkDialect


class DatabricksDialect(SparkDialect):
    """Spark SQL as Databricks runs it (the same Java regexes, NaN order, collations and
    `DESCRIBE`), reached through a DB-API connection (the Databricks SQL connector). What
    differs is only what a SQL warehouse lets a session set, and who a grant names."""

    name = "databricks"
    title = "Databricks"
    #: A SQL warehouse sets only its configuration parameters (`spark.sql.*` keys are
    #: refused there): `ANSI_MODE` makes an overflow or an invalid cast raise, `TIMEZONE`
    #: is the zone a `TIMESTAMP` reaches polars in and is cast to a date in. Its literals
    #: read a backslash as an escape and it compares column names case-insensitively with
    #: no parameter to change either; names cannot differ by case only there.
    session_settings: ClassVar[dict[str, Value]] = {"ANSI_MODE": True, "TIMEZONE": "UTC"}
    #: A SQL warehouse's parameters are set by `SET` only: they are no `spark.conf` keys.
    session_conf = False
    #: Unity Catalog grants `CREATE TABLE` on a schema to a principal (a user or group).
    create_privilege = "CREATE TABLE"

    def current_role(self) -> exp.Expr | None:
        """The principal the connection acts as (`current_user()`)."""
        return exp.CurrentUser()

    def contains(self, value: exp.Expr, pattern: str) -> exp.Expr:
        """`REGEXP_LIKE(value, pattern)`, the same Java search as Spark's `RLIKE`, written
        as one function whatever sqlglot release renders it (older ones write `RLIKE`)."""
        found = super().contains(value, pattern)
        return exp.Anonymous(this="REGEXP_LIKE", expressions=[found.this, found.args["expression"]])
