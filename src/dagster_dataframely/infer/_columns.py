"""What inference learns of a table: its columns as a source reads them, the constraints the
database declares, and (on request) a profile of today's values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl


@dataclass(frozen=True)
class Profile:
    """One column's values, counted in one pass over the table.

    Attributes:
        rows: The table's rows.
        nulls: The column's nulls.
        distinct: Its distinct non-null values; None where they were not counted (a float, a
            nested type, or text under a collation that compares otherwise than polars).
        minimum: Its smallest value (numbers only), None where not read.
        maximum: Its largest value (numbers only), None where not read.
        values: Its distinct values, sorted, where there are few of them (text only).
        nans: Its NaN values (floats only), None where not counted.
        infinities: Its infinite values (floats only), None where not counted.
        shortest: Its shortest value's length in UTF-8 bytes, as Dataframely's `min_length`
            counts (strings only), None where not read.
        longest: Its longest value's length in bytes, None where not read.
    """

    rows: int
    nulls: int
    distinct: int | None = None
    minimum: Any = None
    maximum: Any = None
    values: tuple[Any, ...] | None = None
    nans: int | None = None
    infinities: int | None = None
    shortest: int | None = None
    longest: int | None = None


@dataclass(frozen=True)
class InferredColumn:
    """A column of the table.

    Attributes:
        name: Its name in the table.
        dtype: The polars dtype the package's sources read it as; None where they cannot.
        declared: Its type as the database (or the file) declares it.
        nullable: False where the database declares it `NOT NULL`.
        primary_key: Part of the table's declared primary key.
        unreadable: Why it has no Dataframely column type; None where it has one (a
            column without `dtype` then is `dy.Any`: its type is not known).
        unique: Its values are unique (a dbt `unique` test).
        checks: Source of its `check=` entries by rule key (`lambda col: ...`).
    """

    name: str
    dtype: pl.DataType | None
    declared: str
    nullable: bool = True
    primary_key: bool = False
    unreadable: str | None = None
    unique: bool = False
    checks: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WrittenRule:
    """A `@dy.rule()` of the written schema: its name, docstring and returned expression."""

    name: str
    doc: str
    returned: str


@dataclass(frozen=True)
class Tolerated:
    """A `@dd.tolerate(rule, warn_above=..., error_above=...)` of the written schema."""

    rule: str
    warn_above: int | None
    error_above: int | None


@dataclass(frozen=True)
class InferredTable:
    """A table's columns, where they were read, their profiles (empty: not profiled), and
    what a dbt project declares of it beyond its columns: rules, severities, tolerances, and
    notes on what could not be translated."""

    name: str
    where: str
    columns: Sequence[InferredColumn]
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    notes: Sequence[str] = ()
    rules: Sequence[WrittenRule] = ()
    warn: Sequence[str] = ()
    tolerances: Sequence[Tolerated] = ()
    #: The Dagster check name that takes over each dbt test, by the test's name.
    replaces: Mapping[str, str] = field(default_factory=dict)
