"""A Snowflake table's declared primary key. Snowflake's `information_schema` has no
`key_column_usage` and fakesnow has no `SHOW PRIMARY KEYS`, so the connection here is a
recording fake that answers as Snowflake's connector does (wire type names, upper-case
names): the key is read with `SHOW PRIMARY KEYS`, and the standard views are not asked."""

from __future__ import annotations

import polars as pl
from recording_dbapi import Recording
from written_schema import load

import dagster_dataframely as dd
from dagster_dataframely._engine.sql.dialects import DIALECTS

SETTINGS = DIALECTS["snowflake"].session_settings
#: The session parameters a check pins, as `SHOW PARAMETERS IN SESSION` lists them.
PARAMETERS = [(name, str(value), "") for name, value in SETTINGS.items()]
#: Name, wire type, precision, scale, `is_nullable`.
COLUMNS = [("INVOICE_ID", "FIXED", 38, 0, "NO"), ("LINE", "FIXED", 38, 0, "NO")]
COLUMNS += [("TOTAL", "FIXED", 12, 2, "YES")]
SHOW = 'SHOW PRIMARY KEYS IN TABLE "FINANCE"."LINES"'
KEYS = [
    ("2024-01-01", "SHOP", "FINANCE", "LINES", "INVOICE_ID", 1, "PK_LINES"),
    ("2024-01-01", "SHOP", "FINANCE", "LINES", "LINE", 2, "PK_LINES"),
]
SHOWN = ["created_on", "database_name", "schema_name", "table_name", "column_name"]


def test_a_snowflake_key_is_read_with_show_primary_keys() -> None:
    warehouse = Recording(
        {
            "SHOW PARAMETERS IN SESSION": (["key", "value", "level"], PARAMETERS),
            "ALTER SESSION": ([], []),
            "LIMIT 0": ([c[:4] for c in COLUMNS], []),
            "collation_name": (
                ["COLUMN_NAME", "DATA_TYPE", "COLLATION_NAME"],
                [(c[0], "NUMBER", None) for c in COLUMNS],
            ),
            "is_nullable": (
                ["COLUMN_NAME", "IS_NULLABLE", "DATA_TYPE"],
                [(c[0], c[4], "NUMBER") for c in COLUMNS],
            ),
            SHOW: ([*SHOWN, "key_sequence", "constraint_name"], KEYS),
        },
        refusal="002003 (42S02): SQL compilation error: Object does not exist",
    )
    source = dd.infer_schema("finance.lines", connection=warehouse, dialect="snowflake")
    schema = load(source, "Lines")

    assert SHOW in warehouse.queries
    assert not any("KEY_COLUMN_USAGE" in query.upper() for query in warehouse.queries)
    assert schema.primary_key() == ["INVOICE_ID", "LINE"]
    assert {n: c.dtype for n, c in schema.columns().items()} == {
        "INVOICE_ID": pl.Int64(),
        "LINE": pl.Int64(),
        "TOTAL": pl.Decimal(12, 2),
    }
