"""`dbt_contract`: a dbt model's contract block from a Dataframely schema, for teams whose
schema is the source of truth, so the model's columns and the checks cannot drift apart.

Each column's `data_type` is the SQL type that the package's source for the warehouse reads
back as the column's dtype (`contract_dtype`, the mapping `dbt_schemas` reads contracts
with): a dtype no SQL type reads back as is refused, never written as a near miss.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dataframely as dy
import polars as pl
import sqlglot
import yaml
from sqlglot import exp
from sqlglot.dialects.dialect import NormalizationStrategy

from .._engine.sql.dialects import described
from ..errors import UnsupportedSchemaError
from ._database import unreadable
from ._dbt import contract_dtype

#: SQL types tried for a dtype, in order; the first that reads back as the dtype is written.
_SCALARS = (
    "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
    "UINTEGER", "UBIGINT", "REAL", "DOUBLE", "DATE", "TIME", "TIMESTAMP", "DATETIME",
    "TIMESTAMP_MS", "TIMESTAMP_NS", "TIMESTAMPTZ", "VARCHAR", "BLOB",
)  # fmt: skip


def dbt_contract(
    schema: type[dy.Schema], *, model: str | None = None, dialect: str = "duckdb"
) -> str:
    """The YAML of a dbt model with an enforced contract that declares `schema`'s columns.

    Each column gets the `data_type` (in `dialect`, dbt's adapter) that reads back as its
    dtype, `quote: true` where the warehouse would otherwise store its name folded to
    another case, a `not_null` constraint where it is not nullable, `unique` where it is unique,
    and the primary key as a `primary_key` constraint (of the model, for a composite key).
    Paste it into the project's `schema.yml`, or merge its `columns` into the model's entry.

    Args:
        schema: The Dataframely schema.
        model: The dbt model's name; defaults to the schema's class name in snake case.
        dialect: The warehouse's sqlglot dialect (dbt's adapter type).

    Raises:
        UnsupportedSchemaError: A column's dtype has no SQL type in `dialect` that reads
            back as it (an `Enum`, a `Categorical`; declare it as text and check it with
            `read_dtypes="cast"`).
    """
    columns = schema.columns()
    keys = [name for name, column in columns.items() if column.primary_key]
    written = []
    for name, column in columns.items():
        entry: dict[str, object] = {"name": name}
        if _quoted(name, dialect):
            entry["quote"] = True
        entry["data_type"] = _data_type(schema, name, column.dtype, dialect)
        constraints = []
        if not column.nullable or column.primary_key:
            constraints.append({"type": "not_null"})
        if column.primary_key and len(keys) == 1:
            constraints.append({"type": "primary_key"})
        elif getattr(column, "unique", False):
            constraints.append({"type": "unique"})
        if constraints:
            entry["constraints"] = constraints
        written.append(entry)
    block: dict[str, object] = {
        "name": model or _snake(schema.__name__),
        "config": {"contract": {"enforced": True}},
    }
    if len(keys) > 1:
        block["constraints"] = [{"type": "primary_key", "columns": keys}]
    block["columns"] = written
    text = yaml.safe_dump({"version": 2, "models": [block]}, sort_keys=False)
    return f"# The contract of schema {schema.__name__}, written by dagster-dataframely.\n{text}"


def _data_type(schema: type[dy.Schema], name: str, dtype: pl.DataType, dialect: str) -> str:
    for text in _candidates(dtype):
        written = _written(text, dialect)
        if _reads_back(written, dialect) == dtype:
            return written.lower()
    read = {_reads_back(_written(text, dialect), dialect) for text in _SCALARS}
    listed = sorted(str(d) for d in read if d is not None)
    raise UnsupportedSchemaError(
        f"Column {name!r} of schema {schema.__name__} is {dtype}, and no {dialect} type reads "
        f"back as it, so a contract cannot declare it. Declare the column with a dtype "
        f"{dialect}'s columns read back as ({', '.join(listed)}; an Enum or Categorical as "
        "String, checked with read_dtypes='cast')."
    )


def _quoted(name: str, dialect: str) -> bool:
    """Whether dbt must quote the column to keep its name: a name that is no bare
    identifier, or one the warehouse stores folded (PostgreSQL in lower case, Snowflake in
    upper case), where the checks read the name as the schema spells it."""
    identifier = exp.to_identifier(name)
    if identifier.quoted:
        return True
    sql = sqlglot.Dialect.get_or_raise(dialect)
    folds = sql.NORMALIZATION_STRATEGY in (
        NormalizationStrategy.LOWERCASE,
        NormalizationStrategy.UPPERCASE,
    )
    return folds and sql.normalize_identifier(identifier.copy()).name != name


def _written(text: str, dialect: str) -> str:
    """The `data_type` of SQL type `text` (DuckDB's spelling) in `dialect`, as stored."""
    built = exp.DataType.build(text, dialect="duckdb")
    return described(dialect).stored_type(built).sql(dialect=dialect)


def _reads_back(text: str, dialect: str) -> pl.DataType | None:
    """The dtype a column of type `text` (in `dialect`) reads back as; None where it is
    not read exactly (text of a type the source does not know)."""
    read = contract_dtype(text, dialect)
    if unreadable(read, text, None if dialect == "duckdb" else dialect) is not None:
        return None
    return read


def _candidates(dtype: Any) -> Iterator[str]:
    if isinstance(dtype, pl.Decimal):
        yield f"DECIMAL({dtype.precision}, {dtype.scale})"
    elif isinstance(dtype, pl.List):
        yield from (f"{inner}[]" for inner in _candidates(dtype.inner))
    elif isinstance(dtype, pl.Struct):
        fields = [(f.name, next(_candidates(f.dtype), None)) for f in dtype.fields]
        if all(text is not None for _, text in fields):
            yield "STRUCT(" + ", ".join(f'"{n}" {t}' for n, t in fields) + ")"
    else:
        yield from _SCALARS


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))
