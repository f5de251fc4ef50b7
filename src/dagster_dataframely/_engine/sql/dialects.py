"""What each database can express exactly, one class per dialect.

A dialect says how a rule that SQL has no single portable form for is written there (NaN,
byte length, regex search) and which rules it cannot express with Dataframely's verdicts, so
they fall back to polars. sqlglot renders everything else.
"""

from __future__ import annotations

import re
from typing import ClassVar

from sqlglot import exp

# A pattern of this subset means the same to Rust's `regex` (polars), RE2 (DuckDB, BigQuery)
# and, without `.`, PostgreSQL's AREs: ASCII literals and escaped punctuation, `.`, classes of
# ASCII characters and ranges, groups, alternation, anchors and bounded repetition. Excluded,
# because the engines disagree: `\d \w \s \b` (Unicode in Rust, ASCII in RE2), flags `(?...)`,
# nested classes and their set operations (`[[`, `&&`, `--`, `~~`), POSIX classes, `{,n}`
# and every non-ASCII character.
_PORTABLE_REGEX = re.compile(r"(?:[ -~](?<!\\)|\\[!-/:-@\[-`{-~])*", re.ASCII)
_CLASS_OPERATORS = ("&&", "--", "~~", "[:", "[[", "(?", "{,")


def portable_regex(pattern: str) -> bool:
    """Whether `pattern` lies in the subset Rust's regex and RE2 read alike."""
    if not pattern.isascii() or any(op in pattern for op in _CLASS_OPERATORS):
        return False
    return _PORTABLE_REGEX.fullmatch(_strip_escapes(pattern)) is not None


def _strip_escapes(pattern: str) -> str:
    """`pattern` with each escaped punctuation character replaced by `_`, so that only escapes
    of letters and digits (`\\d`, `\\1`) remain to be refused."""
    return re.sub(r"\\[!-/:-@\[-`{-~]", "_", pattern)


class Dialect:
    """DuckDB, the reference: its float order and string comparisons are polars' own."""

    name: ClassVar[str] = "duckdb"
    #: NaN sorts above every number and equals itself, as in polars.
    nan_is_largest: ClassVar[bool] = True
    #: String `<`, `>` compare bytes, as in polars (no collation).
    binary_string_order: ClassVar[bool] = True
    #: A float cast to a `DECIMAL` rounds to its scale as polars' cast does, within the
    #: digits the float holds (`read_dtypes="cast"`).
    float_to_decimal: ClassVar[bool] = True
    #: A float `+ - *` that overflows (or a product that underflows to zero) raises instead
    #: of giving ±inf (0) as polars does: DuckDB returns them.
    float_overflow_raises: ClassVar[bool] = False
    #: The wall-clock timestamp type of each polars time unit the database has.
    timestamp_types: ClassVar[dict[str, str]] = {
        "ms": "TIMESTAMP_MS",
        "us": "TIMESTAMP",
        "ns": "TIMESTAMP_NS",
    }

    def naive_timestamp(self, unit: str) -> exp.DataType | None:
        """The type of a timestamp without zone in `unit`, None where the database has none."""
        name = self.timestamp_types.get(unit)
        return None if name is None else exp.DataType.build(name, dialect=self.name)

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        """The UTF-8 length in bytes of a string, as `str.len_bytes()`; None if inexpressible."""
        return exp.Anonymous(this="STRLEN", expressions=[value])

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        """The number of rows where `condition` is true (not false, not null)."""
        return exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=condition))

    def is_nan(self, value: exp.Expr) -> exp.Expr:
        return exp.EQ(this=value, expression=_float("NaN"))

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        """An aggregate: the list of the `n` smallest `value`s (bounded state, so a sample
        rides along a count query), or None where the database has none."""
        return exp.Anonymous(this="MIN", expressions=[value, exp.Literal.number(n)])

    def contains(self, value: exp.Expr, pattern: str) -> exp.Expr | None:
        """`str.contains(pattern)` (a search, not a full match); None if inexpressible."""
        if not portable_regex(pattern):
            return None
        return exp.RegexpLike(this=value, expression=exp.Literal.string(pattern))


class PostgresDialect(Dialect):
    name = "postgres"
    #: Text order follows the database's collation, not bytes.
    binary_string_order = False
    #: `value out of range: overflow` (and `underflow`) for float8.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {"us": "TIMESTAMP"}

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])

    def contains(self, value: exp.Expr, pattern: str) -> exp.Expr | None:
        # An ARE's `.` (and a negated class) matches a newline, Rust's `.` does not.
        if "." in _strip_escapes(pattern):
            return None
        return super().contains(value, pattern)

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


class SnowflakeDialect(Dialect):
    """NaN sorts above every number and equals itself, as in polars; strings compare by the
    column's collation, if it has one."""

    name = "snowflake"
    binary_string_order = False
    #: How its float-to-NUMBER cast rounds is not known to be polars' way: such casts stay
    #: in polars, as do its timestamp unit changes.
    float_to_decimal = False
    #: Not known to return ±inf on overflow (fakesnow runs DuckDB): assumed to raise.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {}

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        return _count_case(condition)  # no FILTER clause

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])  # LENGTH counts characters

    def contains(self, value: exp.Expr, pattern: str) -> exp.Expr | None:
        return None  # REGEXP_LIKE matches the whole string and reads POSIX EREs

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


class BigQueryDialect(Dialect):
    name = "bigquery"
    #: NaN compares false with every value, itself included (IEEE 754).
    nan_is_largest = False
    float_to_decimal = False
    #: Its SQL (ZetaSQL) reports a floating point overflow as an error.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {}

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="BYTE_LENGTH", expressions=[value])

    def is_nan(self, value: exp.Expr) -> exp.Expr:
        return exp.Anonymous(this="IS_NAN", expressions=[value])

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        return _count_case(condition)  # no FILTER clause

    def smallest(self, value: exp.Expr, n: int) -> exp.Expr | None:
        return None


DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect
    for dialect in (Dialect(), PostgresDialect(), SnowflakeDialect(), BigQueryDialect())
}


def _count_case(condition: exp.Expr) -> exp.Expr:
    """`COUNT(CASE WHEN condition THEN 1 END)`: `count_where` in every SQL dialect."""
    return exp.Count(this=exp.Case(ifs=[exp.If(this=condition, true=exp.Literal.number(1))]))


def _float(text: str) -> exp.Expr:
    return exp.cast(exp.Literal.string(text), exp.DataType.build("DOUBLE"))


def infinite(value: exp.Expr) -> exp.Expr:
    """`value` is +inf or -inf, in every dialect (NaN is neither)."""
    return exp.In(this=value, expressions=[_float("inf"), _float("-inf")])
