"""A collection filter's query plan translated to SQL where exact.

A `@dy.filter` is a function from the collection to a LazyFrame of the keys it keeps. It is
called once on placeholder members (empty frames of the members' dtypes, told apart by their
number of null rows) and its plan is read from its serialized tree
(`LazyFrame.serialize(format="json")`): scans of the members, `filter` by a predicate the
expression translator takes, `select` of columns, `unique()`, and `join` on columns (inner,
left, semi, anti). Any other node (a `with_columns`, an aggregation, a literal frame, a node
of a later polars) makes the whole filter fall back to polars: a filter is translated exactly
or not at all. `tests/test_sql_filters.py` pins the tree.
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import count
from typing import Any

import polars as pl
from sqlglot import exp

from .dialects import Dialect
from .exactness import NO_SQL_FORM, NotExact
from .expressions import Untranslatable, translate_tree

_JOINS = ("Inner", "Left", "Semi", "Anti")


@dataclass(frozen=True)
class Relation:
    """Rows as SQL: a `SELECT` whose output columns are exactly `dtypes`, in order."""

    select: exp.Select
    dtypes: Mapping[str, pl.DataType]


@dataclass(frozen=True)
class Plan:
    """A filter's kept keys as SQL, and the members its plan reads."""

    relation: Relation
    reads: frozenset[str]


def placeholders(dtypes: Mapping[str, Mapping[str, pl.DataType]]) -> dict[str, pl.LazyFrame]:
    """member -> an empty-valued frame of its dtypes; the i-th member holds i null rows, which
    is how its scan is recognized in a plan (the dtypes alone may repeat between members)."""
    return {
        member: pl.DataFrame(schema=dict(columns)).clear(n=index).lazy()
        for index, (member, columns) in enumerate(dtypes.items())
    }


def compile_plan(
    build: Callable[[Mapping[str, pl.LazyFrame]], pl.LazyFrame],
    dtypes: Mapping[str, Mapping[str, pl.DataType]],
    relations: Mapping[str, Relation],
    key: Sequence[str],
    dialect: Dialect,
) -> Plan:
    """The `key` columns of the plan `build` returns on placeholders of the members (of
    `dtypes`), as SQL over the members' `relations`; `NotExact`, with the reason, when the
    plan has no exact SQL form here or reads a member that `relations` lacks."""
    try:
        lf = build(placeholders(dtypes)).select(list(key))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # polars deprecates JSON plans; this reader pins it
            tree = json.loads(lf.serialize(format="json"))
        reader = _Reader(list(dtypes), relations, dialect)
        relation = reader.node(tree)
    except NotExact:
        raise
    except Untranslatable as declined:
        (what,) = declined.args or (None,)
        raise NotExact(f"filter: {what}" if isinstance(what, str) else NO_SQL_FORM) from None
    except Exception:
        raise NotExact(NO_SQL_FORM) from None
    return Plan(relation=relation, reads=frozenset(reader.reads))


