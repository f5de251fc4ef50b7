"""A SQL source's evaluation as a benchmark measures it: the schema's rules over a table read
through `_Database` (the sources' connection code), by pushdown or with every rule in polars
over the source's scan."""

from __future__ import annotations

from typing import Any


def evaluated(database: Any, table: str, dialect: str, checked: type, method: str) -> int:
    """The failed rows of `checked`'s rules over `table`: `method` "pushdown" in the database
    (each rule must run there), else every rule in polars over the rows read out. The column
    facts are read as a source reads them."""
    from dagster_dataframely._checks.results import evaluate_schema
    from dagster_dataframely._engine.backends import backend_for
    from dagster_dataframely._engine.catalogue import rules
    from dagster_dataframely._engine.settings import CheckSettings
    from dagster_dataframely._engine.sql.backend import SQLTable
    from dagster_dataframely._engine.sql.catalog import read_facts
    from dagster_dataframely._engine.sql.dialects import DIALECTS
    from dagster_dataframely.sources._sql_query import relation

    rows = relation(database.dtypes, table, dialect, None, None)
    facts = read_facts(rows, DIALECTS[dialect], database.run)
    pushed = SQLTable.of(rows, dialect=dialect, run=database.run, facts=facts)
    evaluation = evaluate_schema(
        checked,
        database.scan(rows),
        rules(checked),
        CheckSettings.resolve(),
        backend=backend_for(pushed if method == "pushdown" else None),
    )
    if method == "pushdown":
        assert set(evaluation.engines.values()) == {dialect}, evaluation.engines
    return sum(evaluation.failed.values())
