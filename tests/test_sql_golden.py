"""The exact SQL the backend sends to BigQuery, Snowflake, Spark, Databricks, Redshift and
Trino, held in golden files.

No BigQuery, Databricks, Redshift or Trino server runs in tests, so their SQL is
compile-checked: for a schema with every rule kind, a custom rule and a primary key, over a
daily partition in a non-UTC zone, the count query and the sample queries must equal
`tests/golden/<dialect>/*.sql` and parse back with sqlglot's dialect. Snowflake's and Spark's
are kept too, beside their fakesnow and local Spark runs, so a change of their SQL shows in
review. For Redshift and Trino the reads of a falling-back rule's rows into polars are held
the same way, and so is the list of rules each leaves to polars, with its reason. After a
deliberate change of the SQL, regenerate them and read the diff:

    DD_REGENERATE_GOLDEN=1 .venv/bin/pytest tests/test_sql_golden.py -n 0
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from zoneinfo import ZoneInfo

import dataframely as dy
import polars as pl
import pytest
import sqlglot
from sqlglot import exp

from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.sql.backend import Compiled, SQLTable, compile_rules
from dagster_dataframely._engine.sql.columns import TableFacts
from dagster_dataframely._engine.sql.dialects import DIALECTS as DIALECTS_BY_NAME
from dagster_dataframely._engine.sql.repeated import COUNT, FAILED, LISTED_ROWS, RepeatedHead
from dagster_dataframely.sources._partitions import Partition
from dagster_dataframely.sources._sql_query import projected, relation

GOLDEN = Path(__file__).parent / "golden"
REGENERATE = os.environ.get("DD_REGENERATE_GOLDEN") == "1"
DIALECTS = ("bigquery", "snowflake", "spark", "databricks", "redshift", "trino")
#: Dialects without an aggregate's `FILTER (WHERE ...)` clause.
NO_FILTER = ("bigquery", "snowflake", "redshift")


class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    amount = dy.Float64(nullable=True, min=0, max_exclusive=10_000.0)
    discount = dy.Float64(nullable=True, min_exclusive=0.0, max=1.0, allow_nan=True)
    currency = dy.String(min_length=3, max_length=3, regex=r"^[A-Z]{3}$")
    status = dy.String(nullable=True, check={"known": lambda c: c.is_in(["open", "paid"])})
    quantity = dy.Int64(nullable=True, is_in=[1, 2, 3])
    ordered_on = dy.Date(nullable=True, min=dt.date(2020, 1, 1))
    ordered_at = dy.Datetime(nullable=True, max=dt.datetime(2030, 1, 1, 12, 30))

    @dy.rule()
    def paid_orders_have_an_amount(cls) -> pl.Expr:
        """A paid order carries an amount."""
        return (pl.col("status") != "paid") | pl.col("amount").is_not_null()

    @dy.rule()
    def bulk_orders_are_discounted(cls) -> pl.Expr:
        """Three items or more get a discount."""
        return (pl.col("quantity") < 3) | pl.col("discount").is_not_null()


DTYPES = {name: column.dtype for name, column in Orders.columns().items()}
BERLIN = ZoneInfo("Europe/Berlin")
#: Berlin's 2024-03-31, the day clocks go forward: 23 hours.
DAY = Partition(
    keys=("2024-03-31",),
    window=(dt.datetime(2024, 3, 31, tzinfo=BERLIN), dt.datetime(2024, 4, 1, tzinfo=BERLIN)),
)


#: `Orders` as Redshift's `information_schema.columns` describes it (the catalog query's
#: rows): what decides which of its rules Redshift can count.
REDSHIFT_COLUMNS = pl.DataFrame(
    [
        ("order_id", "bigint", None),
        ("amount", "double precision", None),
        ("discount", "double precision", None),
        ("currency", "character", None),
        ("status", "character varying", None),
        ("quantity", "bigint", None),
        ("ordered_on", "date", None),
        ("ordered_at", "timestamp without time zone", None),
    ],
    schema=["column_name", "data_type", "collation_name"],
    orient="row",
)


def _compiled(dialect: str) -> Compiled:
    """`Orders`' rules compiled for `dialect`, over the columns its catalog describes."""
    known = DIALECTS_BY_NAME[dialect]
    facts = TableFacts(known.column_facts(REDSHIFT_COLUMNS)) if dialect == "redshift" else None
    return compile_rules(rules(Orders), pl.Schema(DTYPES), known, facts=facts)


