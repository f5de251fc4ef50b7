"""The exact SQL the backend sends to BigQuery, Snowflake, Spark and Databricks, held in
golden files.

No BigQuery or Databricks server runs in tests, so their SQL is compile-checked: for a schema
with every rule kind, a custom rule and a primary key, over a daily partition in a non-UTC
zone, the count query and the sample queries must equal `tests/golden/<dialect>/*.sql` and
parse back with sqlglot's dialect. Snowflake's and Spark's are kept too, beside their fakesnow
and local Spark runs, so a change of their SQL shows in review. Redshift and Trino have no
pushdown yet: the reads of their rows into polars are held the same way. After a deliberate
change of the SQL, regenerate them and read the diff:

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
from dagster_dataframely._engine.sql.backend import SQLTable, compile_rules
from dagster_dataframely._engine.sql.repeated import COUNT, FAILED, LISTED_ROWS, RepeatedHead
from dagster_dataframely.sources._partitions import Partition
from dagster_dataframely.sources._sql_query import projected, relation

GOLDEN = Path(__file__).parent / "golden"
REGENERATE = os.environ.get("DD_REGENERATE_GOLDEN") == "1"
DIALECTS = ("bigquery", "snowflake", "spark", "databricks")
#: Dialects without an aggregate's `FILTER (WHERE ...)` clause.
NO_FILTER = ("bigquery", "snowflake")


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


def _queries(dialect: str) -> dict[str, str]:
    """Name -> the SQL text the backend sends, for `Orders` in the day's partition of
    `shop.orders` (a naive `ordered_at` column)."""
    catalogue = rules(Orders)
    rows = relation(
        lambda _: {"value": pl.Datetime("us")}, "shop.orders", dialect, DAY, "ordered_at"
    )
    table = SQLTable.of(rows, dialect=dialect, run=lambda _: pl.DataFrame())
    compiled = compile_rules(catalogue, pl.Schema(DTYPES), table.dialect).conditions
    by_row = [rule for rule in catalogue if rule.name in compiled and not rule.distinct_over]
    shown = ["order_id", "amount"]
    return {
        "counts": table.sql(table.counts(by_row, compiled)),
        "sample_amount_max_exclusive": table.sql(
            table.sample(compiled["amount|max_exclusive"], shown, 5)
        ),
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
            table.sample(
                compiled["paid_orders_have_an_amount"], ["order_id", "status", "amount"], 5
            )
        ),
    }


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
    assert {path.stem for path in files} == set(_queries(dialect))
    for path in files:
        parsed = sqlglot.parse_one(path.read_text(), read=dialect)
        assert isinstance(parsed, exp.Select), path
        if dialect in NO_FILTER:
            assert not list(parsed.find_all(exp.Filter)), f"{path}: no FILTER in {dialect}"


def test_the_golden_sql_says_what_each_dialect_needs() -> None:
    bigquery, snowflake = (_queries(dialect)["counts"] for dialect in NO_FILTER)
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


#: Dialects with no `Dialect` class here: every rule is read into polars through the SQL the
#: source sends, held in golden files too (Redshift and Trino: their float, string and regex
#: semantics are not yet proven, so nothing is pushed down to them).
READ_ONLY = ("redshift", "trino")


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


READ_CASES = [(dialect, name) for dialect in READ_ONLY for name in _reads(dialect)]


@pytest.mark.parametrize(("dialect", "name"), READ_CASES)
def test_the_sql_read_from_a_dialect_without_pushdown_is_the_golden_files(
    dialect: str, name: str
) -> None:
    sql = _reads(dialect)[name]
    _is_golden(dialect, name, sql)
    assert isinstance(sqlglot.parse_one(sql, read=dialect), exp.Select), name
    # The partition's wall-clock bounds, as literals the database reads as timestamps.
    if name != "read_probe":
        assert "CAST('2024-03-31 00:00:00' AS TIMESTAMP)" in sql
