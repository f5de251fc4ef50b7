"""Property: a schema's rules count the same through fakesnow (Snowflake SQL) as in polars.

The generated tables of `test_pushdown_parity` (nulls, NaN, ±inf, -0.0, multi-byte and
newline strings, duplicate and null keys, empty tables), in the types a Snowflake table has
(every integer `NUMBER(38, 0)`, every float 64 bits), are read back through `SQLTableSource`'s
connection code from a fakesnow connection: its Snowflake count and sample queries for the
rules Snowflake expresses exactly, its batched `SELECT` for the rest. fakesnow runs the SQL in
DuckDB, so this proves the SQL's logic (`COUNT(CASE ...)`, NaN above every bound, bytes,
grouped keys), not Snowflake's own collations or name case (see test_sql_snowflake.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dagster as dg
import fakesnow
import polars as pl
import pytest
import snowflake.connector
import test_pushdown_parity as generated
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.evaluate import evaluate
from dagster_dataframely._engine.sql.backend import SQLTable
from dagster_dataframely.sources._sql import _Database
from dagster_dataframely.sources._sql_query import relation

#: The dtypes Snowflake's connector describes for the generated columns.
SNOWFLAKE_TYPES = {"ratio": pl.Float64, "level": pl.Int64}
#: Snowflake's `REGEXP_LIKE` is a full match of a POSIX ERE: every regex stays in polars; an
#: Int64 `+ 1` may wrap in polars, a float product may raise in Snowflake.
FALLBACK = {"digits|regex", "code|regex", "levelled_codes", "known_refs"}
SOURCE = dd.sources.SQLTableSource(resource_key="warehouse", dialect="snowflake")


@pytest.fixture(scope="module")
def connection() -> Iterator[Any]:
    with fakesnow.patch():
        connection = snowflake.connector.connect(database="shop", schema="finance")
        # fakesnow hands OCTET_LENGTH to DuckDB, whose octet_length takes no VARCHAR.
        connection._duck_conn.execute("CREATE MACRO shop.finance.octet_length(s) AS strlen(s)")
        yield connection
        connection.close()


def _in_snowflake(connection: Any, frame: pl.DataFrame) -> _Database:
    duck = connection._duck_conn  # the DuckDB under fakesnow: a bulk load without INSERTs
    duck.execute("DROP TABLE IF EXISTS shop.finance.generated")
    duck.register("generated_arrow", frame.to_arrow())
    duck.execute("CREATE TABLE shop.finance.generated AS SELECT * FROM generated_arrow")
    duck.unregister("generated_arrow")
    return _Database(connection, SOURCE, dg.AssetKey("generated"), log=lambda _: None)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(rows=[])
@given(rows=st.lists(generated.ROW, max_size=12))
def test_snowflake_sql_counts_what_the_polars_evaluator_counts(
    connection: Any, rows: list[dict[str, object]]
) -> None:
    frame = pl.DataFrame(rows, schema=generated.SCHEMA, orient="row").cast(SNOWFLAKE_TYPES)  # type: ignore[arg-type]
    catalogue = rules(generated.Everything)
    database = _in_snowflake(connection, frame)
    select = relation(database.dtypes, "generated", "snowflake", None, None)
    table = SQLTable.of(select, dialect="snowflake", run=database.run)
    scanned = database.scan(select)

    in_snowflake = table.evaluate(scanned, catalogue, max_failure_samples=3, identify=["id"])
    reference = evaluate(frame.lazy(), catalogue, max_failure_samples=3, identify=["id"])

    assert scanned.collect_schema() == frame.schema
    assert in_snowflake.row_count == reference.row_count == frame.height
    assert dict(in_snowflake.failed) == dict(reference.failed)
    fallen_back = {
        name for name, engine in in_snowflake.engines.items() if engine.startswith("polars")
    }
    assert fallen_back == FALLBACK
    assert set(in_snowflake.engines) == {rule.name for rule in catalogue}
    for name, sample in in_snowflake.samples.items():
        assert 0 < sample.height <= 3
        assert sample.height == reference.samples[name].height