def _queries(dialect: str) -> dict[str, str]:
    """Name -> the SQL text the backend sends, for `Orders` in the day's partition of
    `shop.orders` (a naive `ordered_at` column). A sampled rule that falls back in the
    dialect is replaced by one it counts (`ordered_on|min`, `bulk_orders_are_discounted`)."""
    catalogue = rules(Orders)
    rows = relation(
        lambda _: {"value": pl.Datetime("us")}, "shop.orders", dialect, DAY, "ordered_at"
    )
    table = SQLTable.of(rows, dialect=dialect, run=lambda _: pl.DataFrame())
    compiled = _compiled(dialect).conditions
    by_row = [rule for rule in catalogue if rule.name in compiled and not rule.distinct_over]
    shown = ["order_id", "amount"]
    bound = next(name for name in ("amount|max_exclusive", "ordered_on|min") if name in compiled)
    custom = next(
        name
        for name in ("paid_orders_have_an_amount", "bulk_orders_are_discounted")
        if name in compiled
    )
    queries = {
        "counts": table.sql(table.counts(by_row, compiled)),
        f"sample_{bound.replace('|', '_')}": table.sql(table.sample(compiled[bound], shown, 5)),
        # A key rule: one grouping counts its rows and brings back its first repeated keys.
        "repeated_head": table.sql(table.head_query(["order_id"], LISTED_ROWS + 1)),
        # With a key, the counts and the head in one round trip.
        "counts_with_head": table.sql(
            table.counts_with_head(table.counts(by_row, compiled), ["order_id"], LISTED_ROWS + 1)
        ),
        # Its sample where it shows more than the key: the rows of the listed keys, or, where
        # a key is null, of the keys found by grouping again.
        "sample_primary_key_listed": table.sql(
            table.key_rows(["order_id"], _head({"order_id": [3, 7]}), shown, 5, DTYPES)
        ),
        "sample_primary_key": table.sql(
            table.key_rows(["order_id"], _head({"order_id": [3, None]}), shown, 5, DTYPES)
        ),
        "sample_custom_rule": table.sql(
            table.sample(compiled[custom], ["order_id", "status", "amount"], 5)
        ),
    }
    if table.dialect.shared_samples:
        # Both rules' samples from one query: each row flagged per rule, TRUE or FALSE.
        flagged = {"__dy_fails0": compiled[bound], "__dy_fails1": compiled[custom]}
        queries["samples_flagged"] = table.sql(
            table.flagged_sample(flagged, ["order_id", "amount", "status"], 10)
        )
    return queries


def _head(keys: dict[str, list[int | None]]) -> RepeatedHead:
    """A grouping's first repeated `keys`, each twice."""
    found = pl.DataFrame(keys).with_columns(
        pl.lit(2).alias(COUNT), pl.lit(2 * len(next(iter(keys.values())))).alias(FAILED)
    )
    return RepeatedHead(found, LISTED_ROWS + 1)


CASES = [(dialect, name) for dialect in DIALECTS for name in _queries(dialect)]


def _is_golden(dialect: str, name: str, sql: str) -> None:
    """`sql` is the golden file `<dialect>/<name>.sql` (written anew when regenerating)."""
    path = GOLDEN / dialect / f"{name}.sql"
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sql + "\n")
    assert path.read_text() == sql + "\n", f"regenerate with DD_REGENERATE_GOLDEN=1: {path}"


@pytest.mark.parametrize(("dialect", "name"), CASES)
def test_the_sql_sent_is_the_golden_files(dialect: str, name: str) -> None:
    _is_golden(dialect, name, _queries(dialect)[name])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_each_golden_file_parses_as_its_dialect(dialect: str) -> None:
    files = sorted((GOLDEN / dialect).glob("*.sql"))
    reads = set(_reads(dialect)) if dialect in READS else set()
    assert {path.stem for path in files} == set(_queries(dialect)) | reads
    for path in files:
        parsed = sqlglot.parse_one(path.read_text(), read=dialect)
        assert isinstance(parsed, exp.Select), path
        if dialect in NO_FILTER:
            assert not list(parsed.find_all(exp.Filter)), f"{path}: no FILTER in {dialect}"


