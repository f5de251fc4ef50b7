"""What a database says of the columns it is asked to check: the facts a pushdown proof reads.

A column's SQL compares as polars compares it only if its values compare by their bytes. A
collation (DuckDB's `NOCASE`, a `default_collation`, a PostgreSQL ICU or libc collation, a
Snowflake or BigQuery collation specification) or a type that compares otherwise
(PostgreSQL's blank-padded `character(n)`, `citext`) changes equality, order and grouping:
`is_in`, keys, filter joins and string comparisons. The catalog (`catalog`) reads these facts
once per table; here they decide, per column, whether the column is read under the dialect's
binary collation (`collated`) or its rules fall back to polars (`declined`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import polars as pl
from sqlglot import exp

from .exactness import NotExact

#: The reason of a rule over a text column whose facts the catalog did not give.
UNREAD = "collation unknown"


@dataclass(frozen=True)
class ColumnFacts:
    """One column as the database declares it.

    Attributes:
        name: The column's name.
        data_type: Its type, as the database writes it (`VARCHAR`, `character(3)`).
        collation: The name of its collation where that is not byte order; None where the
            column compares by bytes or has no collation (not text).
        collatable: Whether an explicit `COLLATE` applies to it (a text column).
        unlike: Why its type compares otherwise than polars whatever the collation (`padded
            character(n)`); None where it does not.
    """

    name: str
    data_type: str
    collation: str | None = None
    collatable: bool = False
    unlike: str | None = None


@dataclass(frozen=True)
class TableFacts:
    """The facts of a table's columns by name; `read` is False where the catalog gave none,
    so that every text column's collation is unknown."""

    columns: Mapping[str, ColumnFacts] = field(default_factory=dict)
    read: bool = True
    #: The table's rows as the catalog counts them, the whole table's even where a partition
    #: is checked (None: a catalog without that count, a view).
    rows: int | None = None

    def declined(
        self,
        names: Iterable[str] | None,
        dtypes: Mapping[str, pl.DataType],
        binary_collation: str | None,
    ) -> str | None:
        """Why a rule reading the columns `names` (None: unknown, so any) cannot be counted in
        SQL exactly, or None where it can: a type that compares unlike polars, or a collation
        the dialect cannot override (`binary_collation` None)."""
        wanted = set(dtypes) if names is None else set(names)
        for name in sorted(wanted):
            facts = self.columns.get(name)
            if facts is None:
                if not self.read and dtypes.get(name) == pl.String():
                    return UNREAD
                continue
            if facts.unlike is not None:
                return facts.unlike
            if facts.collation is not None and binary_collation is None:
                return f"collation {facts.collation}"
        return None

    def prove(
        self,
        names: Iterable[str],
        dtypes: Mapping[str, pl.DataType],
        binary_collation: str | None,
    ) -> None:
        """Raise `NotExact` with `declined`'s reason where SQL over the columns `names`
        would not compare as polars does."""
        reason = self.declined(names, dtypes, binary_collation)
        if reason is not None:
            raise NotExact(reason)

    def collated(self, relation: exp.Select, binary_collation: str | None) -> exp.Select:
        """`relation` with each of its columns that has a collation read under
        `binary_collation`, so every query over it (rules, keys, samples, filter joins)
        compares bytes; unchanged where no column needs it or the dialect has none."""
        needed = [
            facts
            for facts in self.columns.values()
            if facts.collation is not None and facts.collatable and facts.unlike is None
        ]
        if binary_collation is None or not needed:
            return relation
        binary = {facts.name for facts in needed}
        collation = exp.to_identifier(binary_collation, quoted=True)
        columns = [
            exp.alias_(
                exp.Collate(this=exp.column(name, quoted=True), expression=collation.copy()),
                name,
                quoted=True,
            )
            if name in binary
            else exp.column(name, quoted=True)
            for name in self.columns
        ]
        return exp.select(*columns).from_(relation.subquery("__dy_collated"))


def compared(condition: exp.Expr) -> set[str]:
    """The columns whose values `condition` compares: all it reads but those it only tests
    for null (`IS NULL` means the same under every collation and padding)."""
    return {
        column.name
        for column in condition.find_all(exp.Column)
        if not isinstance(column.parent, exp.Is)
    }
