"""Trino's (and Athena's) regexes, and Redshift's refusal of all of them.

No Trino runs in tests. Trino's `regexp_like` reads Java's pattern syntax through joni (or
RE2J), so a pattern is written only with what both libraries and `java.util.regex` read
alike: ASCII literals and classes (control characters as `\\xHH`, joni's Java syntax has no
`\\x{..}`), groups, alternation, counts, and `\\A`/`\\z` at the ends (joni's `^` and `$`
follow Ruby's line rules). The table pins what each pattern becomes; the property runs
every written pattern through `java.util.regex` (Spark's Java runtime) against polars,
which catches a pattern written wrongly for Java's syntax, though not a way joni itself
differs from Java's engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from spark import java
from sqlglot import exp
from test_sql_regex_parity import STRINGS, _patterns

from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely._engine.sql.exactness import NotExact

VALUE = exp.column("v", quoted=True)


def _written(dialect: str, pattern: str) -> str:
    """The pattern `dialect` is given for `str.contains(pattern)`, or why it falls back."""
    try:
        return DIALECTS[dialect].regex_engine.search_pattern(pattern)
    except NotExact as declined:
        return f"polars ({declined.reason})"


@pytest.mark.parametrize(
    ("pattern", "trino"),
    [
        ("^[A-Z]{3}$", r"\A[A-Z]{3}\z"),
        ("a.c", r"a[^\x0A]c"),
        ("(?s)a.c", r"a(?:[^\x0A]|\x0A)c"),
        ("a\tb|c+", r"a\x09b|c+"),
        ("[^a-z]+?", "[^a-z]+"),
        ("[&]", r"[\&]"),
        ("é", "polars (regex 'é': a character past ASCII in Trino)"),
        ("[é]", "polars (regex [...]: characters past ASCII in Trino)"),
        ("a^b", "polars (regex ^ or $ inside the pattern: Trino reads it otherwise)"),
        (r"\d", "polars (regex \\d: Unicode digits in polars, its library's in Trino)"),
        ("(?i)k", "polars (regex (?i): Unicode case folding in polars, not in Trino)"),
    ],
)
def test_trino_gets_the_pattern_joni_and_re2j_read_alike_or_the_rule_falls_back(
    pattern: str, trino: str
) -> None:
    assert _written("trino", pattern) == trino
    assert _written("athena", pattern) == trino
    if not trino.startswith("polars ("):
        sql = DIALECTS["trino"].contains(VALUE, pattern).sql(dialect="trino")
        assert sql == f"REGEXP_LIKE(\"v\", '{trino}')"


def test_redshift_keeps_every_regex_in_polars_saying_why() -> None:
    assert _written("redshift", "^[A-Z]{3}$") == (
        "polars (regex: Redshift's POSIX engine is not documented construct by construct)"
    )


@pytest.fixture(scope="module")
def java_finds() -> Iterator[Callable[..., list[bool]]]:
    """`java_finds(pattern, values)`: which `values` `java.util.regex` finds `pattern` in, asked
    of one JVM for the module through py4j's gateway (pyspark's bridge to Java)."""
    from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

    gateway = JavaGateway(
        gateway_parameters=GatewayParameters(
            port=launch_gateway(java_path=java(), die_on_exit=True)
        )
    )
    compile_pattern = gateway.jvm.java.util.regex.Pattern.compile

    def finds(pattern: str, values: list[str]) -> list[bool]:
        compiled = compile_pattern(pattern)
        return [bool(compiled.matcher(value).find()) for value in values]

    yield finds
    gateway.shutdown()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pattern=_patterns(), values=STRINGS)
def test_a_pattern_written_for_trino_finds_in_javas_syntax_what_polars_finds(
    java_finds: Callable[[str, list[str]], list[bool]], pattern: str, values: list[str]
) -> None:
    written = _written("trino", pattern)
    if written.startswith("polars ("):
        return
    expected = pl.Series(values, dtype=pl.String).str.contains(pattern).to_list()
    assert java_finds(written, values) == expected
