"""`SparkTableSource` in real runs on a local Spark: every rule kind counted in Spark
(`dy_engine: spark`) with Dataframely's own counts, samples, casts, the SQL Databricks is
sent, a daily partition of a parquet path, a collection's filters, a collated column, the
user's session settings put back, and each way a check cannot read (a missing table, a
resource that is no session, a session that cannot start) failing the step with the asset,
the source and the fix.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from ledger import MEMBERS, POLARS_FILTERS, Ledger, ledger_frames
from spark import GROUP, spark_view, stamps
from support import (
    dataframely_rule_counts,
    evaluations,
    failure_text,
    logs,
    rule_outcomes,
    scaffold_checks,
)
from test_catalogue_kinds import Everything
from test_collection_pushdown import dataframely_counts

import dagster_dataframely as dd
from dagster_dataframely._sidecar.collection_checks import filter_rules
from dagster_dataframely.errors import InvalidSourceError
from dagster_dataframely.sources._spark_session import SparkConnection

pytestmark = GROUP

#: Rows breaking every rule of `Everything` at least once, none breaking all.
EVERYTHING = pl.DataFrame(
    {
        "id": [1, 2, 2, None, 5, 6],
        "amount": [10.0, -1.0, float("nan"), float("inf"), 100.0, None],
        "share": [0.5, 0.0, 1.5, float("nan"), None, 1.0],
        "code": ["AB", "A", "ABCDE", "ab", None, "A\nB"],
        "size": [2, 3, 4, None, 1, 2],
        "tag": ["x", "y", "y", None, "z", None],
        "day": [dt.date(2021, 1, 1), dt.date(2019, 12, 31)] * 3,
    },
    schema_overrides={"day": pl.Date},
)
#: `c % 2 == 0`: a modulo has no SQL form here (as in every dialect).
EVERYTHING_FALLBACKS = {"dy_rule__size__check__even"}


def _checks_run(
    schema: type[dy.Schema], source: dd.sources.Source, resources: dict[str, Any], **settings: Any
) -> tuple[dg.DagsterInstance, dg.ExecuteInProcessResult]:
    spec = dg.AssetSpec("payments", metadata={"dagster/table_name": "payments"})
    checks = dd.schema_checks(schema, asset="payments", source=source, **settings)
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [spec, checks],
        resources=resources,
        instance=instance,
        selection=dg.AssetSelection.all_asset_checks(),
        raise_on_error=False,
    )
    return instance, result


def _read_back(spark: Any, table: str) -> pl.DataFrame:
    frame = pl.from_arrow(spark.table(table).toArrow())
    assert isinstance(frame, pl.DataFrame)
    return frame


@pytest.fixture(scope="module")
def catalog_table(spark: Any) -> str:
    """`Everything`'s rows as a parquet table of the session's catalog."""
    spark_view(spark, "everything_rows", EVERYTHING)
    spark.sql("DROP TABLE IF EXISTS payments")
    spark.sql("CREATE TABLE payments USING parquet AS SELECT * FROM everything_rows")
    return "payments"


def test_every_rule_kind_runs_in_spark_with_dataframelys_counts(
    spark: Any, catalog_table: str
) -> None:
    instance, result = _checks_run(Everything, dd.sources.SparkTableSource(), {"spark": spark})

    outcomes = rule_outcomes(result)
    expected = dataframely_rule_counts(Everything, _read_back(spark, catalog_table))
    counts = {name: count for name, (count, _) in outcomes.items()}
    assert {name: count for name, count in counts.items() if count} == {
        name: count for name, count in expected.items() if count
    }
    assert {name for name, count in expected.items() if count} >= {
        "dy_rule__primary_key",
        "dy_rule__amount__min",
        "dy_rule__amount__nan",
        "dy_rule__amount__inf",
        "dy_rule__code__regex",
        "dy_rule__tag__unique",
        "dy_rule__size__check__even",
        "dy_rule__coded_amounts",
    }
    assert {name for name, (_, engine) in outcomes.items() if engine != "spark"} == (
        EVERYTHING_FALLBACKS
    )
    failing = {name for name, count in counts.items() if count}
    samples = {n: e.metadata.get("dy_failed_sample") for n, e in evaluations(result).items()}
    assert all(samples[name] is not None for name in failing)
    assert "Pushed down to spark" in "\n".join(logs(instance, result))


def test_databricks_sql_runs_on_a_local_spark_with_dataframelys_counts(
    spark: Any, catalog_table: str
) -> None:
    # No Databricks here and no SQL connector installed: the session, seen as a DB-API
    # connection, runs the SQL `SQLTableSource(dialect="databricks")` sends.
    source = dd.sources.SQLTableSource(resource_key="warehouse", dialect="databricks")

    _, result = _checks_run(Everything, source, {"warehouse": SparkConnection(spark)})

    outcomes = rule_outcomes(result)
    expected = dataframely_rule_counts(Everything, _read_back(spark, catalog_table))
    assert {n: c for n, (c, _) in outcomes.items() if c} == {n: c for n, c in expected.items() if c}
    engines = {n for n, (_, engine) in outcomes.items() if engine != "databricks"}
    assert engines == EVERYTHING_FALLBACKS


def test_a_parquet_path_is_checked_by_its_daily_partition(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "payments")
    spark_view(spark, "everything_rows", EVERYTHING)  # not left to an earlier test
    spark.table("everything_rows").write.mode("overwrite").parquet(path)
    days = dg.DailyPartitionsDefinition(start_date="2019-12-31")

    @dg.asset(name="payments", partitions_def=days)
    def payments() -> None:
        """Written by Spark; the run only marks the partition."""

    checks = dd.schema_checks(
        Everything,
        asset="payments",
        partitions_def=days,
        source=dd.sources.SparkTableSource(path=path, partition_expr="day"),
    )
    result = dg.materialize(
        [payments, checks],
        resources={"spark": spark},
        partition_key="2021-01-01",
        raise_on_error=False,
    )

    day = EVERYTHING.filter(pl.col("day") == dt.date(2021, 1, 1))
    outcomes = rule_outcomes(result)
    assert {n: c for n, (c, _) in outcomes.items() if c} == {
        n: c for n, c in dataframely_rule_counts(Everything, day).items() if c
    }
    assert {n for n, (_, engine) in outcomes.items() if engine != "spark"} == EVERYTHING_FALLBACKS


def test_the_component_checks_a_parquet_path_from_yaml(
    spark: Any, catalog_table: str, tmp_path: Path, sandbox: DefsFolderSandbox
) -> None:
    path = str(tmp_path / "payments")
    spark.table(catalog_table).write.parquet(path)
    source = {"kind": "spark", "path": path, "format": "parquet"}
    entry = {"asset": "payments", "schema": "test_catalogue_kinds:Everything", "source": source}
    defs_path = scaffold_checks(sandbox, {"checks": [entry], "assets_outside_defs": True})
    with sandbox.load_component_and_build_defs(defs_path=defs_path) as (_, defs):
        merged = dg.Definitions.merge(
            dg.Definitions(assets=[dg.AssetSpec("payments")], resources={"spark": spark}), defs
        )
        result = merged.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
        )

    outcomes = rule_outcomes(result)
    expected = dataframely_rule_counts(Everything, _read_back(spark, catalog_table))
    assert {n: c for n, (c, _) in outcomes.items() if c} == {n: c for n, c in expected.items() if c}
    assert {n for n, (_, engine) in outcomes.items() if engine != "spark"} == EVERYTHING_FALLBACKS


def test_a_yaml_spark_source_takes_only_its_fields() -> None:
    source = dd.sources.source_from_config("spark", {"path": "/lake/orders", "format": "delta"})

    assert source == dd.sources.SparkTableSource(path="/lake/orders", format="delta")
    assert source.describe() == "Spark delta path '/lake/orders' via resource 'spark'"
    with pytest.raises(InvalidSourceError, match="does not take dialect"):
        dd.sources.source_from_config("spark", {"table": "orders", "dialect": "spark"})


def test_a_utf8_lcase_column_is_counted_by_its_bytes(spark: Any) -> None:
    class Tags(dy.Schema):
        tag = dy.String(primary_key=True, regex="^[a-b]$", check={"a": lambda c: c != "a"})

    frame = pl.DataFrame({"tag": ["a", "A", "b", "B", "b"]})
    spark_view(spark, "tags", frame, collated=("tag",))
    source = dd.sources.SparkTableSource(table="tags")

    _, result = _checks_run(Tags, source, {"spark": spark})

    # By bytes, as in polars: "A" and "B" fail the regex and only "b" repeats (under
    # UTF8_LCASE every tag would match and all five rows repeat a key).
    assert rule_outcomes(result) == {
        "dy_rule__primary_key": (2, "spark"),
        "dy_rule__tag__regex": (2, "spark"),
        "dy_rule__tag__check__a": (1, "spark"),
        "dy_rule__tag__nullability": (0, "spark"),
    }
    counts = {n: c for n, (c, _) in rule_outcomes(result).items()}
    assert {n: c for n, c in counts.items() if c} == dataframely_rule_counts(Tags, frame)


@contextmanager
def _users_settings(spark: Any, settings: dict[str, str]) -> Iterator[None]:
    """`settings` given to the session inside the context, unset after it."""
    for name, value in settings.items():
        spark.conf.set(name, value)
    try:
        yield
    finally:
        for name in settings:
            spark.conf.unset(name)


def test_the_users_session_settings_are_put_back_after_the_check(spark: Any) -> None:
    Stamps, frame = stamps()
    spark_view(spark, "stamps", frame)
    mine = {
        "spark.sql.ansi.enabled": "false",
        "spark.sql.session.timeZone": "America/New_York",
        "spark.sql.caseSensitive": "false",
    }
    with _users_settings(spark, mine):
        _, result = _checks_run(
            Stamps, dd.sources.SparkTableSource(table="stamps"), {"spark": spark}
        )
        assert {name: spark.conf.get(name) for name in mine} == mine

    assert rule_outcomes(result) == {
        "dy_rule__at__min": (1, "spark"),
        "dy_rule__at__nullability": (0, "spark"),
        "dy_rule__total__check__doubled": (1, "spark"),
        "dy_rule__total__nullability": (0, "spark"),
        "dy_rule__total__nan": (0, "spark"),
        "dy_rule__total__inf": (0, "spark"),
        "dy_rule__code__regex": (1, "spark"),
        "dy_rule__code__nullability": (0, "spark"),
    }


def test_a_check_failing_midway_leaves_each_setting_as_the_user_had_it(spark: Any) -> None:
    # Some of the user's settings are what the check pins (given, in their own spelling),
    # some differ (given, or inherited from Spark's default): each must come back as it was,
    # given or not, after a check that fails once the settings are pinned.
    names = (
        "spark.sql.ansi.enabled",
        "spark.sql.session.timeZone",
        "spark.sql.caseSensitive",
        "spark.sql.timestampType",
        "spark.sql.parser.escapedStringLiterals",
    )
    mine = {
        "spark.sql.ansi.enabled": "TRUE",
        "spark.sql.session.timeZone": "Asia/Kolkata",
        "spark.sql.timestampType": "TIMESTAMP_LTZ",
    }
    with _users_settings(spark, mine):
        _, result = _checks_run(
            Everything, dd.sources.SparkTableSource(table="no_such_table"), {"spark": spark}
        )
        after = {name: spark.conf.get(name, None) for name in names}

    assert "SourceReadError" in failure_text(result)
    assert after == {**dict.fromkeys(names), **mine}
    assert spark.conf.get("spark.sql.caseSensitive") == "false"  # Spark's default again


def test_read_dtypes_cast_casts_in_spark_and_counts_the_values_that_do_not_convert(
    spark: Any,
) -> None:
    class Levels(dy.Schema):
        level = dy.Int16(check={"positive": lambda c: c > 0})
        kind = dy.Enum(["a", "b"])

    spark_view(spark, "levels", pl.DataFrame({"level": [1, -2, 3], "kind": ["a", "b", "b"]}))
    spark_view(spark, "bad_levels", pl.DataFrame({"level": [1, 70000], "kind": ["a", "c"]}))

    _, cast = _checks_run(
        Levels, dd.sources.SparkTableSource(table="levels"), {"spark": spark}, read_dtypes="cast"
    )
    _, refused = _checks_run(
        Levels,
        dd.sources.SparkTableSource(table="bad_levels"),
        {"spark": spark},
        read_dtypes="cast",
    )

    assert rule_outcomes(cast) == {
        "dy_rule__level__check__positive": (1, "spark"),
        "dy_rule__level__nullability": (0, "spark"),
        "dy_rule__kind__nullability": (0, "spark"),
    }
    columns = evaluations(refused)["dy_schema__columns"]
    assert not columns.passed
    assert columns.metadata["dy_engine"].value == "spark"
    casts = columns.metadata["dy_casts"].value.records  # type: ignore[attr-defined]
    assert {r.data["column"]: r.data["failed"] for r in casts} == {"level": 1, "kind": 1}


def test_a_collections_filters_run_in_spark_with_dataframelys_counts(spark: Any) -> None:
    frames = ledger_frames()
    for member, frame in frames.items():
        spark_view(spark, f"ledger_{MEMBERS[member]}", frame)
    checks = dd.collection_checks(
        Ledger,
        members=MEMBERS,
        sources={m: dd.sources.SparkTableSource(table=f"ledger_{t}") for m, t in MEMBERS.items()},
    )
    result = dg.materialize(
        [*(dg.AssetSpec(key) for key in MEMBERS.values()), checks],
        resources={"spark": spark},
        selection=dg.AssetSelection.all() | dg.AssetSelection.all_asset_checks(),
        raise_on_error=False,
    )

    outcomes = {
        (e.asset_key.to_user_string(), e.check_name): (
            e.metadata["dy_failed_count"].value,
            e.metadata["dy_engine"].value,
        )
        for e in result.get_asset_check_evaluations()
        if "dy_engine" in e.metadata
    }
    failed = {key: count for key, (count, _) in outcomes.items() if count}
    assert failed == dataframely_counts(Ledger, frames, MEMBERS)
    in_spark = {
        check
        for (_, check), (_, engine) in outcomes.items()
        if check.startswith("dy_filter__") and engine == "spark"
    }
    assert in_spark == {
        f"dy_filter__{rule.name.replace('|', '__')}"
        for rule in filter_rules(Ledger)
        if rule.name not in POLARS_FILTERS
    }


def test_a_missing_table_fails_the_step_naming_the_asset_the_source_and_the_fix(
    spark: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    source = dd.sources.SparkTableSource(table="no_such_table")

    _, result = _checks_run(Everything, source, {"spark": spark})

    message = failure_text(result)
    assert "SourceReadError" in message
    assert "asset payments" in message
    assert "Spark table 'no_such_table' via resource 'spark'" in message
    assert "[TABLE_OR_VIEW_NOT_FOUND] The table or view `no_such_table` cannot be found" in message
    assert "Check the table's name" in message
    # Spark's first line, not its analysed plan; no Java stack logged by pyspark on stderr.
    (raised,) = (line for line in message.splitlines() if line.startswith(_READ_ERROR))
    assert "UnresolvedRelation" not in raised
    assert "org.apache.spark" not in capfd.readouterr().err


def test_a_missing_path_fails_the_step_naming_the_path_and_the_fix(
    spark: Any, tmp_path: Path
) -> None:
    missing = tmp_path / "no_such_folder"

    _, result = _checks_run(
        Everything, dd.sources.SparkTableSource(path=str(missing)), {"spark": spark}
    )

    message = failure_text(result)
    assert "SourceReadError" in message
    assert "asset payments" in message
    assert f"Spark parquet path '{missing}' via resource 'spark'" in message
    assert f"[PATH_NOT_FOUND] Path does not exist: file:{missing}" in message
    assert (
        f"Check the path (path=): the Spark session finds no files at parquet.`{missing}`"
        in message
    )


def test_a_delta_path_in_a_session_without_delta_lake_names_the_fix(
    spark: Any, tmp_path: Path
) -> None:
    # A real Delta table (deltalake writes it); the tests' session has no Delta Lake, as a
    # plain `SparkSession` has not: Spark then reports the table missing.
    table = tmp_path / "orders_delta"
    pl.DataFrame({"amount": [1.0, 2.0]}).write_delta(table)

    _, result = _checks_run(
        Everything, dd.sources.SparkTableSource(path=str(table), format="delta"), {"spark": spark}
    )

    message = failure_text(result)
    assert "SourceReadError" in message
    assert f"Spark delta path '{table}' via resource 'spark'" in message
    assert "[TABLE_OR_VIEW_NOT_FOUND]" in message
    assert "holds a Delta table (a _delta_log folder)" in message
    assert "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension" in message
    assert "dd.sources.DeltaSource(path=...)" in message
    assert "Check the table's name" not in message


def test_a_path_check_leaves_no_view_in_the_users_session(spark: Any, tmp_path: Path) -> None:
    path = str(tmp_path / "payments")
    spark_view(spark, "everything_rows", EVERYTHING)
    spark.table("everything_rows").write.parquet(path)
    days = dg.DailyPartitionsDefinition(start_date="2019-12-31")
    views = {table.name for table in spark.catalog.listTables()}

    @dg.asset(name="payments", partitions_def=days)
    def payments() -> None:
        """Written by Spark; the run only marks the partition."""

    def run(partition_expr: str) -> dg.ExecuteInProcessResult:
        checks = dd.schema_checks(
            Everything,
            asset="payments",
            partitions_def=days,
            source=dd.sources.SparkTableSource(path=path, partition_expr=partition_expr),
        )
        return dg.materialize(
            [payments, checks],
            resources={"spark": spark},
            partition_key="2021-01-01",
            raise_on_error=False,
        )

    checked = run("day")
    failed = run("no_such_column")  # fails after the path was read, selecting the partition

    assert "spark" in {engine for _, engine in rule_outcomes(checked).values()}
    assert "`no_such_column` cannot be resolved" in failure_text(failed)
    assert {table.name for table in spark.catalog.listTables()} == views


def test_a_streamed_result_equals_spark_s_own_arrow_table(spark: Any) -> None:
    """Pins the private pyspark calls `SparkCursor.fetch_batches` streams through (those of
    `toArrow()`): the batches are bounded, and together they are `toArrow()`'s rows, typed
    as it types them (in the order partitions finish: a table's rows have none)."""
    query = (
        "SELECT id, CAST(id AS DECIMAL(12, 2)) AS amount, CAST(id AS STRING) AS text, "
        "TIMESTAMP '2024-03-10 12:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) AS instant, "
        "TIMESTAMP_NTZ '2024-03-10 12:00:00' AS wall FROM range(0, 2500, 1, 3)"
    )
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "1000")
    try:
        cursor = SparkConnection(spark).cursor()
        cursor.execute(query)
        batches = list(cursor.fetch_batches())
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    whole = pl.from_arrow(spark.sql(query).toArrow())

    assert len(batches) >= 3
    assert max(batch.height for batch in batches) <= 1000
    assert pl.concat(batches).sort("id").equals(whole.sort("id"))


