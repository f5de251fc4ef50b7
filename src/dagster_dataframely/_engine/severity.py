"""Rule severity: `"error"` by default, `"warn"` where `dd.warn` or `warn=` says so."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal, TypeVar

import dataframely as dy

from ..errors import InvalidSeverityError
from .dataframely_internals import collection_filters, rule_expressions, rule_owner

Severity = Literal["error", "warn"]
S = TypeVar("S", bound=type[dy.Schema] | type[dy.Collection])

_WARN_ATTR = "__dagster_dataframely_warn__"


def warn(*rules: str) -> Callable[[S], S]:
    """Declare rules of a schema `"warn"`: failing rows are reported, not blocked.

    A name is a Dataframely rule name (`"amount|max"`, `"paid_orders_have_amount"`) or a
    column name, meaning every rule of that column; on a `dy.Collection`, a filter name.
    Unknown names raise `InvalidSeverityError` when the class is decorated.

    Example:
        ```python
        @dd.warn("amount|max", "note")
        class Orders(dy.Schema): ...
        ```
    """

    def decorate(schema: S) -> S:
        # Validates the names now, not at the first run.
        if issubclass(schema, dy.Collection):
            warned_filters(schema, rules)
        else:
            warned_rules(schema, rules)
        setattr(schema, _WARN_ATTR, declared(schema) | frozenset(rules))
        return schema

    return decorate


def warn_names(warn: str | Iterable[str]) -> tuple[str, ...]:
    """The names a `warn=` argument gives: a single string is one name (`"amount|min"`),
    never its characters. Raises `InvalidSeverityError` for a name that is not a string."""
    names = (warn,) if isinstance(warn, str) else tuple(warn)
    odd = [name for name in names if not isinstance(name, str)]
    if odd:
        raise InvalidSeverityError(
            f"warn= takes rule or column names as strings, got {', '.join(map(repr, odd))}. "
            'Pass one name ("amount|min") or a list of them (["amount|min", "note"]).'
        )
    return names


def declared(schema: type[dy.Schema] | type[dy.Collection]) -> frozenset[str]:
    """The names a schema declares `"warn"` (through `dd.warn`), as written."""
    return frozenset(getattr(schema, _WARN_ATTR, frozenset()))


def warned_rules(
    schema: type[dy.Schema],
    extra: Iterable[str] = (),
    *,
    owners: Mapping[str, str | None] | None = None,
) -> frozenset[str]:
    """The rule names of `schema` that are `"warn"`: declared ones plus `extra`. `owners`
    (rule -> its column, None for schema-level rules) saves listing the rules again."""
    columns = schema.columns()
    if owners is None:
        owners = {rule: rule_owner(rule, columns)[0] for rule in rule_expressions(schema)}
    names = declared(schema) | frozenset(extra)
    unknown, known = unknown_names(schema, names, owners)
    if unknown:
        raise InvalidSeverityError(
            f"{', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} neither a "
            f"rule nor a column of schema {schema.__name__}, so cannot be made 'warn'.{known}"
        )
    return frozenset(rule for rule, column in owners.items() if rule in names or column in names)


def warned_filters(collection: type[dy.Collection], extra: Iterable[str] = ()) -> frozenset[str]:
    """The filter names of `collection` that are `"warn"`: declared ones plus `extra`. A
    propagating member's failure rule (`<member>|failure_propagation`) counts as a filter."""
    filters = list(collection_filters(collection)) + [
        f"{name}|failure_propagation"
        for name, member in collection.members().items()
        if member.propagate_row_failures and not member.ignored_in_filters
    ]
    names = declared(collection) | frozenset(extra)
    unknown = sorted(n for n in names if n not in filters)
    if unknown:
        raise InvalidSeverityError(
            f"{', '.join(map(repr, unknown))} {'is' if len(unknown) == 1 else 'are'} not a "
            f"filter of collection {collection.__name__}, so cannot be made 'warn'."
            f"{closest(unknown, filters)} Filters: {listed(filters)}. (A member's rules are "
            "made 'warn' on its schema.)"
        )
    return names


def unknown_names(
    schema: type[dy.Schema], names: Iterable[str], rules: Iterable[str]
) -> tuple[list[str], str]:
    """The `names` that are neither one of `rules` nor a column of `schema`, and the end of a
    message about them: the closest known names, then the schema's rules and columns."""
    rules, columns = list(rules), schema.columns()
    unknown = sorted(name for name in names if name not in rules and name not in columns)
    return unknown, (
        f"{closest(unknown, [*rules, *columns])} Rules: {listed(rules)}. "
        f"Columns: {listed(columns)}."
    )


def closest(unknown: Sequence[str], known: Sequence[str]) -> str:
    """ " Did you mean ...?" for the unknown names that resemble known ones, as asset keys
    are suggested."""
    hints = [
        f"{', '.join(map(repr, close))} for {name!r}"
        for name in unknown
        if (close := difflib.get_close_matches(name, known, n=3, cutoff=0.6))
    ]
    return f" Did you mean {'; '.join(hints)}?" if hints else ""


def listed(names: Iterable[str], limit: int = 30, *, separator: str = ", ") -> str:
    """`names` for a message: at most `limit` of them, then how many more."""
    names = list(names)
    shown = separator.join(names[:limit]) or "(none)"
    return f"{shown}{separator}… and {len(names) - limit} more" if len(names) > limit else shown
