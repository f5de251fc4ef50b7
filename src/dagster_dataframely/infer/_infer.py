"""`infer_schema`: Dataframely schema source for a database table, a parquet or a Delta path,
or an asset's stored table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg

from .._checks.asset_keys import AssetKeyLike
from .._writing.names import class_name
from ..errors import (
    InvalidSourceError,
    TableNotFoundError,
)
from ..sources._names import dialect_name
from ._asset import asset_table
from ._columns import InferredColumn, InferredTable
from ._database import Database, database, read_columns
from ._profile import IS_IN_LIMIT, is_in_limit_of, profile_frame, profile_table
from ._proposals import adopted
from ._render import render

ABOUT = (
    "Written by `dagster-dataframely infer`: each column's type is the one "
    "dagster-dataframely's sources read it with, and NOT NULL and primary-key constraints "
    "are declared."
)


def infer_schema(
    table: str | os.PathLike[str] | None = None,
    *,
    connection: Any = None,
    dialect: str | None = None,
    asset: AssetKeyLike | None = None,
    definitions: dg.Definitions | None = None,
    partition: str | None = None,
    instance: dg.DagsterInstance | None = None,
    schema_name: str | None = None,
    profile: bool = False,
    adopt: bool = False,
    is_in_limit: int = IS_IN_LIMIT,
) -> str:
    """Dataframely schema source for a table: one formatted, importable module.

    The name is Dataframely's (`dataframely.experimental.infer_schema` writes a schema for a
    frame in memory); this one reads a stored table as dagster-dataframely's sources read
    it, so the schema passes the column-schema check of the source that checks the table.
    Column types are the ones the source reads, `NOT NULL` columns are not nullable, a
    declared primary key is `primary_key=True`, and a column with no Dataframely type is a
    comment naming its type. With `profile`, one aggregate query inside the database (one
    polars pass over a file) proposes more, as `# proposed` comments, never as rules;
    with `adopt`, a person's explicit choice, the proposals are written as rules instead,
    each marked as learned from the data on the day.

    Args:
        table: A table name (`schema.table`, or `table` in the current schema) when
            `connection` is given; else a parquet file, directory or glob, or a Delta table's
            directory.
        connection: A DuckDB connection, a DB-API connection of another database, or a
            Dagster resource that gives one (`DuckDBResource`, `SnowflakeResource`).
        dialect: sqlglot's name of the database's SQL (`postgres`, `snowflake`,
            `bigquery`); not needed for DuckDB.
        asset: Instead of `table`: an asset of `definitions` whose stored table is read
            through its IO manager, as its checks read it (only its schema; the rows only
            with `profile`).
        definitions: The Definitions that declare `asset` and its IO manager.
        partition: The partition of a partitioned `asset` to read; defaults to the latest
            one materialized (the header says which).
        instance: The Dagster instance that recorded the materializations (and holds a
            `FilesystemIOManager`'s files); defaults to `DAGSTER_HOME`'s, else an
            ephemeral one.
        schema_name: The class name; defaults to the table's name in CamelCase.
        profile: Propose nullability, a primary key or uniqueness, `is_in`, the range of
            values and the absence of NaN and infinities from today's rows.
        adopt: Profile, and write the proposals as options of the declarations (`min=1,
            # learned from the data, <date> (...)`) instead of comments.
        is_in_limit: A text column with at most this many distinct values is proposed
            `is_in` those values.

    Raises:
        TableNotFoundError: The database cannot read the table (the message names the
            closest tables it has), the path holds none, or `asset` was never
            materialized (or is an `AssetSpec` Dagster does not materialize).
        InvalidSourceError: The table name does not parse in the dialect, or a connection
            that is not DuckDB's comes without `dialect`, or not exactly one of `table` and
            `asset` (with `definitions`) is given.
        SourceReadError: The database refused the profile query (`profile`).
        InvalidSettingError: `is_in_limit` is not a whole number of at least 1.
        UnknownAssetError: `definitions` do not declare `asset` (the message names the
            closest keys they do).
    """
    if (table is None) == (asset is None) or (asset is not None) != (definitions is not None):
        raise InvalidSourceError(
            "infer_schema reads either a table (a name with connection=, or a path) or an "
            "asset's stored table (asset= with definitions=): give exactly one of them."
        )
    is_in_limit = is_in_limit_of(is_in_limit, "infer_schema")
    profile = profile or adopt
    if asset is not None:
        assert definitions is not None
        inferred = asset_table(
            asset,
            definitions,
            partition=partition,
            instance=instance if instance is not None else _instance(),
            profile=profile,
            is_in_limit=is_in_limit,
        )
    elif connection is None:
        assert table is not None
        inferred = _file(Path(table), profile=profile, is_in_limit=is_in_limit)
    else:
        with database(connection, dialect) as db:
            inferred = _table(db, str(table), profile=profile, is_in_limit=is_in_limit)
    # An upper-case name (Snowflake's unquoted ones) is written in CamelCase too.
    name = inferred.name.lower() if inferred.name.isupper() else inferred.name
    return render(inferred, schema_name or class_name(name), about=ABOUT, adopted=adopted(adopt))


def _instance() -> dg.DagsterInstance | None:
    """`DAGSTER_HOME`'s instance where it is set (None: an ephemeral one is used)."""
    return dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else None


def _table(db: Database, name: str, *, profile: bool, is_in_limit: int) -> InferredTable:
    table, columns, facts = read_columns(db, name)
    where = f"{dialect_name(db.dialect)} table {table.sql(dialect=db.dialect)}"
    profiles = profile_table(db, table, columns, facts, is_in_limit=is_in_limit) if profile else {}
    return InferredTable(name=table.name, where=where, columns=columns, profiles=profiles)


def _file(path: Path, *, profile: bool, is_in_limit: int) -> InferredTable:
    """A Delta table (a directory with `_delta_log`) or parquet, scanned as the package's
    `DeltaSource` and `ParquetSource` scan it."""
    from ..sources import DeltaSource, ParquetSource

    delta = (path / "_delta_log").is_dir()
    source = DeltaSource(str(path)) if delta else ParquetSource(str(path))
    try:
        frame = source.scan()
        schema = frame.collect_schema()
    except Exception as error:
        reason = " ".join(str(error).split())[:300]
        raise TableNotFoundError(
            f"Cannot infer a schema for {source.describe()}: it cannot be read ({reason}). "
            "Give a parquet file, directory or glob, or a Delta table's directory; for a "
            "database table, give its connection (--duckdb FILE, --postgres CONNINFO)."
        ) from error
    columns = [
        InferredColumn(name=name, dtype=dtype, declared=str(dtype))
        for name, dtype in schema.items()
    ]
    stem = path.name if delta or path.is_dir() else path.name.split(".")[0]
    return InferredTable(
        name=stem or "table",
        where=source.describe(),
        columns=columns,
        profiles=profile_frame(frame, columns, is_in_limit=is_in_limit) if profile else {},
    )
