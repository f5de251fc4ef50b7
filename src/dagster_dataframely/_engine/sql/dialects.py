"""What each database can express exactly, one class per dialect.

A dialect says how a rule that SQL has no single portable form for is written there (NaN,
byte length, regex search) and which rules it cannot express with Dataframely's verdicts, so
they fall back to polars. sqlglot renders everything else.
"""

from __future__ import annotations

from typing import ClassVar

from sqlglot import exp

from .regex import POSTGRES_ARE, RE2, SNOWFLAKE_ERE, RegexEngine


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
    #: The engine of `REGEXP_MATCHES`.
    regex_engine: ClassVar[RegexEngine] = RE2
    #: The collation a regex match is made under, where the column's may refuse one.
    regex_collation: ClassVar[str | None] = None

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

    def contains(self, value: exp.Expr, pattern: str) -> exp.Expr:
        """`str.contains(pattern)` (a search, not a full match), the pattern written for the
        dialect's regex engine; `NotExact` names the construct the engine reads otherwise."""
        written = self.regex_engine.search_pattern(pattern)
        if self.regex_collation is not None:
            collation = exp.Identifier(this=self.regex_collation, quoted=True)
            value = exp.Collate(this=value, expression=collation)
        return exp.RegexpLike(this=value, expression=exp.Literal.string(written))


class PostgresDialect(Dialect):
    name = "postgres"
    #: Text order follows the database's collation, not bytes.
    binary_string_order = False
    #: `value out of range: overflow` (and `underflow`) for float8.
    float_overflow_raises = True
    timestamp_types: ClassVar[dict[str, str]] = {"us": "TIMESTAMP"}
    regex_engine = POSTGRES_ARE  # `~`
    #: `~` refuses a column of a nondeterministic collation; under "C" it matches code
    #: points, which is all the patterns it is given need.
    regex_collation = "C"

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])

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
    regex_engine = SNOWFLAKE_ERE  # `REGEXP_LIKE`

    def count_where(self, condition: exp.Expr) -> exp.Expr:
        return _count_case(condition)  # no FILTER clause

    def byte_length(self, value: exp.Expr) -> exp.Expr | None:
        return exp.Anonymous(this="OCTET_LENGTH", expressions=[value])  # LENGTH counts characters

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
    regex_engine = RE2  # `REGEXP_CONTAINS`

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
