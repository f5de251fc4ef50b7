"""What a column's profile proposes: declaration options learned from today's rows.

A proposal is written as a `# proposed` comment above the declaration, or, when a person
asks to adopt them (`adopt=True`, `--adopt`), as options of the declaration, each marked on
its line as learned from the data on that day. Either way it is an assumption about the
table that the rows of one day support, never a rule made silently.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._writing.literals import Literal, literal
from ._columns import InferredColumn, Profile


@dataclass(frozen=True)
class Option:
    """One keyword of a declaration (`min=1`), or one entry of its `check=` dict."""

    keyword: str
    value: Literal
    #: The `check=` dict's key this option is the entry of; None for a plain keyword.
    entry: str | None = None

    @property
    def text(self) -> str:
        if self.entry is None:
            return f"{self.keyword}={self.value.text}"
        return f"{self.keyword}={{{_literal(self.entry).text}: {self.value.text}}}"


@dataclass(frozen=True)
class Proposal:
    """Options the profile of `rows` rows supports, and why (`no nulls`, `values 1 to 12`)."""

    options: tuple[Option, ...]
    rows: int
    why: str

    @property
    def comment(self) -> str:
        """`# proposed (12 rows, values 1 to 12): min=1, max=12`, one line however long: a
        proposal is copied into the declaration as it is."""
        rows = f"{self.rows:,} row{'s' if self.rows > 1 else ''}"
        return f"# proposed ({rows}, {self.why}): {', '.join(o.text for o in self.options)}"


def proposals(column: InferredColumn, profile: Profile, *, keyed: bool) -> list[Proposal]:
    """What `profile` suggests that `column`'s declaration does not say. `keyed`: the table
    declares a primary key, or an earlier column is proposed as one, so a column unique and
    never null is proposed `unique=True` (a second key column would only weaken the key)."""
    if profile.rows == 0:
        return []
    found: list[Proposal] = []

    def propose(why: str, *options: Option) -> None:
        found.append(Proposal(options, profile.rows, why))

    never_null = profile.nulls == 0
    if never_null and column.nullable and not column.primary_key:
        propose("no nulls", Option("nullable", _literal(False)))
    if never_null and not column.primary_key and profile.distinct == profile.rows:
        if not keyed:
            propose("unique, never null", Option("primary_key", _literal(True)))
        elif not column.unique and profile.rows > 1:
            propose("unique", Option("unique", _literal(True)))
    # The database's own list of values (an enum type), or a dbt test's: declared already.
    declared = bool({"enum", "accepted_values"} & set(column.checks))
    if profile.values is not None and not declared:
        values = list(profile.values)
        listed = _literal(values)
        is_in = Literal(f"lambda col: col.is_in({listed.text})", listed.imports)
        count = f"{len(values)} value{'s' if len(values) > 1 else ''}"
        propose(count, Option("check", is_in, entry="is_in"))
    elif profile.shortest is not None and profile.longest is not None and not declared:
        low, high = profile.shortest, profile.longest
        propose(
            f"{low} to {high} bytes long",
            Option("min_length", _literal(low)),
            Option("max_length", _literal(high)),
        )
    if profile.nans == 0:
        propose("no NaN", Option("allow_nan", _literal(False)))
    if profile.infinities == 0:
        propose("no infinity", Option("allow_inf", _literal(False)))
    if profile.minimum is not None and profile.maximum is not None:
        low, high = profile.minimum, profile.maximum
        propose(
            f"values {low} to {high}",
            Option("min", _literal(low)),
            Option("max", _literal(high)),
        )
    return found


def adopted(adopt: bool) -> datetime.date | None:
    """The day proposals are adopted on (today, in UTC), None where they are not."""
    return datetime.datetime.now(datetime.timezone.utc).date() if adopt else None


def primary_key(found: Sequence[Proposal]) -> bool:
    """Whether `found` proposes the column as the primary key."""
    return any(option.keyword == "primary_key" for p in found for option in p.options)


def _literal(value: Any) -> Literal:
    try:
        return literal(value)
    except ValueError:  # a value with no literal form is shown as it reads
        return Literal(repr(value), frozenset())
