"""A collection filter's plan, read from polars' serialized tree, as SQL or not at all.

Pins the tree `_engine.sql.plans` reads: the Ledger's filters (semi, anti, inner and left
joins, a filter on a joined column, `unique()`) translate and name the members they read, and
every node it does not know (an aggregation, `with_columns`, a literal frame, a full join,
`unique(subset=)`, a member of another database) leaves the filter to polars. A later polars
that writes the tree differently makes these tests fail rather than a filter miscount.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
import polars as pl
import pytest
from ledger import Ledger, ledger_frames
from sqlglot import exp

from dagster_dataframely._engine.dataframely_internals import (
    collection_filters,
    collection_instance,
)
from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely._engine.sql.exactness import NotExact
from dagster_dataframely._engine.sql.plans import Plan, Relation, compile_plan

DUCKDB = DIALECTS["duckdb"]


def _relations(frames: dict[str, pl.DataFrame]) -> dict[str, Relation]:
    return {
        member: Relation(
            exp.select(*(exp.column(c, quoted=True) for c in frame.columns)).from_(
                exp.to_table(member, quoted=True)
            ),
            dict(frame.schema),
        )
        for member, frame in frames.items()
    }


def _compile(
    logic: Callable[[Any], pl.LazyFrame], relations: dict[str, Relation] | None = None
) -> Any:
    """The filter's plan in DuckDB's SQL, or the reason it stays in polars."""
    frames = ledger_frames()
    try:
        return compile_plan(
            lambda members: logic(collection_instance(Ledger, dict(members))),
            {member: dict(frame.schema) for member, frame in frames.items()},
            _relations(frames) if relations is None else relations,
            ["order_id"],
            DUCKDB,
        )
    except NotExact as declined:
        return declined.reason


def _kept(sql: str) -> list[int]:
    """The keys the SQL keeps, run on the Ledger's frames in DuckDB."""
    with duckdb.connect() as connection:
        for member, frame in ledger_frames().items():
            connection.register(member, frame.to_arrow())
        return sorted(row[0] for row in connection.sql(sql).fetchall())


def test_each_filter_of_the_ledger_but_its_aggregation_translates_and_keeps_polars_keys() -> None:
    reads = {}
    for name, logic in collection_filters(Ledger).items():
        plan = _compile(logic)
        if name == "few_items":
            assert plan == "filter: GroupBy"  # an aggregation
            continue
        assert isinstance(plan, Plan), (name, plan)
        reads[name] = plan.reads
        # On frames no member rule filtered, the SQL keeps the keys polars keeps.
        instance = collection_instance(Ledger, {m: f.lazy() for m, f in ledger_frames().items()})
        expected = sorted(logic(instance).select("order_id").collect()["order_id"].to_list())
        assert _kept(plan.relation.select.sql(dialect="duckdb")) == expected, name
    assert reads == {
        "invoice_has_items": {"invoices", "items"},
        "items_of_invoices": {"invoices", "items"},
        "paid_in_full": {"invoices", "payments"},
        "unpaid_or_positive": {"invoices", "payments"},
        "not_blocked": {"invoices", "clients"},
    }


@pytest.mark.parametrize(
    "logic",
    [
        pytest.param(lambda c: c.invoices.with_columns(pl.lit(1).alias("x")), id="with_columns"),
        pytest.param(lambda c: c.items.group_by("order_id").agg(pl.len()), id="group_by"),
        pytest.param(lambda c: pl.LazyFrame({"order_id": [1, 2]}), id="a literal frame"),
        pytest.param(lambda c: c.invoices.join(c.items, on="order_id", how="full"), id="full"),
        pytest.param(lambda c: c.items.unique(subset=["line_no"]), id="unique(subset=)"),
        pytest.param(lambda c: c.invoices.filter(pl.col("amount") / 2 > 1), id="a division"),
        pytest.param(lambda c: c.invoices.head(2), id="head"),
    ],
)
def test_a_node_without_an_sql_form_leaves_the_filter_to_polars(
    logic: Callable[[Any], pl.LazyFrame],
) -> None:
    assert isinstance(_compile(logic), str)


def test_a_filter_reading_a_member_of_another_database_is_not_translated() -> None:
    relations = _relations(ledger_frames())
    del relations["items"]
    logic = collection_filters(Ledger)
    assert _compile(logic["invoice_has_items"], relations) == (
        "filter: reads a member whose valid rows this database does not hold"
    )
    assert isinstance(_compile(logic["not_blocked"], relations), Plan)
