"""`dd.infer_schema` on a BigQuery table. BigQuery has no local engine, so its DB-API
connection is a fake that records each query and answers it as google-cloud-bigquery's
would (legacy type names in the description, no precision): what is tested is the SQL sent,
in BigQuery's dialect (the dataset's `INFORMATION_SCHEMA`), and the schema written from the
answers, executed."""

from __future__ import annotations

import polars as pl
import pytest
from recording_dbapi import Answer, Recording
from written_schema import load

import dagster_dataframely as dd
from dagster_dataframely.errors import SourceReadError, TableNotFoundError

#: The columns of `shop.orders`: name, the description's type code, the catalog's
#: data_type and collation, `is_nullable`.
ORDERS = [
    ("order_id", "INTEGER", "INT64", "NULL", "NO"),
    ("line", "INTEGER", "INT64", "NULL", "NO"),
    ("total", "NUMERIC", "NUMERIC(10, 2)", "NULL", "NO"),
    ("rate", "FLOAT", "FLOAT64", "NULL", "YES"),
    ("status", "STRING", "STRING", "NULL", "YES"),
    ("region", "STRING", "STRING", "und:ci", "YES"),
    ("placed", "TIMESTAMP", "TIMESTAMP", "NULL", "YES"),
    ("local", "DATETIME", "DATETIME", "NULL", "YES"),
    ("area", "GEOGRAPHY", "GEOGRAPHY", "NULL", "YES"),
]


def shop(**more: Answer) -> Recording:
    return Recording(
        {
            **more,
            "FROM `shop`.`orders` LIMIT 0": ([(c[0], c[1]) for c in ORDERS], []),
            "SELECT column_name, data_type, collation_name": (
                ["column_name", "data_type", "collation_name"],
                [(c[0], c[2], c[3]) for c in ORDERS],
            ),
            "SELECT column_name, is_nullable, data_type": (
                ["column_name", "is_nullable", "data_type"],
                [(c[0], c[4], c[2]) for c in ORDERS],
            ),
            "KEY_COLUMN_USAGE": (["column_name"], [("order_id",), ("line",)]),
        }
    )


def test_a_bigquery_table_is_read_from_its_dataset_s_information_schema() -> None:
    warehouse = shop()
    source = dd.infer_schema("shop.orders", connection=warehouse, dialect="bigquery")
    schema = load(source, "Orders")

    assert warehouse.queries == [
        "SELECT * FROM `shop`.`orders` LIMIT 0",
        "SELECT column_name, data_type, collation_name "
        "FROM `shop`.`INFORMATION_SCHEMA.COLUMNS` WHERE table_name = 'orders' "
        "ORDER BY ordinal_position",
        "SELECT column_name, is_nullable, data_type "
        "FROM `shop`.`INFORMATION_SCHEMA.COLUMNS` "
        "WHERE table_name = 'orders' AND table_schema = 'shop'",
        "SELECT k.column_name FROM `shop`.`INFORMATION_SCHEMA.KEY_COLUMN_USAGE` AS k "
        "JOIN `shop`.`INFORMATION_SCHEMA.TABLE_CONSTRAINTS` AS c "
        "ON k.constraint_name = c.constraint_name AND k.table_schema = c.table_schema "
        "AND k.table_name = c.table_name "
        "WHERE c.constraint_type = 'PRIMARY KEY' AND k.table_name = 'orders' "
        "AND k.table_schema = 'shop'",
    ]
    columns = schema.columns()
    # The dtypes SQLTableSource reads from the description: legacy INTEGER and FLOAT are 64
    # bits, a NUMERIC without precision in it a float, TIMESTAMP has a zone, DATETIME none.
    assert {name: column.dtype for name, column in columns.items()} == {
        "order_id": pl.Int64(),
        "line": pl.Int64(),
        "total": pl.Float64(),
        "rate": pl.Float64(),
        "status": pl.String(),
        "region": pl.String(),
        "placed": pl.Datetime("us", "UTC"),
        "local": pl.Datetime("us"),
    }
    assert [name for name, column in columns.items() if column.primary_key] == ["order_id", "line"]
    assert not columns["total"].nullable and columns["rate"].nullable
    assert "    # area: GEOGRAPHY has no Dataframely column type" in source
    assert "inferred from BigQuery table `shop`.`orders`" in source


