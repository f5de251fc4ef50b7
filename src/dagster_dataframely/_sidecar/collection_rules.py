"""The cross-member rules of a `dy.Collection`, as catalogue records.

`Collection.filter` removes a member's rows for two reasons beyond its own schema: a
`@dy.filter` does not return their common primary key, or a member declared
`dy.CollectionMember(propagate_row_failures=True)` has a failing row with that key
(Dataframely's failure info calls it `<member>|failure_propagation`). Each is one record
here, checked on every member it can remove rows from: `dy_filter__<filter>` and
`dy_filter__<member>__failure_propagation` (the rule name with `|` as `__`, as rule checks
are named).
"""

from __future__ import annotations

import dataframely as dy
import polars as pl

from .._engine.catalogue import Rule
from .._engine.constraints import docstring_summary
from .._engine.dataframely_internals import collection_filters
from .._engine.naming import dagster_name, guard_check_names
from .._engine.severity import warned_filters

#: Prefix of a collection filter's check name: `dy_filter__<filter>`.
FILTER_CHECK_PREFIX = "dy_filter__"

#: Suffix of Dataframely's failure rule for a propagating member: `<member>|failure_propagation`.
PROPAGATION_SUFFIX = "|failure_propagation"


def propagating_members(collection: type[dy.Collection]) -> list[str]:
    """The members whose failing rows remove their key from every member, as
    `Collection.filter` propagates them (`ignored_in_filters` members never do)."""
    return [
        name
        for name, member in collection.members().items()
        if member.propagate_row_failures and not member.ignored_in_filters
    ]


def propagated_member(rule: Rule) -> str | None:
    """The member whose failing rows `rule` propagates; None for a `@dy.filter`'s record."""
    return rule.value if rule.kind == "failure_propagation" else None


def filter_rules(collection: type[dy.Collection], *, warn: tuple[str, ...] = ()) -> list[Rule]:
    """One record per `@dy.filter` of `collection` (`dy_filter__<filter>`), then one per
    propagating member (`dy_filter__<member>__failure_propagation`)."""
    warned = warned_filters(collection, warn)
    key = ", ".join(collection.common_primary_key())
    records = [
        Rule(
            name=filter_name,
            column=None,
            check_name=FILTER_CHECK_PREFIX + dagster_name(filter_name),
            severity="warn" if filter_name in warned else "error",
            description=docstring_summary(logic)
            or f"Rows whose ({key}) filter {filter_name} keeps.",
            expression=f"{collection.__name__}.{filter_name}: keeps the rows whose ({key}) "
            "it returns",
            expr=pl.lit(True),
            kind="filter",
        )
        for filter_name, logic in collection_filters(collection).items()
    ]
    for member in propagating_members(collection):
        name = member + PROPAGATION_SUFFIX
        records.append(
            Rule(
                name=name,
                column=None,
                check_name=FILTER_CHECK_PREFIX + dagster_name(name.replace("|", "__")),
                severity="warn" if name in warned else "error",
                description=f"No row of member {member} with the same ({key}) fails {member}'s "
                "rules (propagate_row_failures).",
                expression=f"{collection.__name__}.{member}: propagate_row_failures removes the "
                f"rows whose ({key}) a failing {member} row holds",
                expr=pl.lit(True),
                kind="failure_propagation",
                value=member,
            )
        )
    guard_check_names(collection.__name__, {r.name: r.check_name for r in records})
    return records
