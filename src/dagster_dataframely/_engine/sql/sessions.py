"""A check's session settings: pinned for its queries, read before and restored after.

A setting of the user's session can change what a query selects or counts (a time zone, how a
date literal is read, whether quoted names ignore case, a cap on a result's rows). A dialect
names the settings it pins (`Dialect.session_settings`) and how to read and set them; here
is what is pinned and what is put back. A setting is pinned only where the session's value
differs, so a session that already has it takes no statement, and only where the server
reports it: a setting the server does not have changes nothing there. A setting the session
set itself is put back by setting it again; one it inherited (from the user, the account or
the default) by unsetting it, so it inherits again. The statements that read and set them
are built here as sqlglot trees, for the dialects to choose from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp

#: A setting's value: text, a flag or a number, written as the literal of its kind.
Value = str | bool | int


@dataclass(frozen=True)
class Current:
    """A setting's value in the user's session, as the database writes it; `own` where the
    session set it itself (else it is inherited, and unset to restore it)."""

    value: str
    own: bool = True


@dataclass(frozen=True)
class Pinning:
    """What a check sets (`pin`) and, after it, what it puts back (`restore`, None: unset)."""

    pin: dict[str, Value]
    restore: dict[str, Value | None]


def pinning(settings: Mapping[str, Value], current: Mapping[str, Current]) -> Pinning:
    """The statements' contents that pin `settings` on a session whose values are `current`
    and restore them after, in reverse order."""
    pin = {
        name: value
        for name, value in settings.items()
        if name in current and current[name].value != text(value)
    }
    restore = {
        name: _typed(current[name].value, pin[name]) if current[name].own else None
        for name in reversed(list(pin))
    }
    return Pinning(pin, restore)


def text(value: Value) -> str:
    """`value` as a database writes it back (`true`, `0`, `UTC`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def literal(value: Value) -> exp.Expr:
    """`value` as the literal of its kind (`FALSE`, `0`, `'UTC'`)."""
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(value)
    return exp.Literal.string(value)


def _typed(written: str, like: Value) -> Value:
    """`written` (a setting's text) as a value of the kind of `like`."""
    if isinstance(like, bool):
        return written.strip().lower() == "true"
    if isinstance(like, int):
        return int(written)
    return written


def set_statement(name: str, value: Value | None) -> exp.Expr:
    """`SET SESSION name = 'value'` (None: `= DEFAULT`), as DuckDB and PostgreSQL take it."""
    written = exp.var("DEFAULT") if value is None else exp.Literal.string(text(value))
    return exp.Set(
        expressions=[
            exp.SetItem(this=exp.EQ(this=exp.column(name), expression=written), kind="SESSION")
        ]
    )


def current_settings(names: list[str]) -> exp.Select:
    """`SELECT current_setting('name') AS "name", ...`: one row of the session's values."""
    return exp.select(
        *(
            exp.alias_(
                exp.Anonymous(this="current_setting", expressions=[exp.Literal.string(name)]),
                name,
                quoted=True,
            )
            for name in names
        )
    )


def alter_session(name: str, value: Value | None) -> exp.Expr:
    """Snowflake's `ALTER SESSION SET name = value` (None: `ALTER SESSION UNSET name`).
    sqlglot releases without an `AlterSession` node read the statement as a command: it
    is written as one there, its name and value still written by sqlglot."""
    item = (
        exp.to_identifier(name)
        if value is None
        else exp.EQ(this=exp.column(name), expression=literal(value))
    )
    if hasattr(exp, "AlterSession"):
        action = exp.AlterSession(expressions=[exp.SetItem(this=item)], unset=value is None)
        return exp.Alter(kind="SESSION", actions=[action])
    verb = "UNSET" if value is None else "SET"
    return exp.Command(this="ALTER", expression=f"SESSION {verb} {item.sql('snowflake')}")
