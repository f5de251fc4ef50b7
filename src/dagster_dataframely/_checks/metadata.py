"""The Columns tab: a schema as Dagster's `dagster/column_schema` definition metadata."""

from __future__ import annotations

from typing import Any

import dagster as dg
import polars as pl

from .._engine.catalogue import Rule, rules
from .._engine.display import dtype_name
from .._engine.schemas import SchemaLike, as_dataframely

COLUMN_SCHEMA_KEY = "dagster/column_schema"

# Shown through `nullable` and `unique` flags of the column, not as extra constraints.
_FLAG_KINDS = ("nullability", "unique")


def table_schema(schema: SchemaLike) -> dg.TableSchema:
    """The schema's columns as a `dg.TableSchema`: readable dtypes (`Datetime(us, UTC)`),
    descriptions, nullability, uniqueness, "primary key" first among the constraints of each
    primary-key column, every other column constraint beside its column, the primary key and
    the schema-level rules at table level, and column tags (`dy.Column(metadata=...)`) as
    strings.

    `unique` comes from each column's own flag, never from the primary key: a composite key
    does not make its columns unique, and the Columns tab must not show a constraint no rule
    checks.
    """
    dy_schema = as_dataframely(schema)
    catalogue = rules(dy_schema)
    key = dy_schema.primary_key()
    columns = [
        dg.TableColumn(
            name=name,
            type=dtype_name(column.dtype),
            description=column.description,
            constraints=dg.TableColumnConstraints(
                nullable=column.nullable,
                unique=column.unique,
                other=_key_part(name, key)
                + [
                    _constraint(rule)
                    for rule in catalogue
                    if rule.column == name and rule.kind not in _FLAG_KINDS
                ],
            ),
            tags=_tags(column.metadata),
        )
        for name, column in dy_schema.columns().items()
    ]
    table_level = [_constraint(rule) for rule in catalogue if rule.column is None]
    return dg.TableSchema(
        columns=columns,
        constraints=dg.TableConstraints(other=table_level) if table_level else None,
    )


def schema_metadata(schema: SchemaLike) -> dict[str, dg.TableSchema]:
    """The definition metadata that fills an asset's Columns tab: one `dagster/column_schema`
    entry, to merge with your own `metadata`."""
    return {COLUMN_SCHEMA_KEY: table_schema(schema)}


def written_schema(declared: dg.TableSchema | None, frame: pl.DataFrame) -> dg.TableSchema:
    """`dagster/column_schema` for a materialization: the frame's columns and dtypes, each
    with the description, constraints and tags `declared` (the definition's Columns tab) has
    for it. A schema's dtype may admit several (`dy.Any`, a `dy.Datetime` of any time zone),
    and `dg.build_column_schema_change_checks` compares what was stored, run to run."""
    known = {column.name: column for column in declared.columns} if declared else {}
    columns = [
        dg.TableColumn(
            name=name,
            type=dtype_name(dtype),
            description=column.description if column else None,
            constraints=column.constraints if column else None,
            tags=column.tags if column else None,
        )
        for name, dtype in frame.schema.items()
        for column in [known.get(name)]
    ]
    return dg.TableSchema(columns=columns, constraints=declared.constraints if declared else None)


def _key_part(name: str, key: list[str]) -> list[str]:
    """The key column's "primary key" chip; "part of primary key" for a column of a composite
    key (short enough for the UI's chip; the table level names the whole key)."""
    if name not in key:
        return []
    return ["primary key" if len(key) == 1 else "part of primary key"]


def _constraint(rule: Rule) -> str:
    return rule.description + (" (warn)" if rule.severity == "warn" else "")


def _tags(metadata: dict[str, Any] | None) -> dict[str, str] | None:
    # `dg.TableColumn.tags` is `Mapping[str, str]`; Dagster rejects other value types.
    return {str(k): str(v) for k, v in metadata.items()} if metadata else None