AGGREGATE = (
    "SELECT COUNT(*) AS `rows`, COUNT(`order_id`) AS `n0`, COUNT(DISTINCT `order_id`) AS `d0`, "
    "MIN(`order_id`) AS `lo0`, MAX(`order_id`) AS `hi0`, COUNT(`line`) AS `n1`, "
    "COUNT(DISTINCT `line`) AS `d1`, MIN(`line`) AS `lo1`, MAX(`line`) AS `hi1`, "
    "COUNT(`total`) AS `n2`, COUNT(CASE WHEN IS_NAN(`total`) THEN 1 END) AS `nan2`, "
    "COUNT(CASE WHEN `total` IN (CAST('inf' AS FLOAT64), CAST('-inf' AS FLOAT64)) THEN 1 END) "
    "AS `inf2`, COUNT(`rate`) AS `n3`, COUNT(CASE WHEN IS_NAN(`rate`) THEN 1 END) AS `nan3`, "
    "COUNT(CASE WHEN `rate` IN (CAST('inf' AS FLOAT64), CAST('-inf' AS FLOAT64)) THEN 1 END) "
    "AS `inf3`, COUNT(`status`) AS `n4`, COUNT(DISTINCT `status`) AS `d4`, "
    "MIN(BYTE_LENGTH(`status`)) AS `short4`, MAX(BYTE_LENGTH(`status`)) AS `long4`, "
    "COUNT(`region`) AS `n5`, MIN(BYTE_LENGTH(`region`)) AS `short5`, "
    "MAX(BYTE_LENGTH(`region`)) AS `long5`, COUNT(`placed`) AS `n6`, "
    "COUNT(DISTINCT `placed`) AS `d6`, "
    "COUNT(`local`) AS `n7`, COUNT(DISTINCT `local`) AS `d7` "
    "FROM (SELECT * FROM `shop`.`orders`) AS __dy_rows"
)
VALUES = (
    "SELECT DISTINCT `status` FROM (SELECT * FROM `shop`.`orders`) AS __dy_rows "
    "WHERE NOT `status` IS NULL ORDER BY `status` LIMIT 11"
)


def test_a_profile_is_one_aggregate_query_in_bigquery_s_sql() -> None:
    counts = {
        "rows": 4, "n0": 4, "d0": 2, "lo0": 1, "hi0": 2, "n1": 4, "d1": 2, "lo1": 1, "hi1": 2,
        "n2": 4, "nan2": 0, "inf2": 0, "n3": 3, "nan3": 1, "inf3": 0, "n4": 4, "d4": 2,
        "short4": 4, "long4": 4, "n5": 4, "short5": 2, "long5": 5, "n6": 2, "d6": 2, "n7": 0,
        "d7": 0,
    }  # fmt: skip
    warehouse = shop(
        **{
            AGGREGATE: (list(counts), [tuple(counts.values())]),
            VALUES: ([("status", "STRING")], [("open",), ("paid",)]),
        }
    )
    source = dd.infer_schema("shop.orders", connection=warehouse, dialect="bigquery", profile=True)

    assert warehouse.queries[4:] == [AGGREGATE, VALUES]
    proposals = [line.strip() for line in source.splitlines() if "# proposed" in line]
    assert proposals == [
        "# proposed (4 rows, values 1 to 2): min=1, max=2",  # order_id
        "# proposed (4 rows, values 1 to 2): min=1, max=2",  # line
        "# proposed (4 rows, no NaN): allow_nan=False",  # total
        "# proposed (4 rows, no infinity): allow_inf=False",
        "# proposed (4 rows, no infinity): allow_inf=False",  # rate: a NaN, no infinity
        "# proposed (4 rows, no nulls): nullable=False",  # status
        '# proposed (4 rows, 2 values): check={"is_in": lambda col: col.is_in(["open", "paid"])}',
        "# proposed (4 rows, no nulls): nullable=False",  # region, collated: not counted
        "# proposed (4 rows, 2 to 5 bytes long): min_length=2, max_length=5",  # its lengths
    ]
    assert (
        load(source, "Orders").columns().keys()
        == load(dd.infer_schema("shop.orders", connection=shop(), dialect="bigquery"), "Orders")
        .columns()
        .keys()
    )


def test_a_missing_bigquery_table_names_the_closest_in_its_dataset() -> None:
    tables = (["table_name"], [("orders",), ("customers",)])
    warehouse = Recording({"INFORMATION_SCHEMA.TABLES": tables})
    with pytest.raises(TableNotFoundError, match=r"BigQuery table `shop`.`order`.*404 Not found"):
        dd.infer_schema("shop.order", connection=warehouse, dialect="bigquery")
    assert warehouse.queries[-1] == (
        "SELECT table_name FROM `shop`.`INFORMATION_SCHEMA.TABLES` WHERE table_schema = 'shop'"
    )


def test_a_refused_profile_query_names_the_table_and_the_way_without_it() -> None:
    warehouse = shop()  # answers no aggregate query
    with pytest.raises(SourceReadError, match=r"profile BigQuery table `shop`.`orders`.*404") as e:
        dd.infer_schema("shop.orders", connection=warehouse, dialect="bigquery", profile=True)
    assert "without profile=True (--profile)" in str(e.value)
