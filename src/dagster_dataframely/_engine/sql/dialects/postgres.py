"""PostgreSQL: collations, float overflow errors and its session's text formats."""

from __future__ import annotations

from typing import ClassVar

import polars as pl
from sqlglot import exp

from .. import catalog
from ..columns import ColumnFacts
from ..regex import POSTGRES_ARE
from ..sessions import Value
from .duckdb import Dialect


class PostgresDialect(Dialect):
    name = "postgres"
    title = "PostgreSQL"
    keys_streamed_from = None  # a server: its keys are grouped where they are
    #: Text order follows the database's collation, not bytes.
    binary_string_order = False
    #: `value out of range: overflow` (and `underflow`) for float8.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {"us": "TIMESTAMP"}
    float_tests = False  # no `isnan`/`isinf`: NaN equality and the `±inf` list
    regex_engine = POSTGRES_ARE  # `~`
    #: `~` refuses a column of a nondeterministic collation; under "C" it matches code
    #: points, which is all the patterns it is given need.
    regex_needs_binary_collation = True
    #: Deterministic and in byte order (code point order in UTF-8) in every PostgreSQL.
    binary_collation = "C"
    union_by_name = False  # no `BY NAME`: each sample is a query of its own
    #: Types whose comparisons no collation makes polars': blank-padded, case-folded.
    unlike_types: ClassVar[dict[str, str]] = {
        "bpchar": "padded character(n)",
        "citext": "citext compares case-insensitively",
    }

    #: Collations that compare by bytes.
    binary_collations: ClassVar[frozenset[str]] = frozenset({"C", "POSIX"})

    def catalog_query(self, table: exp.Table) -> exp.Select:
        return catalog.postgres_catalog(table)

    def column_facts(self, rows: pl.DataFrame) -> dict[str, ColumnFacts]:
        return catalog.postgres_facts(rows, self.binary_collations, self.unlike_types)

    def enum_labels(self, table: exp.Table) -> exp.Select | None:
        """An enum's values reach polars as text (psycopg reads an unknown type so)."""
        return catalog.postgres_enum_labels(table)

    def current_role(self) -> exp.Expr | None:
        return exp.CurrentUser()

    #: `DateStyle` sets how dates and timestamps are read from and written as text (psycopg
    #: parses only ISO), `TimeZone` the zone of a `timestamptz` cast to a date or text, and
    #: `standard_conforming_strings = off` reads a backslash in a string literal (a custom
    #: rule's `'C:\tmp'`) as an escape. Pinned on the resource's connection for the check
    #: and restored after it (see `sources/_sql.py`).
    session_settings: ClassVar[dict[str, Value]] = {
        "DateStyle": "ISO, MDY",
        "TimeZone": "UTC",
        "standard_conforming_strings": "on",
    }
    #: Every cursor of a connection shares its session.
    cursors_are_sessions = False
    #: `SET SESSION` in a transaction is undone by its rollback.
    rollback_unsets = True

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None