def test_a_job_that_fails_while_streaming_raises_sparks_error(spark: Any) -> None:
    cursor = SparkConnection(spark).cursor()
    cursor.execute(
        "SELECT CASE WHEN id = 2400 THEN raise_error('row 2400 is broken') ELSE id END AS id "
        "FROM range(0, 2500, 1, 3)"
    )

    with pytest.raises(Exception, match="row 2400 is broken") as raised:
        for _ in cursor.fetch_batches():
            pass
    assert "\n" not in raised.value.summary  # type: ignore[attr-defined]


_READ_ERROR = "dagster_dataframely.errors.SourceReadError: "


def test_pysparks_query_log_is_silenced_only_while_the_check_queries(spark: Any) -> None:
    from pyspark.logger import PySparkLogger

    kinds = ("SQL", "DataFrame")
    loggers = [PySparkLogger.getLogger(f"{kind}QueryContextLogger") for kind in kinds]
    cursor = SparkConnection(spark).cursor()
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND") as raised:
        cursor.execute("SELECT * FROM no_such_table")

    assert raised.value.sqlstate == "42P01"  # type: ignore[attr-defined]
    assert raised.value.summary.startswith("[TABLE_OR_VIEW_NOT_FOUND]")  # type: ignore[attr-defined]
    assert "\n" not in raised.value.summary  # type: ignore[attr-defined]
    # the user's logging of their own queries is theirs
    assert [logger.disabled for logger in loggers] == [False, False]


