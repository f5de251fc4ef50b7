"""Trino's (and Athena's) regexes, and Redshift's refusal of all of them.

No Trino runs in tests. Trino's `regexp_like` reads Java's pattern syntax through joni (or
RE2J), so a pattern is written only with what both libraries and `java.util.regex` read
alike: ASCII literals and classes (control characters as `\\xHH`, joni's Java syntax has no
`\\x{..}`), groups, alternation, counts, and `\\A`/`\\z` at the ends (joni's `^` and `$`
follow Ruby's line rules). The table pins what each pattern becomes; the property runs
every written pattern through `java.util.regex` (Java 17, as for Spark) against polars,
which catches a pattern written wrongly for Java's syntax, though not a way joni itself
differs from Java's engine.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
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


#: A line protocol: each request is a pattern and values in hex UTF-8, tab-separated; the
#: answer is one `1`/`0` per value, whether `find()` matches it.
_JAVA = """
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.regex.Pattern;

public class Find {
    static String text(String hex) {
        return new String(HexFormat.of().parseHex(hex), StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        PrintStream out = new PrintStream(System.out, true);
        for (String line; (line = in.readLine()) != null; ) {
            String[] parts = line.split("\\t", -1);
            Pattern pattern = Pattern.compile(text(parts[0]));
            StringBuilder found = new StringBuilder();
            for (int i = 1; i < parts.length; i++) {
                found.append(pattern.matcher(text(parts[i])).find() ? '1' : '0');
            }
            out.println(found);
        }
    }
}
"""


@pytest.fixture(scope="module")
def java_finds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., list[bool]]]:
    """`java_finds(pattern, values)`: which `values` `java.util.regex` finds `pattern` in,
    from one JVM for the module (Java 17 runs the source file as it is)."""
    source = Path(tmp_path_factory.mktemp("java")) / "Find.java"
    source.write_text(_JAVA)
    process = subprocess.Popen(
        ["java", str(source)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdin is not None and process.stdout is not None

    def finds(pattern: str, values: list[str]) -> list[bool]:
        fields = [item.encode().hex() for item in (pattern, *values)]
        process.stdin.write("\t".join(fields) + "\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        return [c == "1" for c in process.stdout.readline().strip()]  # type: ignore[union-attr]

    yield finds
    process.stdin.close()
    process.wait(timeout=30)


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
