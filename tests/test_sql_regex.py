"""A `regex` rule is pushed down by parsing its pattern as polars does (Rust's `regex` syntax)
and writing it for the database's engine where both read it alike; anything else falls back
to polars with the construct named, in `dy_engine` and the step log, never a failed step.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from pathlib import Path

import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource
from hypothesis import given, settings
from hypothesis import strategies as st
from postgres import PostgresResource, PostgresServer
from sqlglot import exp
from test_pushdown import _outcomes, run_payments_checks

import dagster_dataframely as dd
from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely._engine.sql.exactness import NotExact
from dagster_dataframely._engine.sql.regex import RegexSyntaxError, parse
from dagster_dataframely._engine.sql.regex.tree import (
    Alternation,
    AsciiClass,
    Assertion,
    Bracketed,
    Concat,
    Flags,
    Group,
    Literal,
    Repetition,
    SetOperation,
)

EMAIL = r"^[a-z0-9.]+@[a-z]+\.[a-z]+$"
VALUE = exp.column("v", quoted=True)


def _pushed(dialect: str, pattern: str) -> str:
    """The SQL of `str.contains(pattern)` on column `v`, or the reason it falls back."""
    try:
        return DIALECTS[dialect].contains(VALUE, pattern).sql(dialect=dialect)
    except NotExact as declined:
        return f"polars ({declined.reason})"


# The parser


def test_flags_hold_to_the_end_of_their_group_across_alternatives() -> None:
    folded = Flags(case_insensitive=True)
    assert parse("a(?i)b|c") == Alternation(
        (Concat((Literal("a", Flags()), Literal("b", folded))), Literal("c", folded))
    )
    assert parse("(?i:d)e") == Concat((Group(Literal("d", folded)), Literal("e", Flags())))


def test_classes_keep_their_literal_brackets_dashes_and_set_operations() -> None:
    assert parse("[]a-]") == Bracketed(("]", "a", "-"), negated=False, flags=Flags())
    assert parse("[^-a]") == Bracketed(("-", "a"), negated=True, flags=Flags())
    assert parse("[[:alpha:]]").items == (AsciiClass("alpha", False),)  # type: ignore[union-attr]
    # Not a POSIX class name: a nested class of its characters.
    assert isinstance(parse("[[:alpah:]]").items[0], Bracketed)  # type: ignore[union-attr]
    # Set operations associate to the left.
    ops = parse("[a-z&&b-y--c]").items  # type: ignore[union-attr]
    assert isinstance(ops, SetOperation) and ops.operator == "--"
    assert isinstance(ops.lhs, SetOperation) and ops.lhs.operator == "&&"


def test_word_boundaries_repetitions_and_lazy_operators() -> None:
    assert parse(r"\b{start}") == Assertion("word_start", r"\b{start}", Flags())
    assert parse(r"\b{2}") == Repetition(Assertion("word_boundary", r"\b", Flags()), 2, 2, True)
    assert parse("a{2,}?") == Repetition(Literal("a", Flags()), 2, None, False)
    assert parse("a{ 2 , 3 }") == Repetition(Literal("a", Flags()), 2, 3, True)
    assert parse(r"\x{e9}\u00e9\%") == Concat(
        (Literal("é", Flags()), Literal("é", Flags()), Literal("%", Flags()))
    )


@pytest.mark.parametrize(
    "pattern",
    ["(", ")", "*a", "a{2,1}", "a{,3}", "(?<=a)b", r"\1", "[z-a]", "[a", r"\e", "(?)",
     "(?i-)", "(?ii)", r"\x{D800}", r"[\b]", r"[a-\d]", "(?P<n>a)(?P<n>b)", "(?x) a"],
)  # fmt: skip
def test_what_the_parser_cannot_read_is_a_syntax_error_not_a_crash(pattern: str) -> None:
    with pytest.raises(RegexSyntaxError):
        parse(pattern)


_REGEX_TEXT = st.text(alphabet="ab.-^$|()[]{}*+?\\:&~<>P=iswdx01,9 ", max_size=14)


@settings(max_examples=300, deadline=None)
@given(pattern=_REGEX_TEXT)
def test_no_database_is_given_a_pattern_polars_refuses(pattern: str) -> None:
    pushed = {name: _pushed(name, pattern) for name in DIALECTS}  # never raises but NotExact
    try:
        pl.Series(["probe"]).str.contains(pattern)
    except pl.exceptions.ComputeError:
        assert all(sql.startswith("polars (") for sql in pushed.values())


# What each engine is given, and why not


def test_the_email_pattern_runs_in_postgres_and_duckdb_written_for_each() -> None:
    assert _pushed("duckdb", EMAIL) == r"""REGEXP_MATCHES("v", '^[\.0-9a-z]+@[a-z]+\.[a-z]+$')"""
    # Without a backslash: standard_conforming_strings cannot change what it says.
    assert _pushed("postgres", EMAIL) == """"v" COLLATE "C" ~ '^[.0-9a-z]+@[a-z]+[.][a-z]+$'"""
    assert _pushed("bigquery", EMAIL).startswith("REGEXP_CONTAINS(`v`, '^[\\\\.0-9a-z]+@")


@pytest.mark.parametrize(
    ("pattern", "duckdb", "postgres"),
    [
        ("^[A-Z]{3}$", "^[A-Z]{3}$", "^[A-Z]{3}$"),
        # `.` is no newline in polars and RE2; an ARE's `.` is any character.
        ("a.c", "a.c", "a[^[.newline.]]c"),
        ("(?s)a.c", "a(?s:.)c", "a.c"),
        ("[[:alpha:]&&[^aeiou]]", "[A-Zb-df-hj-np-tv-z]", "[A-Zb-df-hj-np-tv-z]"),
        (r"[\^\]\-\\]", r"[\-\\-\^]", "[[.hyphen.][.backslash.]-[.circumflex.]]"),
        ("(?P<n>ab)+?|c**", "(?:ab)+|(?:c*)*", "(?:ab)+|(?:c*)*"),
        (r"\$\{x\}-", r"\$\{x\}-", "[$][{]x[}]-"),
        (r"\Aa\z", "^a$", "^a$"),
        # DuckDB's RE2 finds no match for `^^` nor `$$`; PostgreSQL reads them as polars.
        ("^^a|b$$", "polars (regex ^ or $ inside the pattern: RE2 reads it otherwise)", "^^a|b$$"),
        ("é", r"\x{E9}", "polars (regex 'é': a character past ASCII in PostgreSQL)"),
        (
            "a{256}",
            "a{256}",
            "polars (regex {256} over PostgreSQL's repetition limit of 255)",
        ),
        (
            "a{1001}",
            "polars (regex {1001} over RE2's repetition limit of 1000)",
            "polars (regex {1001} over PostgreSQL's repetition limit of 255)",
        ),
        (
            "(?:a{100}){11}",
            "polars (regex nested counts over RE2's repetition limit of 1000)",
            "(?:a{100}){11}",
        ),
        (
            "(?:(?:a{200}){200})",
            "polars (regex nested counts over RE2's repetition limit of 1000)",
            "polars (regex over PostgreSQL's size limit once its counts expand)",
        ),
        (
            r"\<ann",
            "polars (regex \\<: a word start in polars, a literal < in RE2)",
            "polars (regex \\<: a word start in polars, a literal < in PostgreSQL)",
        ),
        (
            r"\d+",
            "polars (regex \\d: Unicode digits in polars, ASCII in RE2)",
            "polars (regex \\d: Unicode digits in polars, the locale's in PostgreSQL)",
        ),
        (
            r"\bx",
            "polars (regex \\b: a Unicode word boundary in polars, not in RE2)",
            "polars (regex \\b: a Unicode word boundary in polars, not in PostgreSQL)",
        ),
        (
            "(?i)k",
            "polars (regex (?i): Unicode case folding in polars, not in RE2)",
            "polars (regex (?i): Unicode case folding in polars, not in PostgreSQL)",
        ),
        (
            "(?m)^a",
            "polars (regex (?m) ^: line anchors differ in RE2)",
            "polars (regex (?m) ^: line anchors differ in PostgreSQL)",
        ),
        (
            r"\p{Greek}",
            "polars (regex \\p{Greek}: Unicode tables differ between polars and RE2)",
            "polars (regex \\p{Greek}: Unicode tables differ between polars and PostgreSQL)",
        ),
        (
            "(?<!a)b",
            "polars (regex not read: look-around is not supported at position 4)",
            "polars (regex not read: look-around is not supported at position 4)",
        ),
    ],
)
def test_each_engine_gets_the_pattern_it_reads_alike_or_the_rule_falls_back(
    pattern: str, duckdb: str, postgres: str
) -> None:
    def sql(dialect: str, written: str) -> str:
        if written.startswith("polars ("):
            return written
        return DIALECTS[dialect].contains(VALUE, pattern).sql(dialect=dialect)

    assert _pushed("duckdb", pattern) == sql("duckdb", duckdb)
    assert _pushed("postgres", pattern) == sql("postgres", postgres)
    if not duckdb.startswith("polars ("):
        assert DIALECTS["duckdb"].regex_engine.search_pattern(pattern) == duckdb
    if not postgres.startswith("polars ("):
        assert DIALECTS["postgres"].regex_engine.search_pattern(pattern) == postgres
        assert "\\" not in postgres


def test_snowflake_keeps_every_regex_in_polars_saying_why() -> None:
    assert _pushed("snowflake", "^[A-Z]{3}$") == (
        "polars (regex: Snowflake's REGEXP_LIKE matches the whole string with POSIX EREs)"
    )


# In real runs


class Contacts(dy.Schema):
    contact_id = dy.Int64(primary_key=True)
    email = dy.String(regex=EMAIL)
    name = dy.String(nullable=True, regex=r"\<ann")  # `\<` is a word start in polars only
    code = dy.String(nullable=True, regex="^(?:x{256})?$")  # past PostgreSQL's 255

    @dy.rule()
    def named_contacts_have_codes(cls) -> pl.Expr:
        """A named contact has a code."""
        return pl.col("name").is_null() | pl.col("code").is_not_null()


CONTACTS = pl.DataFrame(
    {
        "contact_id": [1, 2, 3, 4, 5],
        "email": ["ann@shop.com", "Bob@shop.com", "c.d@shop.c0m", "e@f.gh", "x@y.z\n"],
        "name": ["joann", "ann lee", None, "lee,ann", "hannah"],
        "code": ["x" * 256, "", None, "x" * 255, "x" * 256],
    }
)
#: What Dataframely counts on those rows.
COUNTS = {
    f"dy_rule__{name.replace('|', '__')}": count
    for name, count in Contacts.filter(CONTACTS)[1].counts().items()
}


def _checked(source: dd.sources.Source, resource: object) -> dict[str, tuple[int, int, str]]:
    _, result = run_payments_checks(Contacts, source, {"warehouse": resource})
    outcomes = _outcomes(result)
    assert {name: failed for name, (failed, _, _) in outcomes.items()} == {
        name: COUNTS.get(name, 0) for name in outcomes
    }
    return outcomes


def test_regex_rules_run_where_the_engine_reads_them_as_polars_does(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    with postgres.connect() as connection:
        connection.execute(
            "CREATE SCHEMA IF NOT EXISTS crm; DROP TABLE IF EXISTS crm.contacts;"
            "CREATE COLLATION IF NOT EXISTS crm.folded"
            " (provider = icu, locale = 'und-u-ks-level2', deterministic = false);"
            # `~` refuses a nondeterministic collation: the pattern is matched under "C".
            "CREATE TABLE crm.contacts"
            " (contact_id bigint, email text COLLATE crm.folded, name text, code text)"
        )
        with connection.cursor().copy("COPY crm.contacts FROM STDIN") as copy:
            for row in CONTACTS.iter_rows():
                copy.write_row(row)
    in_postgres = _checked(
        dd.sources.SQLTableSource(
            resource_key="warehouse", dialect="postgres", table="crm.contacts"
        ),
        PostgresResource(conninfo=postgres.conninfo),
    )
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.register("frame", CONTACTS.to_arrow())
        connection.execute("CREATE SCHEMA crm; CREATE TABLE crm.contacts AS SELECT * FROM frame")
    in_duckdb = _checked(
        dd.sources.DuckDBTableSource(resource_key="warehouse", table="crm.contacts"),
        DuckDBResource(database=str(path)),
    )

    assert COUNTS["dy_rule__email__regex"] == 3  # no upper case, no digit in the domain
    assert in_postgres["dy_rule__email__regex"][2] == "postgres"
    assert in_duckdb["dy_rule__email__regex"][2] == "duckdb"
    assert in_postgres["dy_rule__code__regex"][2] == (
        "polars (regex {256} over PostgreSQL's repetition limit of 255)"
    )
    assert in_duckdb["dy_rule__code__regex"][2] == "duckdb"
    for engines in (in_postgres, in_duckdb):
        assert engines["dy_rule__name__regex"][2].startswith("polars (regex \\<: a word start")