def test_a_resource_that_is_no_session_is_named(spark: Any) -> None:
    _, result = _checks_run(Everything, dd.sources.SparkTableSource(), {"spark": "local"})

    message = failure_text(result)
    assert "SourceConnectionError" in message
    assert "str is not a SparkSession" in message
    assert "resource 'spark'" in message


def test_a_table_and_a_path_together_are_refused() -> None:
    with pytest.raises(InvalidSourceError, match="the table's name or its path, not both"):
        dd.sources.SparkTableSource(table="payments", path="/lake/payments")


#: A check of SOURCE (table `rows` unless replaced) whose resource is the session SESSION
#: defines, run in a process of its own: it prints the failed step's error chain.
_CHECK = """
import dagster as dg, dataframely as dy
import dagster_dataframely as dd
from pyspark.sql import SparkSession

class Rows(dy.Schema):
    id = dy.Int64()

SESSION
checks = dd.schema_checks(Rows, asset="rows", source=SOURCE)
result = dg.materialize(
    [dg.AssetSpec("rows"), checks], resources={"spark": session},
    selection=dg.AssetSelection.all_asset_checks(), raise_on_error=False,
)
(failure,) = result.get_step_failure_events()
print(failure.step_failure_data.error.to_string())
"""
#: A function that starts a session when the check calls it.
_STARTED = """
def session():
    return SparkSession.builder.master("local[1]").getOrCreate()
"""
#: A local session as a user starts one, quiet.
_LOCAL = """
session = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
session = session.getOrCreate()
session.sparkContext.setLogLevel("OFF")
"""


