"""Each catalogue rule carries its kind and its constraint's value, read from the schema once,
so the backends compile a rule from its record alone and never parse rule names again."""

import datetime as dt
from dataclasses import replace
from typing import Annotated

import dataframely as dy
import polars as pl

from dagster_dataframely._engine.read_dtypes import Cast
from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely._engine.sql.rules import predicate
from dagster_dataframely._sidecar.collection_rules import filter_rules, propagated_member
from dagster_dataframely.wiring import rules


class Everything(dy.Schema):
    id = dy.Int64(primary_key=True)
    amount = dy.Float64(nullable=True, min=0.0, max_exclusive=100.0, allow_inf=False)
    share = dy.Float64(nullable=True, min_exclusive=0.0, max=1.0)
    code = dy.String(nullable=True, min_length=2, max_length=4, regex=r"^[A-Z]+$")
    size = dy.Int64(nullable=True, is_in=[1, 2, 3], check={"even": lambda c: c % 2 == 0})
    tag = dy.String(nullable=True, unique=True, check=lambda c: c != "x")
    day = dy.Date(nullable=False, min=dt.date(2020, 1, 1))

    @dy.rule()
    def coded_amounts(cls) -> pl.Expr:
        return pl.col("code").is_not_null() | pl.col("amount").is_null()


def test_every_rule_kind_carries_its_kind_and_constraint_value() -> None:
    found = {rule.name: (rule.column, rule.kind, rule.value) for rule in rules(Everything)}
    assert found == {
        "id|nullability": ("id", "nullability", None),
        "amount|min": ("amount", "min", 0.0),
        "amount|max_exclusive": ("amount", "max_exclusive", 100.0),
        "amount|nan": ("amount", "nan", None),
        "amount|inf": ("amount", "inf", None),
        "share|min_exclusive": ("share", "min_exclusive", 0.0),
        "share|max": ("share", "max", 1.0),
        "share|nan": ("share", "nan", None),
        "share|inf": ("share", "inf", None),
        "code|min_length": ("code", "min_length", 2),
        "code|max_length": ("code", "max_length", 4),
        "code|regex": ("code", "regex", r"^[A-Z]+$"),
        "size|is_in": ("size", "is_in", (1, 2, 3)),
        "size|check__even": ("size", "check__even", None),
        "tag|unique": ("tag", "unique", None),
        "tag|check": ("tag", "check", None),
        "day|nullability": ("day", "nullability", None),
        "day|min": ("day", "min", dt.date(2020, 1, 1)),
        "primary_key": (None, "primary_key", None),
        "coded_amounts": (None, "rule", None),
    }


def test_a_rule_compiles_to_sql_from_its_record_alone() -> None:
    # The bound comes from the record, not from the schema's column settings.
    amount = next(rule for rule in rules(Everything) if rule.name == "amount|min")
    dtypes = {"amount": pl.Float64()}
    moved = predicate(replace(amount, value=5.0), dtypes, DIALECTS["duckdb"])
    assert moved is not None
    assert "5.0" in moved.sql(dialect="duckdb") and ">= 0.0" not in moved.sql(dialect="duckdb")


def test_casts_and_collection_filters_have_kinds_of_their_own() -> None:
    cast = Cast("amount", pl.Int32(), pl.Int64(), 0).rule
    assert (cast.column, cast.kind) == ("amount", "cast")

    class Orders(dy.Schema):
        id = dy.Int64(primary_key=True)

    class Lines(dy.Schema):
        id = dy.Int64(primary_key=True)

    class Shop(dy.Collection):
        orders: dy.LazyFrame[Orders]
        lines: Annotated[dy.LazyFrame[Lines], dy.CollectionMember(propagate_row_failures=True)]

        @dy.filter()
        def lines_have_orders(self) -> pl.LazyFrame:
            return self.lines.join(self.orders, on="id")

    records = {rule.name: rule for rule in filter_rules(Shop)}
    assert records["lines_have_orders"].kind == "filter"
    assert propagated_member(records["lines_have_orders"]) is None
    propagation = records["lines|failure_propagation"]
    assert (propagation.kind, propagated_member(propagation)) == ("failure_propagation", "lines")
