"""`keep_failing_rows=` on the real PostgreSQL server: rows selected and inserted inside the
database (and, for a rule that falls back to polars, selected there and inserted through the
same connection, as are rows read cast), each flag counting what Dataframely counts; a role
that may not create the table gets the GRANT it needs, and the verdicts all the same."""

import threading
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from postgres import PostgresResource, PostgresServer
from support import evaluations, logs, rule_outcomes
from test_pushdown import _outcomes
from test_sql_source import DAYS, Payments, _polars_counts, _source, server

import dagster_dataframely as dd

__all__ = ["server"]  # the module's fixture: the table `finance.payments`

FAILURES = "finance.payments__dy_failures"


class Exact(Payments):
    """`Payments` without its one rule PostgreSQL cannot evaluate exactly."""

    note = dy.String(nullable=True)


def _run(
    server: PostgresServer, schema: Any, *, user: str = "dd", **keep: Any
) -> tuple[dg.DagsterInstance, dg.ExecuteInProcessResult]:
    spec = dg.AssetSpec("payments", metadata={"dagster/table_name": "finance.payments"})
    checks = dd.schema_checks(
        schema, asset="payments", source=_source(), keep_failing_rows=True, **keep
    )
    job = dg.define_asset_job("checks", selection=dg.AssetSelection.checks_for_assets("payments"))
    defs = dg.Definitions(
        assets=[spec],
        asset_checks=[checks],
        jobs=[job],
        resources={"warehouse": PostgresResource(conninfo=server.conninfo_for(user))},
    )
    instance = dg.DagsterInstance.ephemeral()
    result = defs.resolve_job_def("checks").execute_in_process(
        instance=instance, raise_on_error=False
    )
    return instance, result


def _kept(server: PostgresServer) -> pl.DataFrame:
    with server.connect() as connection:
        cursor = connection.execute(f"SELECT * FROM {FAILURES}")
        names = [column.name for column in cursor.description or []]
        return pl.DataFrame(cursor.fetchall(), schema=names, orient="row")


def _flag_counts(frame: pl.DataFrame) -> dict[str, int]:
    return {
        name: int(frame[name].sum())
        for name in frame.columns
        if name.startswith("dy_rule__") and frame[name].sum()
    }


def test_failing_rows_are_inserted_by_a_select_inside_postgres(server: PostgresServer) -> None:
    instance, result = _run(server, Exact)

    kept = _kept(server)
    counts = {name: n for name, n in _polars_counts().items() if n and name in _flag_counts(kept)}
    assert _flag_counts(kept) == counts
    assert counts == {n: f for n, (f, _, _) in _outcomes(result).items() if f}
    sent = [line for line in logs(instance, result) if line.startswith("Pushed down to postgres:")]
    assert any('INSERT INTO "finance"."payments__dy_failures"' in line for line in sent)
    assert not any("VALUES" in line for line in sent)
    query = evaluations(result)["dy_rule__currency__regex"].metadata["dy_failing_rows"].value
    with server.connect() as connection:
        (rows,) = connection.execute(f"SELECT count(*) FROM ({query}) AS q").fetchone()  # type: ignore[misc]
    assert rows == counts["dy_rule__currency__regex"]


def test_a_rule_in_polars_has_its_rows_written_through_the_same_connection(
    server: PostgresServer,
) -> None:
    _, result = _run(server, Payments)

    kept = _kept(server)
    assert _flag_counts(kept) == {n: c for n, c in _polars_counts().items() if c}
    assert set(kept["dy_run_id"]) == {result.run_id}
    assert "polars" in _outcomes(result)["dy_rule__note__regex"][2]


class Widened(Exact):
    """`Exact` with `level` read as an `Int32`: the `smallint` column is cast on read."""

    level = dy.Int32(nullable=True, is_in=[1, 2])


def test_rows_read_cast_are_kept_in_postgres_not_in_files(server: PostgresServer) -> None:
    _, result = _run(server, Widened, read_dtypes="cast")

    kept = _kept(server)
    failing = {name: count for name, (count, _) in rule_outcomes(result).items() if count}
    assert failing["dy_rule__level__is_in"] == 1
    assert _flag_counts(kept) == failing
    assert set(kept["dy_run_id"]) == {result.run_id}
    check = evaluations(result)["dy_rule__level__is_in"]
    assert check.metadata["dy_failing_rows_table"].value == '"finance"."payments__dy_failures"'


def test_a_role_without_create_gets_the_grant_and_the_verdicts(server: PostgresServer) -> None:
    with server.connect() as connection:
        connection.execute(f"DROP TABLE IF EXISTS {FAILURES}")
        connection.execute("DROP ROLE IF EXISTS reader")
        connection.execute("CREATE ROLE reader LOGIN")
        connection.execute("GRANT USAGE ON SCHEMA finance TO reader")
        connection.execute("GRANT SELECT ON finance.payments TO reader")

    _, result = _run(server, Exact, user="reader")

    outcomes = _outcomes(result)
    assert {n: f for n, (f, _, _) in outcomes.items() if f} == {
        n: c for n, c in _polars_counts().items() if c and n in outcomes
    }
    error = evaluations(result)["dy_rule__primary_key"].metadata["dy_failing_rows_error"].value
    assert error.startswith("FailingRowsWriteError: ") and "Could not check" not in error
    assert "role 'reader'" in error and '"finance"."payments__dy_failures"' in error
    assert 'GRANT CREATE ON SCHEMA "finance" TO "reader"' in error
    assert "reported all the same" in error


def test_concurrent_partitions_keep_each_others_rows(server: PostgresServer) -> None:
    @dg.asset(
        name="payments", partitions_def=DAYS, metadata={"dagster/table_name": "finance.payments"}
    )
    def payments() -> None:
        """Loaded by another tool; the run only marks the partition."""

    checks = dd.schema_checks(
        Exact,
        asset="payments",
        partitions_def=DAYS,
        source=_source(partition_expr="paid_at"),
        keep_failing_rows=True,
    )
    resources = {"warehouse": PostgresResource(conninfo=server.conninfo)}
    days = ("2024-01-01", "2024-01-02")

    errors: list[str] = []

    def run(day: str) -> None:
        result = dg.materialize(
            [payments, checks], resources=resources, partition_key=day, raise_on_error=False
        )
        errors.extend(
            str(e.metadata["dy_failing_rows_error"].value)
            for e in evaluations(result).values()
            if "dy_failing_rows_error" in e.metadata
        )

    with server.connect() as connection:
        connection.execute(f"DROP TABLE IF EXISTS {FAILURES}")
    for day in days:  # alone: what each day keeps
        run(day)
    alone = _kept(server).group_by("dy_partition_key").len().sort("dy_partition_key")
    threads = [threading.Thread(target=lambda d=d: [run(d) for _ in range(3)]) for d in days]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    together = _kept(server).group_by("dy_partition_key").len().sort("dy_partition_key")
    assert not errors
    assert together.equals(alone) and alone["dy_partition_key"].to_list() == list(days)
    assert alone["len"].min() > 0  # type: ignore[operator]
