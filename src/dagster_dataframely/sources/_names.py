"""One way to read a table reference and a `partition_expr`: sqlglot's parser for the dialect.

`table=` and the asset's `dagster/table_name` are SQL names, not strings to split on dots: a
quoted part keeps its dots (`'"orders.v2"'` is one table), a bare part is folded as the
database folds it (PostgreSQL to lower case, Snowflake to upper), and every part is then
quoted, so what is checked is exactly the table the name means. Without either, the asset
key's parts are the names, as written. A name that does not parse, or has more than
`catalog.schema.table`, is an `InvalidSourceError` when the source (or the Definitions that
bind it to an asset) is built, not at the first run.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dagster as dg

from ..errors import InvalidSourceError

if TYPE_CHECKING:  # sqlglot is imported when a name is read, not with the package
    from sqlglot import exp

#: The metadata key dagster-dbt and Dagster's database IO managers set to the table's name.
TABLE_NAME = "dagster/table_name"
_PARTS = ("catalog", "db", "this")


def dialect_name(dialect: str) -> str:
    """How a message names `dialect`: its Dialect's title, else sqlglot's name."""
    from .._engine.sql.dialects import DIALECTS

    known = DIALECTS.get(dialect)
    return dialect if known is None else known.title


def parse_table(name: str, dialect: str, *, where: str) -> exp.Table:
    """The table `name` means in `dialect`, every part quoted; `where` says where the name
    was given (`table=`, an asset's `dagster/table_name`), for the error."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

    try:
        table = sqlglot.parse_one(name, into=exp.Table, dialect=dialect)
    except sqlglot.errors.SqlglotError:  # a ParseError, or a TokenError (`orders'v2`)
        table = None
    if table is None or not _three_names(table):
        raise InvalidSourceError(
            f"{where}={name!r} is not a {dialect_name(dialect)} table name: write 'table', "
            "'schema.table' or 'database.schema.table', with double quotes around a part that "
            "holds a dot, a space, a quote or capitals to keep ('schema.\"orders.v2\"')"
            f"{_quoting(name)}."
        )
    return _quoted(normalize_identifiers(table, dialect=dialect))


def _quoting(name: str) -> str:
    """The spelling of `name` with each of its dotted parts quoted, for the error's fix, where
    that is a name of up to three parts."""
    parts = name.split(".")
    if len(parts) > len(_PARTS) or not all(part.strip() for part in parts):
        return ""
    quoted = ".".join('"' + part.replace('"', '""') + '"' for part in parts)
    return f"; for the parts {', '.join(map(repr, parts))}: {quoted}"


def key_table(asset_key: dg.AssetKey, dialect: str) -> exp.Table:
    """The table an asset key names: its parts (the last three) as names, folded like bare
    names."""
    from sqlglot import exp
    from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

    parts = [exp.to_identifier(part, quoted=False) for part in asset_key.path[-3:]]
    table = exp.Table(
        this=parts[-1],
        db=parts[-2] if len(parts) > 1 else None,
        catalog=parts[-3] if len(parts) > 2 else None,
    )
    return _quoted(normalize_identifiers(table, dialect=dialect))


def asset_table(asset_key: dg.AssetKey, metadata: Mapping[str, Any], dialect: str) -> str:
    """The name of the table of `asset_key` as SQL of `dialect`: its `dagster/table_name`
    metadata (parsed, so a bad one fails here), else its key parts."""
    name = metadata.get(TABLE_NAME)
    if name is None:  # the key parts, quoted only where a bare name would mean another table
        table = key_table(asset_key, dialect)
        bare = ".".join(asset_key.path[-3:])
        with suppress(InvalidSourceError):
            if parse_table(bare, dialect, where="key") == table:
                return bare
        return table.sql(dialect=dialect)
    text = str(getattr(name, "value", name))
    parse_table(text, dialect, where=f"asset {asset_key.to_user_string()}'s {TABLE_NAME}")
    return text


def parse_expression(expression: str, dialect: str, *, where: str) -> exp.Expr:
    """`partition_expr` as a SQL expression of `dialect`, or the error naming it."""
    import sqlglot
    from sqlglot import exp

    try:
        statements = sqlglot.parse(expression, read=dialect)
    except sqlglot.errors.SqlglotError as error:  # a ParseError, or a TokenError (`'2024`)
        detail = str(error).splitlines()[0]
        raise InvalidSourceError(
            f"{where}: partition_expr={expression!r} is not a {dialect_name(dialect)} SQL "
            f"expression ({detail}). Give the column that holds the partition, or an "
            "expression over the table's columns, e.g. partition_expr='order_date'."
        ) from None
    parsed = statements[0] if len(statements) == 1 else None
    if parsed is None or isinstance(parsed, (exp.Query, exp.Command, exp.Alias)):
        raise InvalidSourceError(
            f"{where}: partition_expr={expression!r} is not one expression over the table's "
            "columns: give the column that holds the partition, e.g. "
            "partition_expr='order_date'."
        )
    return parsed


def _three_names(table: exp.Table) -> bool:
    """Up to three non-empty names: sqlglot keeps a fourth part (`a.b.c.d`) as a `Dot` and an
    empty one (`a..b`) as an empty string."""
    from sqlglot import exp

    return all(
        part is None or (isinstance(part, exp.Identifier) and bool(part.name))
        for part in (table.args.get(name) for name in _PARTS)
    )


def _quoted(table: exp.Table) -> exp.Table:
    from sqlglot import exp

    for identifier in table.find_all(exp.Identifier):
        identifier.set("quoted", True)
    return table


@dataclass(frozen=True)
class Reference:
    """A database source's `table=` and `partition_expr`, parsed once when it is built."""

    table: exp.Table | None
    partition_expr: exp.Expr | None

    @classmethod
    def parse(
        cls, owner: str, table: str | None, partition_expr: str | None, dialect: str
    ) -> Reference:
        return cls(
            table=None if table is None else parse_table(table, dialect, where=f"{owner} table"),
            partition_expr=None
            if partition_expr is None
            else parse_expression(partition_expr, dialect, where=owner),
        )