#: A session stopped before the check.
_STOPPED = _LOCAL + "session.stop()\n"


def _step_failure(
    script: str,
    *,
    source: str = 'dd.sources.SparkTableSource(table="rows")',
    error: str = "SourceConnectionError",
    command: tuple[str, ...] = (),
    quiet: bool = False,
    **env: str,
) -> str:
    """The failed check step's error chain of `_CHECK` with the session `script` defines and
    `source`, run in a process of its own (its own JVM, or none; `command` before it) with
    `env` over this environment; the step failed with `error` (`quiet`: and pyspark logged
    no Java stack trace on stderr)."""
    code = _CHECK.replace("SESSION", script).replace("SOURCE", source)
    done = subprocess.run(
        [*command, sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert error in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert not quiet or "org.apache.spark" not in done.stderr
    return done.stdout


#: As root, a file's permissions bind only a process without the capabilities that override
#: them: the check runs without them, as a user the storage refuses would.
_NO_OVERRIDE = ("setpriv", "--bounding-set", "-dac_override,-dac_read_search")


def test_a_path_the_session_may_not_read_names_the_missing_grant(
    spark: Any, tmp_path: Path
) -> None:
    path = tmp_path / "rows"
    spark.range(3).write.parquet(str(path))
    path.chmod(0)
    try:
        failure = _step_failure(
            _LOCAL,
            source=f"dd.sources.SparkTableSource(path={str(path)!r})",
            error="SourceReadError",
            command=_NO_OVERRIDE if os.geteuid() == 0 else (),
            quiet=True,
        )
    finally:
        path.chmod(0o755)

    assert "Could not check asset rows in Spark parquet path" in failure
    assert "AccessDeniedException" in failure
    assert "Give the user the Spark session runs as read access to" in failure
    (raised,) = (line for line in failure.splitlines() if line.startswith(_READ_ERROR))
    assert "AccessDeniedException" in raised
    assert "at org.apache" not in raised  # Spark's summary, not its Java stack


def test_a_session_that_cannot_start_without_java_names_the_fix(tmp_path: Path) -> None:
    failure = _step_failure(_STARTED, JAVA_HOME=str(tmp_path / "no-java"), PATH="/nonexistent")

    assert "Could not connect to the database of asset rows" in failure
    assert "needs a Java runtime (JAVA_HOME, or java on PATH)" in failure


def test_a_stopped_session_fails_the_check_as_a_connection_that_cannot_open() -> None:
    failure = _step_failure(_STOPPED)

    assert "Could not connect to the database of asset rows" in failure
    assert "Spark table 'rows' via resource 'spark'" in failure
    assert "a stopped session runs no query" in failure