class _Reader:
    def __init__(
        self, members: Sequence[str], relations: Mapping[str, Relation], dialect: Dialect
    ) -> None:
        self.members = members
        self.relations = relations
        self.dialect = dialect
        self.reads: set[str] = set()
        self.aliases = count()

    def alias(self) -> str:
        return f"__dy_plan_{next(self.aliases)}"

    def node(self, tree: Any) -> Relation:
        if not isinstance(tree, dict) or len(tree) != 1:
            raise Untranslatable(tree)
        ((kind, body),) = tree.items()
        if kind == "DataFrameScan":
            return self.scan(body)
        if kind == "Filter":
            return self.filter(self.node(body["input"]), body["predicate"])
        if kind == "Select":
            return self.project(self.node(body["input"]), body["expr"])
        if kind == "Distinct":
            return self.distinct(self.node(body["input"]), body["options"])
        if kind == "Join":
            return self.join(body)
        raise Untranslatable(kind)

    def scan(self, body: Mapping[str, Any]) -> Relation:
        height = pl.read_ipc_stream(io.BytesIO(bytes(body["df"]))).height
        if height >= len(self.members):
            raise Untranslatable("a frame that is no member")
        member = self.members[height]
        relation = self.relations.get(member)
        if relation is None:
            raise Untranslatable("reads a member whose valid rows this database does not hold")
        if list(body["schema"]["fields"]) != list(relation.dtypes):
            raise Untranslatable("a frame that is no member")
        self.reads.add(member)
        return relation

    def filter(self, source: Relation, predicate: Any) -> Relation:
        condition = translate_tree(predicate, source.dtypes, self.dialect)
        if condition is None:
            raise Untranslatable("predicate")
        alias = self.alias()
        select = _columns(source.dtypes, alias).from_(source.select.subquery(alias))
        return Relation(select.where(condition), source.dtypes)

    def project(self, source: Relation, exprs: Sequence[Any]) -> Relation:
        names = [_column_name(expr) for expr in exprs]
        if len(set(names)) != len(names):
            raise Untranslatable("a column selected twice")
        dtypes = {name: source.dtypes[name] for name in names}
        alias = self.alias()
        return Relation(_columns(dtypes, alias).from_(source.select.subquery(alias)), dtypes)

    def distinct(self, source: Relation, options: Mapping[str, Any]) -> Relation:
        if options.get("subset") is not None or options.get("keep_strategy") not in ("Any",):
            raise Untranslatable("unique(subset=...)")  # which row stays would decide the keys
        alias = self.alias()
        select = _columns(source.dtypes, alias).from_(source.select.subquery(alias))
        return Relation(select.distinct(), source.dtypes)

    def join(self, body: Mapping[str, Any]) -> Relation:
        args = body["options"]["args"]
        how = args["how"]
        condition = body.get("condition", {"Equi": body})
        if (
            how not in _JOINS
            or set(condition) != {"Equi"}
            or body.get("predicates")
            or args.get("slice") is not None
            or args.get("validation") != "ManyToMany"
            or args.get("coalesce") not in ("JoinSpecific", "Coalesce")
        ):
            raise Untranslatable(f"join {how}")
        left, right = self.node(body["input_left"]), self.node(body["input_right"])
        left_on = [_column_name(e) for e in condition["Equi"]["left_on"]]
        right_on = [_column_name(e) for e in condition["Equi"]["right_on"]]
        nulls_equal = bool(args.get("nulls_equal", args.get("join_nulls", False)))
        la, ra = self.alias(), self.alias()
        same = self.dialect.same if nulls_equal else equal
        on = keys_equal(la, ra, left_on, same, right_keys=right_on)
        if how in ("Semi", "Anti"):
            inner = exp.select(exp.Literal.number(1)).from_(right.select.subquery(ra)).where(on)
            exists: exp.Expr = exp.Exists(this=inner)
            select = _columns(left.dtypes, la).from_(left.select.subquery(la))
            return Relation(
                select.where(exists if how == "Semi" else exp.not_(exists)), left.dtypes
            )
        kept = [name for name in right.dtypes if name not in right_on]
        suffix = str(args.get("suffix", "_right"))
        outputs = {name: exp.column(name, table=la, quoted=True) for name in left.dtypes}
        dtypes = dict(left.dtypes)
        for name in kept:
            output = name if name not in dtypes else name + suffix
            if output in dtypes:
                raise Untranslatable("a join's column named twice")
            outputs[output] = exp.column(name, table=ra, quoted=True)
            dtypes[output] = right.dtypes[name]
        select = exp.select(
            *(exp.alias_(value, name, quoted=True) for name, value in outputs.items())
        )
        joined = select.from_(left.select.subquery(la)).join(
            right.select.subquery(ra), on=on, join_type="left" if how == "Left" else "inner"
        )
        return Relation(joined, dtypes)


def _columns(dtypes: Mapping[str, pl.DataType], alias: str) -> exp.Select:
    return exp.select(*(exp.column(name, table=alias, quoted=True) for name in dtypes))


def _column_name(tree: Any) -> str:
    if isinstance(tree, dict) and set(tree) == {"Column"} and isinstance(tree["Column"], str):
        return tree["Column"]
    raise Untranslatable(tree)


def equal(left: exp.Expr, right: exp.Expr) -> exp.Expr:
    """`left = right`: a null joins nothing."""
    return exp.EQ(this=left, expression=right)


def keys_equal(
    left: str,
    right: str,
    keys: Sequence[str],
    equal: Callable[[exp.Expr, exp.Expr], exp.Expr],
    *,
    right_keys: Sequence[str] | None = None,
) -> exp.Expr:
    """A join's condition: each of `keys` of the relation aliased `left` is `equal` to its
    column in the one aliased `right` (named the same, or as `right_keys` name them)."""
    return exp.and_(
        *(
            equal(exp.column(lk, table=left, quoted=True), exp.column(rk, table=right, quoted=True))
            for lk, rk in zip(keys, keys if right_keys is None else right_keys, strict=True)
        )
    )
