"""The column facts of a checked table, read from the database's catalog in one query.

A source reads them once per table per run, before any rule is compiled (`SQLTable.facts`).
The query is the dialect's (`Dialect.catalog_query`); a catalog that cannot be read (a role
without access to it, a database that lacks it) leaves the facts unread, so every rule over
a text column falls back to polars rather than risk a count under an unknown collation.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
from sqlglot import exp

from .columns import TableFacts
from .dialects import Dialect


def read_facts(
    relation: exp.Select,
    dialect: Dialect,
    run: Callable[[str], pl.DataFrame],
    log: Callable[[str], None] = lambda _: None,
) -> TableFacts:
    """The facts of the columns of the table `relation` selects from, by `run`ning the
    dialect's catalog query."""
    clause = relation.find(exp.From)
    source = None if clause is None else clause.this
    if not isinstance(source, exp.Table):
        return TableFacts(read=False)
    query = dialect.catalog_query(source).sql(dialect=dialect.name)
    try:
        rows = run(query)
    except Exception as error:  # any failure leaves the facts unknown
        log(
            f"Could not read the column types and collations of {source.sql(dialect.name)} "
            f"({type(error).__name__}: {error}); rules over its text columns run in polars."
        )
        return TableFacts(read=False)
    facts = dialect.column_facts(rows)
    return TableFacts(facts) if facts else TableFacts(read=False)
