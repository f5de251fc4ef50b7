"""A collection's filters as rules on each member: the common primary keys a filter keeps,
and those a member declared `propagate_row_failures` drops, collected once (memory in the
number of keys, like a `unique` rule) and turned into membership expressions the one
evaluator counts beside the member's own rules."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

import dataframely as dy
import polars as pl

from .._engine.catalogue import Rule
from .._engine.dataframely_internals import collection_filters, collection_instance
from .collection_members import CollectionRun
from .collection_rules import propagated_member


def kept_keys(
    collection: type[dy.Collection], valid: Mapping[str, pl.LazyFrame], names: Collection[str]
) -> dict[str, pl.Series]:
    """filter name -> the common primary keys it keeps (a struct Series for a composite
    key), for the filters `names`, run on the members' valid rows; collected, one row per
    kept row."""
    key = collection.common_primary_key()
    instance = collection_instance(collection, dict(valid))
    logic = {n: f for n, f in collection_filters(collection).items() if n in names}
    kept = pl.collect_all(
        [
            f(instance).lazy().select(pl.struct(key) if len(key) > 1 else key)
            for f in logic.values()
        ],
        engine="streaming",
    )
    return {name: frame.to_series() for name, frame in zip(logic, kept, strict=True)}


def filter_membership(rule: Rule, key: Sequence[str], kept: pl.Series) -> Rule:
    """`rule` (a filter's record) with the expression the evaluator counts: `False` where a
    row's key is not among the kept keys. A null key is never kept, as in Dataframely's join."""
    column = pl.struct(key) if len(key) > 1 else pl.col(key[0])
    return replace(rule, expr=column.is_in(kept.implode()).fill_null(False))


def dropped_keys(
    run: CollectionRun, invalid: Mapping[str, pl.LazyFrame], wanted: Sequence[Rule]
) -> dict[str, pl.Series]:
    """propagation rule name -> the common primary keys its member's failing rows hold (a
    struct Series for a composite key): the keys `Collection.filter` removes everywhere."""
    key = run.collection.common_primary_key()
    propagating = {rule.name: member for rule in wanted if (member := propagated_member(rule))}
    dropped = pl.collect_all(
        [
            invalid[member].select(pl.struct(key) if len(key) > 1 else key).unique()
            for member in propagating.values()
        ],
        engine="streaming",
    )
    return {name: frame.to_series() for name, frame in zip(propagating, dropped, strict=True)}


def propagation_membership(rule: Rule, key: Sequence[str], dropped: pl.Series) -> Rule:
    """`rule` (a propagating member's record) with the expression the evaluator counts:
    `False` where a row's key is among the dropped keys. A null key never matches, as in
    Dataframely's join."""
    column = pl.struct(key) if len(key) > 1 else pl.col(key[0])
    return replace(rule, expr=(~column.is_in(dropped.implode())).fill_null(True))
