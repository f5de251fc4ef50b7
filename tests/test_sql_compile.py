"""The SQL compiler without a database: what each dialect pushes down and what falls back,
the SQL each renders, and the polars expression tree the translator reads (regexes:
test_sql_regex.py)."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest
import sqlglot
from sqlglot import exp
from test_pushdown_parity import SCHEMA, Everything
from test_read_dtypes import BOUNDARIES, Boundaries

from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.read_dtypes import Casts
from dagster_dataframely._engine.sql.backend import SQLTable, compile_rules
from dagster_dataframely._engine.sql.casts import cast_relation, compile_casts
from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely._engine.sql.expressions import translate
from dagster_dataframely.sources._sql_query import polars_dtype, relation

DTYPES = pl.Schema(SCHEMA)
MIXED = pl.Schema(
    {"a": pl.Int64, "b": pl.String, "f": pl.Float32, "d": pl.Decimal(10, 2), "t": pl.Datetime()}
)
#: Per dialect, the rules of `Everything` left to polars; the docs page lists the same.
#: `levelled_codes` adds 1 to an Int16, which wraps in polars at 32767; `known_refs` multiplies
#: a float, which PostgreSQL, Snowflake and BigQuery may raise on (overflow, underflow).
FALLBACKS = {
    "duckdb": {"digits|regex", "levelled_codes"},
    "postgres": {"digits|regex", "levelled_codes", "known_refs"},
    "snowflake": {"digits|regex", "code|regex", "levelled_codes", "known_refs"},
    # NaN compares false in BigQuery: custom rules over float columns stay in polars.
    "bigquery": {"digits|regex", "amount|check__small", "levelled_codes", "known_refs"},
    # A float product overflows to infinity and underflows to zero in Spark, as in polars.
    "spark": {"digits|regex", "levelled_codes"},
    "databricks": {"digits|regex", "levelled_codes"},
    # Redshift documents no NaN semantics (every float rule stays in polars) and its POSIX
    # regex engine only in outline; its text rules fall back on the catalog's facts
    # (trailing blanks), which a compile without a database does not have.
    "redshift": {
        "digits|regex",
        "code|regex",
        "levelled_codes",
        "known_refs",
        "amount|check__small",
        "amount|min",
        "amount|max_exclusive",
        "amount|inf",
        "amount|nan",
        "ratio|min_exclusive",
        "ratio|max",
        "ratio|inf",
    },
    # NaN compares false in Trino (and Athena), as in BigQuery.
    "trino": {"digits|regex", "amount|check__small", "levelled_codes", "known_refs"},
    "athena": {"digits|regex", "amount|check__small", "levelled_codes", "known_refs"},
}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_each_dialect_pushes_down_all_but_its_listed_fallbacks(dialect: str) -> None:
    catalogue = rules(Everything)
    compiled = compile_rules(catalogue, DTYPES, DIALECTS[dialect]).conditions
    assert {rule.name for rule in catalogue} - set(compiled) == FALLBACKS[dialect]


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_each_dialect_renders_one_count_query_it_parses_back(dialect: str) -> None:
    catalogue = rules(Everything)
    table = SQLTable.of(exp.select(exp.Star()).from_("payments"), dialect=dialect, run=print)
    compiled = compile_rules(catalogue, DTYPES, table.dialect).conditions
    pushed = [rule for rule in catalogue if rule.name in compiled]
    by_row = [rule for rule in pushed if rule.distinct_over is None]

    sql = table.sql(table.counts(by_row, compiled))
    keys = [rule.distinct_over for rule in pushed if rule.distinct_over]
    keyed = [table.sql(table.head_query(key, 6)) for key in keys]
    # The first key's grouping, sent with the counts in one query.
    keyed += [table.sql(table.counts_with_head(table.counts(by_row, compiled), keys[0], 6))]

    parsed = sqlglot.parse_one(sql, read=dialect)
    assert isinstance(parsed, exp.Select)
    assert len(parsed.expressions) == len(by_row) + 1  # the row count, then one per rule
    for grouping in keyed:  # a key rule: its grouping query, apart
        assert isinstance(sqlglot.parse_one(grouping, read=dialect), exp.Select)


#: Per dialect, the casts of `read_dtypes="cast"` left to polars; the docs page lists the same.
CAST_FALLBACKS = {
    "duckdb": set(),
    "postgres": {"finer_unit", "coarser_unit"},  # no nanoseconds
    # Float-to-NUMBER rounding and timestamp types not known to be polars'.
    "snowflake": {
        "float_decimal",
        "float32_decimal",
        "datetime_date",
        "finer_unit",
        "coarser_unit",
    },
    "bigquery": {"float_decimal", "float32_decimal", "datetime_date", "finer_unit", "coarser_unit"},
    # Microseconds only; its double-to-DECIMAL rounding is not known to be polars'.
    "spark": {"float_decimal", "float32_decimal", "finer_unit", "coarser_unit"},
    "databricks": {"float_decimal", "float32_decimal", "finer_unit", "coarser_unit"},
    # Rounding of a float to DECIMAL and of a timestamp to a coarser unit not known to be
    # polars' (Trino rounds a timestamp where polars truncates).
    **{
        dialect: {"float_decimal", "float32_decimal", "datetime_date", "finer_unit", "coarser_unit"}
        for dialect in ("redshift", "trino", "athena")
    },
}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_each_dialect_casts_all_but_its_listed_fallbacks_in_one_query_it_parses_back(
    dialect: str,
) -> None:
    read = pl.Schema({"row": pl.Int64, **{name: r for name, (r, _, _, _) in BOUNDARIES.items()}})
    casts = Casts.plan(Boundaries, read, "cast")
    in_sql = compile_casts(casts.casts, DIALECTS[dialect])
    assert set(BOUNDARIES) - set(in_sql) == CAST_FALLBACKS[dialect]

    dtypes = casts.frame(pl.LazyFrame(schema=read), list(read)).collect_schema()
    relation = cast_relation(exp.select(exp.Star()).from_("t"), dtypes, casts.casts, in_sql)
    table = SQLTable.of(relation, dialect=dialect, run=print)
    pushed = {c.rule.name: in_sql[c.column].unchanged() for c in casts.casts if c.column in in_sql}
    rules = [cast.rule for cast in casts.casts if cast.rule.name in pushed]

    parsed = sqlglot.parse_one(table.sql(table.counts(rules, pushed)), read=dialect)

    assert isinstance(parsed, exp.Select)
    assert len(parsed.expressions) == len(rules) + 1  # the row count, then one per cast


def test_dialect_forms_of_nan_byte_length_and_regex() -> None:
    def rendered(dialect: str, rule: str) -> str:
        (found,) = [r for r in rules(Everything) if r.name == rule]
        condition = compile_rules([found], DTYPES, DIALECTS[dialect]).conditions[rule]
        return condition.sql(dialect=dialect)

    assert rendered("duckdb", "code|max_length") == 'STRLEN("code") <= 5'
    assert rendered("postgres", "code|max_length") == 'OCTET_LENGTH("code") <= 5'
    assert rendered("bigquery", "code|max_length") == "BYTE_LENGTH(`code`) <= 5"
    assert rendered("snowflake", "code|max_length") == 'OCTET_LENGTH("code") <= 5'
    # A bare TIMESTAMP in Snowflake follows the account's TIMESTAMP_TYPE_MAPPING.
    assert rendered("snowflake", "at|max") == (
        "\"at\" <= CAST('2030-01-01 12:30:00' AS TIMESTAMPNTZ)"
    )
    assert rendered("bigquery", "at|max") == "`at` <= CAST('2030-01-01 12:30:00' AS DATETIME)"
    assert rendered("duckdb", "code|regex") == "REGEXP_MATCHES(\"code\", '^[a-c]+$')"
    assert rendered("bigquery", "code|regex") == "REGEXP_CONTAINS(`code`, '^[a-c]+$')"
    assert rendered("postgres", "code|regex") == '"code" COLLATE "C" ~ \'^[a-c]+$\''
    # NaN is above every bound in polars; in BigQuery it compares false, so say it.
    assert rendered("bigquery", "amount|max_exclusive") == (
        "NOT IS_NAN(`amount`) AND `amount` < CAST(100.0 AS FLOAT64)"
    )
    assert rendered("duckdb", "ratio|min_exclusive") == '"ratio" > CAST(0.1 AS REAL)'


def test_the_polars_expression_tree_the_translator_reads() -> None:
    """Pins the serialized tree of polars expressions: if polars writes it otherwise, the
    rules fall back (and this fails), they are never mistranslated."""
    dtypes = pl.Schema({"a": pl.Int16, "b": pl.String, "f": pl.Float32})
    expr = (
        ((pl.col("a") + 100_000) * 2 >= 3)
        & pl.col("b").is_in(["x", "y"])
        & ~pl.col("b").is_null()
        & pl.col("f").is_between(0, 1.5, closed="left")
    ) | pl.col("b").str.len_bytes().is_not_null()

    sql = translate(expr, dtypes, DIALECTS["duckdb"])

    assert sql is not None
    assert sql.sql(dialect="duckdb") == (
        "((((((CAST(\"a\" AS BIGINT) + 100000) * 2) >= 3) AND (\"b\" IN ('x', 'y'))) AND "
        '(NOT ("b" IS NULL))) AND '
        '(("f" >= CAST(0 AS REAL)) AND ("f" < CAST(CAST(1.5 AS DOUBLE) AS REAL)))) OR '
        '(NOT STRLEN("b") IS NULL)'
    )


@pytest.mark.parametrize(
    "expr",
    [
        pl.col("a") / 2 > 1,  # true division
        pl.col("a").cast(pl.Float64) > 1,
        (pl.col("a") > 1).over("b"),
        pl.col("a").map_elements(lambda v: v > 1, return_dtype=pl.Boolean),
        pl.col("b").str.len_bytes(),  # not a predicate
        pl.col("f") * 3 > 1,  # float32 arithmetic rounds at each step in polars
        pl.col("d") > 1,  # a decimal
        pl.col("t") > pl.col("t"),  # a datetime, with its unit
    ],
)
def test_expressions_without_an_exact_sql_form_are_not_translated(expr: pl.Expr) -> None:
    assert translate(expr, MIXED, DIALECTS["duckdb"]) is None


def test_null_tests_translate_for_columns_of_any_dtype() -> None:
    expr = pl.col("t").is_null() | pl.col("d").is_not_null()
    sql = translate(expr, MIXED, DIALECTS["duckdb"])
    assert sql is not None
    assert sql.sql(dialect="duckdb") == '("t" IS NULL) OR (NOT "d" IS NULL)'


def test_ordered_string_comparisons_push_down_only_where_strings_compare_as_bytes() -> None:
    dtypes = pl.Schema({"b": pl.String})
    assert translate(pl.col("b") < "m", dtypes, DIALECTS["duckdb"]) is not None
    assert translate(pl.col("b") < "m", dtypes, DIALECTS["postgres"]) is None


def test_importing_the_package_does_not_import_sqlglot() -> None:
    code = (
        "import sys, dagster_dataframely as dd; dd.sources.DuckDBTableSource(); "
        "assert 'sqlglot' not in sys.modules, 'sqlglot imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("dialect", "name", "table"),
    [
        ("snowflake", "finance.payments", '"FINANCE"."PAYMENTS"'),
        ("snowflake", 'finance."Payments"', '"FINANCE"."Payments"'),
        ("postgres", "Finance.payments", '"finance"."payments"'),
        ("postgres", '"shop"."main"."Orders"', '"shop"."main"."Orders"'),
        ("bigquery", "project.Finance.payments", "`project`.`Finance`.`payments`"),
    ],
)
def test_a_bare_table_name_means_what_the_database_reads_it_as(
    dialect: str, name: str, table: str
) -> None:
    select = relation(lambda _: {}, name, dialect, None, None)
    assert select.sql(dialect=dialect) == f"SELECT * FROM {table}"


@pytest.mark.parametrize(
    ("dialect", "type_name", "precision", "scale", "dtype"),
    [
        ("snowflake", "FIXED", 38, 0, pl.Int64()),  # INT is NUMBER(38, 0)
        ("snowflake", "FIXED", 10, 2, pl.Decimal(10, 2)),
        ("snowflake", "REAL", None, None, pl.Float64()),  # every Snowflake float is 64 bits
        ("snowflake", "TEXT", None, None, pl.String()),
        ("snowflake", "TIMESTAMP_NTZ", 0, 9, pl.Datetime("us")),
        ("snowflake", "TIMESTAMP_TZ", 0, 9, pl.Datetime("us", "UTC")),
        ("bigquery", "INTEGER", None, None, pl.Int64()),  # the DB-API's legacy names
        ("bigquery", "FLOAT", None, None, pl.Float64()),
        ("bigquery", "TIMESTAMP", None, None, pl.Datetime("us", "UTC")),
        ("bigquery", "DATETIME", None, None, pl.Datetime("us")),
        ("postgres", "int4", None, None, pl.Int32()),
        ("postgres", "numeric", 10, 0, pl.Decimal(10, 0)),  # NUMBER(p, 0) is Int64 only there
        ("postgres", "numeric", None, None, pl.Float64()),  # no fixed scale
        # An array of a type read here is a list of it; of any other, text, as that type is.
        ("postgres", "int4[]", None, None, pl.List(pl.Int32())),
        ("postgres", "text[]", None, None, pl.List(pl.String())),
        ("postgres", "uuid[]", None, None, pl.String()),
        ("postgres", "numeric[]", None, None, pl.String()),
        ("snowflake", "ARRAY", None, None, pl.String()),  # semi-structured: JSON text
        # A dialect with no rules here is read as sqlglot reads its names.
        ("mysql", "DECIMAL", 12, 0, pl.Decimal(12, 0)),
        ("mysql", "BIGINT", None, None, pl.Int64()),
        ("mysql", "DATETIME", None, None, pl.Datetime("us")),
    ],
)
def test_the_dtype_a_driver_describes_is_the_databases_type(
    dialect: str, type_name: str, precision: int | None, scale: int | None, dtype: pl.DataType
) -> None:
    description = ("column", None, None, None, precision, scale, True)
    assert polars_dtype(type_name, description, dialect) == dtype
