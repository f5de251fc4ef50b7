"""Property: a regex the SQL backend pushes down finds, in DuckDB and in a real PostgreSQL
server, exactly the strings polars' `str.contains` finds.

Patterns are generated from the Rust `regex` syntax polars reads, constructs the databases
lack included (`\\<`, `\\b{start}`, `\\p{..}`, `(?i)`, set operations, lazy and nested
repetitions, counts past the engines' limits); strings from an alphabet where the engines
could disagree (newlines, `\\r`, non-ASCII letters and digits, the Kelvin sign, brackets and
backslashes). For each pattern a dialect pushes, its count over the strings must be polars';
a pattern polars refuses must be pushed nowhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from postgres import PostgresServer
from sqlglot import exp

from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely._engine.sql.exactness import NotExact

VALUE = exp.column("v", quoted=True)

LITERALS = [
    "a", "b", "c", "A", "k", "1", " ", "_", "@", "%", ",", "é", "]", "}", "-", "#", "&", "~",
    r"\.", r"\-", r"\^", r"\\", r"\]", r"\[", r"\$", r"\{", r"\*", r"\n", r"\r", r"\t", r"\%",
    r"\ ", r"\x41", r"\x{e9}", r"\u00e9", r"\x{212A}", r"\v", r"\f", r"\x00",
]  # fmt: skip
CLASSES = [
    ".", "[abc]", "[^a]", "[a-c]", r"[^\n]", "[]a]", "[-a]", "[a-]", "[^-]", "[[:alpha:]]",
    "[[:^alpha:]]", "[[:punct:]]", "[[:space:]]", "[[:word:]]", "[a-z&&[^aeiou]]",
    "[a-c--b]", "[a-c~~b-d]", r"[\^\]\-\\]", "[^[:ascii:]]", "[é-ü]", r"[\x00-\x{10FFFF}]",
    r"[^\x00-\x{10FFFF}]", r"[\d]", "[K]", r"[\n\r]", "[^]]", "[[a][b]]", r"[\x{80}-\x{10FFFF}]",
    r"[\t-\r]", r"[^\x00]", r"[\x{1F600}-\x{1F64F}]",
    r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", r"\pL", r"\p{Greek}", r"\PN",
]  # fmt: skip
ASSERTIONS = [
    "^", "$", r"\A", r"\z", r"\b", r"\B", r"\<", r"\>", r"\b{start}", r"\b{end-half}",
]  # fmt: skip
REPEATS = [
    "*", "+", "?", "{2}", "{1,3}", "{0,}", "{2,}", "{0}", "*?", "+?", "??", "{1,2}?", "{256}",
    "{1001}", "{0,256}",
]  # fmt: skip
FLAGS = ["(?i:", "(?s:", "(?m:", "(?U:", "(?R:", "(?-u:", "(?is:", "(?s-i:"]


def _patterns() -> st.SearchStrategy[str]:
    atom = st.sampled_from(LITERALS + CLASSES + ASSERTIONS)

    def compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.lists(inner, min_size=2, max_size=4).map("".join),
            st.lists(inner | st.just(""), min_size=2, max_size=3).map(
                lambda branches: "(" + "|".join(branches) + ")"
            ),
            inner.map(lambda x: f"(?:{x})"),
            st.tuples(st.sampled_from(FLAGS), inner).map(lambda t: t[0] + t[1] + ")"),
            st.tuples(inner, st.sampled_from(REPEATS)).map("".join),
        )

    return st.recursive(atom, compound, max_leaves=8)


#: With the Kelvin sign, the long s and an Arabic-Indic digit, which Unicode classes and
#: case folding reach, and a character past the BMP (four bytes in UTF-8).
STRINGS = st.lists(
    st.text(alphabet="abcAk1 _.-é\t\n\v\f\r]\\^%\u212a\u017f\u0663\U0001f600", max_size=6),
    max_size=10,
)


@pytest.fixture(scope="module")
def duckdb_count() -> Iterator[Callable[[exp.Expr, list[str]], int]]:
    connection = duckdb.connect()

    def count(condition: exp.Expr, strings: list[str]) -> int:
        connection.execute(
            "CREATE OR REPLACE TABLE strings AS SELECT unnest(?::VARCHAR[]) AS v", [strings]
        )
        return _count(connection.execute(_query("duckdb", condition)).fetchone())

    yield count
    connection.close()


@pytest.fixture(scope="module")
def postgres_count(postgres: PostgresServer) -> Iterator[Callable[[exp.Expr, list[str]], int]]:
    with postgres.connect() as connection:
        connection.execute("CREATE TEMPORARY TABLE strings (v text)")

        def count(condition: exp.Expr, strings: list[str]) -> int:
            connection.execute("TRUNCATE strings")
            with connection.cursor().copy("COPY strings FROM STDIN") as copy:
                for string in strings:
                    copy.write_row((string,))
            return _count(connection.execute(_query("postgres", condition)).fetchone())

        yield count


def _query(dialect: str, condition: exp.Expr) -> str:
    counted = DIALECTS[dialect].count_where(condition)
    return exp.select(counted).from_("strings").sql(dialect=dialect)


def _count(row: tuple[object, ...] | None) -> int:
    assert row is not None
    return int(row[0])  # type: ignore[call-overload]


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@example(pattern=r"^[a-z0-9.]+@[a-z]+\.[a-z]+$", strings=["a.b@cd.ef", "A@b.c", "a@b.c\n"])
@example(pattern="a.c|^.$", strings=["a\nc", "abc", "\n", "é", "\r"])
@example(pattern=r"[^a]\^\\[\]-]{2}$", strings=["b^\\]-", "\n^\\-]", "a^\\]]"])
@example(pattern="(?s:.)$|[[:punct:]&&[^.]]+", strings=["\n", ".", "%", "a"])
@example(pattern="(?:ab?){2,3}?$", strings=["abab", "aab", "ba", ""])
@example(pattern=r"(?R:.)\z", strings=["a\r", "ab", "\n"])
@example(pattern="", strings=["", "a"])
@given(pattern=_patterns(), strings=STRINGS)
def test_pushed_regexes_find_what_polars_finds(
    duckdb_count: Callable[[exp.Expr, list[str]], int],
    postgres_count: Callable[[exp.Expr, list[str]], int],
    pattern: str,
    strings: list[str],
) -> None:
    try:
        pl.Series(["probe"]).str.contains(pattern)
    except pl.exceptions.ComputeError:
        for dialect in DIALECTS.values():
            with pytest.raises(NotExact):
                dialect.contains(VALUE, pattern)
        return
    expected = int(pl.Series(strings, dtype=pl.String).str.contains(pattern).sum())
    for name, count in (("duckdb", duckdb_count), ("postgres", postgres_count)):
        try:
            condition = DIALECTS[name].contains(VALUE, pattern)
        except NotExact:
            continue
        event(f"pushed to {name}")
        assert count(condition, strings) == expected, (name, condition.sql(dialect=name))
