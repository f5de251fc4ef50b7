"""Property: a schema's rules count the same in a local Spark as in polars, whatever the
user's session says, and every regex Spark is given finds what polars finds.

The generated tables of `test_pushdown_parity` (nulls, NaN, ±inf, -0.0, float32 rounding,
multi-byte and newline strings, duplicate and null keys, empty tables) become Spark views read
through `SparkTableSource`'s connection code, on a session the example varies: ANSI mode on or
off, a session time zone of UTC or one with a DST gap or a half-hour offset, the text columns
plain or `UTF8_LCASE`. The check pins its own settings and puts the user's back. The regexes
are `test_sql_regex_parity`'s, run by Java's engine through `RLIKE`. Example counts are small:
each is a few Spark queries on one local JVM.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dagster as dg
import polars as pl
import pytest
import test_pushdown_parity as generated
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from spark import GROUP, spark_view
from sqlglot import exp
from test_sql_regex_parity import STRINGS, VALUE, _patterns

import dagster_dataframely as dd
from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.evaluate import evaluate
from dagster_dataframely._engine.sql.backend import SQLTable
from dagster_dataframely._engine.sql.catalog import read_facts
from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely._engine.sql.exactness import NotExact
from dagster_dataframely.sources._spark_session import SparkConnection
from dagster_dataframely.sources._sql import _Database
from dagster_dataframely.sources._sql_query import relation

pytestmark = GROUP
SOURCE = dd.sources.SparkTableSource(table="generated")
SPARK = DIALECTS["spark"]
#: The user's session: what the example sets before the check, and must find after it.
SESSIONS = st.fixed_dictionaries(
    {
        "spark.sql.ansi.enabled": st.sampled_from(["true", "false"]),
        "spark.sql.session.timeZone": st.sampled_from(
            ["UTC", "America/New_York", "Asia/Kathmandu"]
        ),
    }
)


@pytest.fixture
def session(spark: Any) -> Iterator[Any]:
    """The shared session, its settings as a user left them restored after the test."""
    yield spark
    for name in ("spark.sql.ansi.enabled", "spark.sql.session.timeZone"):
        spark.conf.unset(name)


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@example(rows=[], users={"spark.sql.ansi.enabled": "false"}, collated=True)
@given(rows=st.lists(generated.ROW, max_size=10), users=SESSIONS, collated=st.booleans())
def test_spark_counts_what_the_polars_evaluator_counts_in_any_users_session(
    session: Any, rows: list[dict[str, object]], users: dict[str, str], collated: bool
) -> None:
    frame = pl.DataFrame(rows, schema=generated.SCHEMA, orient="row")
    spark_view(session, "generated", frame, collated=("ref", "code") if collated else ())
    for name, value in users.items():
        session.conf.set(name, value)
    catalogue = rules(generated.Everything)
    database = _Database(SparkConnection(session), SOURCE, dg.AssetKey("generated"), print)

    with database.pinned():
        select = relation(database.dtypes, "generated", "spark", None, None)
        facts = read_facts(select, SPARK, database.run)
        table = SQLTable.of(select, dialect="spark", run=database.run, facts=facts)
        scanned = database.scan(select)
        in_spark = table.evaluate(scanned, catalogue, max_failure_samples=3, identify=["id"])
        schema = scanned.collect_schema()

    reference = evaluate(frame.lazy(), catalogue, max_failure_samples=3, identify=["id"])
    assert {name: session.conf.get(name) for name in users} == users
    assert schema == frame.schema
    assert in_spark.row_count == reference.row_count == frame.height
    assert dict(in_spark.failed) == dict(reference.failed)
    fallen_back = {n for n, engine in in_spark.engines.items() if engine.startswith("polars")}
    assert fallen_back == generated.FALLBACK
    for name, sample in in_spark.samples.items():
        assert 0 < sample.height <= 3
        assert sample.height == reference.samples[name].height


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@example(pattern=r"^[a-z0-9.]+@[a-z]+\.[a-z]+$", strings=["a.b@cd.ef", "A@b.c", "a@b.c\n"])
@example(pattern="a.c|^.$", strings=["a\nc", "abc", "\n", "é", "\r", "\u0085", "\U0001f600"])
@example(pattern=r"[^a]\^\\[\]-]{2}$", strings=["b^\\]-", "\n^\\-]", "a^\\]]"])
@example(pattern="x$", strings=["x\n", "x\r\n", "x"])
@example(pattern=r"[\x{1F600}-\x{1F64F}]+\z", strings=["\U0001f600", "a\U0001f64f", "\ud7ff"])
@example(pattern="", strings=["", "a"])
@given(pattern=_patterns(), strings=STRINGS)
def test_regexes_pushed_to_spark_find_what_polars_finds(
    spark: Any, pattern: str, strings: list[str]
) -> None:
    try:
        expected = int(pl.Series(strings, dtype=pl.String).str.contains(pattern).sum())
    except pl.exceptions.ComputeError:
        with pytest.raises(NotExact):
            SPARK.contains(VALUE, pattern)
        return
    try:
        condition = SPARK.contains(VALUE, pattern)
    except NotExact:
        return
    event("pushed to spark")
    sent = pl.DataFrame({"v": strings}, schema={"v": pl.String}).to_arrow()
    spark.createDataFrame(sent).createOrReplaceTempView("strings")
    query = exp.select(SPARK.count_where(condition)).from_("strings").sql(dialect="spark")

    assert spark.sql(query).collect()[0][0] == expected, query
