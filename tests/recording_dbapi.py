"""A DB-API connection that records each query and answers it from a table of fragments: for
a warehouse with no local engine (BigQuery, Snowflake's `SHOW` commands fakesnow lacks), so a
test can assert the SQL sent and what is made of the warehouse's answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: A column of an answer: its name, or (name, type code[, precision, scale]).
Described = str | tuple[Any, ...]
Answer = tuple[list[Described], list[tuple[Any, ...]]]


class Cursor:
    def __init__(self, connection: Recording) -> None:
        self.connection = connection
        self.description: Sequence[tuple[Any, ...]] | None = None
        self.rows: list[tuple[Any, ...]] = []

    def execute(self, sql: str) -> None:
        self.connection.queries.append(sql)
        for fragment, (names, rows) in self.connection.answers.items():
            if fragment in sql:
                self.description = [_described(name) for name in names]
                self.rows = rows
                return
        raise RuntimeError(f"{self.connection.refusal}: {sql[:60]}")

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def close(self) -> None:
        pass


class Recording:
    """Answers each query by the first fragment of `answers` it contains; any other query
    fails with `refusal` (no `rollback`, as BigQuery's connection has none)."""

    def __init__(self, answers: dict[str, Answer], refusal: str = "404 Not found") -> None:
        self.answers = answers
        self.refusal = refusal
        self.queries: list[str] = []

    def cursor(self) -> Cursor:
        return Cursor(self)


def _described(column: Described) -> tuple[Any, ...]:
    name, code, precision, scale = (
        (*column, None, None)[:4]
        if isinstance(column, tuple)
        else (
            column,
            "STRING",
            None,
            None,
        )
    )
    return (name, code, None, None, precision, scale, None)