def test_the_golden_sql_says_what_each_dialect_needs() -> None:
    bigquery, snowflake = (_queries(dialect)["counts"] for dialect in ("bigquery", "snowflake"))
    # NaN compares false in BigQuery: a float bound says where polars puts it (above all).
    assert "NOT IS_NAN(`amount`) AND `amount` < CAST(10000.0 AS FLOAT64)" in bigquery
    assert "IS_NAN(`discount`) OR `discount` > CAST(0.0 AS FLOAT64)" in bigquery
    assert "BYTE_LENGTH(`currency`) <= 3" in bigquery
    assert "REGEXP_CONTAINS(`currency`, '^[A-Z]{3}$')" in bigquery
    # The partition (partition_expr is the user's SQL, as written): Berlin's wall clock as
    # a naive DATETIME; 2024-03-31 is 23 hours long.
    assert (
        "(ordered_at) >= CAST('2024-03-31 00:00:00' AS DATETIME) AND "
        "(ordered_at) < CAST('2024-04-01 00:00:00' AS DATETIME)"
    ) in bigquery
    # Snowflake: NaN is above every number there too; bytes by OCTET_LENGTH; no regex.
    assert '"amount" < CAST(10000.0 AS DOUBLE)' in snowflake and "IS_NAN" not in snowflake
    assert 'OCTET_LENGTH("currency") <= 3' in snowflake and "REGEXP" not in snowflake
    assert "CAST('2024-03-31 00:00:00' AS TIMESTAMPNTZ)" in snowflake
    assert 'FROM "SHOP"."ORDERS"' in snowflake


def test_the_golden_sql_says_what_spark_and_databricks_need() -> None:
    for dialect in ("spark", "databricks"):
        counts = _queries(dialect)["counts"]
        # NaN is above every number there, as in polars: a bound needs no NaN test.
        assert "`amount` < CAST(10000.0 AS DOUBLE)" in counts and "ISNAN" not in counts
        assert "OCTET_LENGTH(`currency`) <= 3" in counts
        # java.util.regex: `$` also matches before a final newline, so the end is `\\z`.
        regex = {"spark": "`currency` RLIKE ", "databricks": "REGEXP_LIKE(`currency`, "}
        assert regex[dialect] + "'^[A-Z]{3}\\\\z'" in counts
        assert "COUNT(*) FILTER(WHERE" in counts
        # Berlin's wall clock as a TIMESTAMP_NTZ (a bare TIMESTAMP is an instant there).
        assert (
            "(ordered_at) >= CAST('2024-03-31 00:00:00' AS TIMESTAMP_NTZ) AND "
            "(ordered_at) < CAST('2024-04-01 00:00:00' AS TIMESTAMP_NTZ)"
        ) in counts
        assert "FROM `shop`.`orders`" in counts


#: The rules of `Orders` each dialect leaves to polars, with the reason `dy_engine` gives.
FALLBACKS = {
    "redshift": {
        "amount|min": "NaN and infinity are not documented in Redshift",
        "amount|max_exclusive": "NaN and infinity are not documented in Redshift",
        "amount|inf": "NaN and infinity are not documented in Redshift",
        "amount|nan": "NaN and infinity are not documented in Redshift",
        "discount|min_exclusive": "NaN and infinity are not documented in Redshift",
        "discount|max": "NaN and infinity are not documented in Redshift",
        "discount|inf": "NaN and infinity are not documented in Redshift",
        "currency|min_length": "text compares without trailing blanks in Redshift",
        "currency|max_length": "text compares without trailing blanks in Redshift",
        "currency|regex": "regex: Redshift's POSIX engine is not documented construct by construct",
        "status|check__known": "text compares without trailing blanks in Redshift",
        "paid_orders_have_an_amount": "text compares without trailing blanks in Redshift",
    },
    "trino": {},
}


@pytest.mark.parametrize("dialect", FALLBACKS)
def test_each_dialect_leaves_to_polars_exactly_the_rules_it_cannot_count(dialect: str) -> None:
    assert _compiled(dialect).fallbacks == FALLBACKS[dialect]


def test_trinos_catalog_leaves_padded_text_and_nanosecond_timestamps_to_polars() -> None:
    # As Trino's information_schema describes them: a char(3) compares without its padding,
    # a timestamp(9) holds digits its values lose on their way into polars (microseconds),
    # a uuid is text to polars but not to Trino.
    rows = pl.DataFrame(
        [
            ("order_id", "bigint", None),
            ("currency", "char(3)", None),
            ("status", "uuid", None),
            ("ordered_at", "timestamp(9)", None),
            ("ordered_on", "date", None),
        ],
        schema=["column_name", "data_type", "collation_name"],
        orient="row",
    )
    trino = DIALECTS_BY_NAME["trino"]
    facts = TableFacts(trino.column_facts(rows))
    fallbacks = compile_rules(rules(Orders), pl.Schema(DTYPES), trino, facts=facts).fallbacks
    assert fallbacks == {
        "currency|min_length": "padded char(n)",
        "currency|max_length": "padded char(n)",
        "currency|regex": "padded char(n)",
        "ordered_at|max": "timestamp(9): finer than microseconds",
        "status|check__known": "type uuid not known to compare as polars",
        "paid_orders_have_an_amount": "type uuid not known to compare as polars",
    }


def test_the_golden_sql_says_what_redshift_and_trino_need() -> None:
    redshift, trino = (_queries(dialect)["counts"] for dialect in ("redshift", "trino"))
    # Redshift: PostgreSQL's syntax without FILTER; what it counts needs no text or float.
    assert 'COUNT(CASE WHEN NOT ("quantity" IN (1, 2, 3)) THEN 1 END)' in redshift
    assert "CAST('2030-01-01 12:30:00' AS TIMESTAMP)" in redshift
    assert "MATERIALIZED" not in _queries("redshift")["repeated_head"]
    # Trino: IEEE NaN (tested by is_nan), bytes of UTF-8, regex ends that joni and RE2J
    # read alike, and microseconds in a timestamp literal (a bare one has milliseconds).
    assert 'NOT IS_NAN("amount") AND "amount" < CAST(10000.0 AS DOUBLE)' in trino
    assert 'NOT (NOT IS_INFINITE("discount"))' in trino
    assert 'LENGTH(TO_UTF8("currency")) <= 3' in trino
    assert "REGEXP_LIKE(\"currency\", '\\A[A-Z]{3}\\z')" in trino
    assert "CAST('2030-01-01 12:30:00' AS TIMESTAMP(6))" in trino


def test_athena_sends_trinos_sql() -> None:
    assert _queries("athena") == _queries("trino")


#: Dialects whose reads of a falling-back rule's rows into polars are held too.
READS = ("redshift", "trino")


def _reads(dialect: str) -> dict[str, str]:
    """Name -> the SQL a `SQLTableSource` of `dialect` sends for the day's partition of
    `shop.orders`: the probe of the partition expression's type, the description of the
    rows and the projected read of a rule's columns."""
    probes: list[str] = []
    rows = relation(
        lambda sql: probes.append(sql) or {"value": pl.Datetime("us")},
        "shop.orders",
        dialect,
        DAY,
        "ordered_at",
    )
    return {
        "read_probe": probes[0],
        "read_described": projected(rows, None, dialect, limit=0),
        "read_columns": projected(rows, ["order_id", "amount"], dialect, limit=None),
    }


READ_CASES = [(dialect, name) for dialect in READS for name in _reads(dialect)]
#: Each dialect's wall-clock literal: Trino's bare `TIMESTAMP` has milliseconds only.
WALL_CLOCK = {"redshift": "AS TIMESTAMP)", "trino": "AS TIMESTAMP(6))"}


@pytest.mark.parametrize(("dialect", "name"), READ_CASES)
def test_the_sql_reading_a_fallback_rules_rows_is_the_golden_files(dialect: str, name: str) -> None:
    sql = _reads(dialect)[name]
    _is_golden(dialect, name, sql)
    assert isinstance(sqlglot.parse_one(sql, read=dialect), exp.Select), name
    # The partition's wall-clock bounds, as literals the database reads as timestamps.
    if name != "read_probe":
        assert "CAST('2024-03-31 00:00:00' " + WALL_CLOCK[dialect] in sql
