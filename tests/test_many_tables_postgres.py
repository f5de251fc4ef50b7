"""A hundred partitioned PostgreSQL tables checked as a team checks them: `dg launch --job
checks --partition ...` with a DAGSTER_HOME (the multiprocess executor) against the suite's
real server, through a role that reads them, with one table missing, one it has no grant on
and one another session holds locked, in the middle of the others."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from postgres import PostgresServer
from support import dg_launch

N = 100
DAY = "2024-01-02"
MISSING, UNGRANTED, LOCKED = "t037", "t041", "t063"


class Item(dy.Schema):
    id = dy.Int64(primary_key=True)
    day = dy.Date()
    name = dy.String()
    qty = dy.Int64(min=0)


LOCATION = """\
from contextlib import contextmanager

import dagster as dg
import dataframely as dy
import psycopg

import dagster_dataframely as dd


class Item(dy.Schema):
    id = dy.Int64(primary_key=True)
    day = dy.Date()
    name = dy.String()
    qty = dy.Int64(min=0)


class Warehouse(dg.ConfigurableResource):
    conninfo: str

    @contextmanager
    def get_connection(self):
        with psycopg.connect(self.conninfo) as connection:
            yield connection


daily = dg.DailyPartitionsDefinition(start_date="2024-01-01", timezone="America/New_York")
tables = [
    dg.AssetSpec(
        f"t{{i:03d}}", partitions_def=daily, metadata={{"dagster/table_name": f"shop.t{{i:03d}}"}}
    )
    for i in range({n})
]
defs = dd.with_schemas(
    dg.Definitions(assets=tables, resources={{"warehouse": Warehouse(conninfo={conninfo!r})}}),
    {{spec.key: Item for spec in tables}},
    source=dd.sources.SQLTableSource(
        resource_key="warehouse", dialect="postgres", partition_expr="day"
    ),
    checks_job="checks",
)
"""


def _frame(i: int, day: date) -> pl.DataFrame:
    """Table `i`'s rows of `day`: on the checked day, a duplicate key in every 7th table, a
    null name in every 5th and a negative quantity in every 11th."""
    checked = day == date(2024, 1, 2)
    base = 0 if checked else 100
    ids = [base + n for n in range(10)] + ([base + 3] if checked and i % 7 == 3 else [])
    return pl.DataFrame(
        {
            "id": ids,
            "day": [day] * len(ids),
            "name": [None if (checked and i % 5 == 1 and n == 2) else "x" for n in range(len(ids))],
            "qty": [-1 if (checked and i % 11 == 2 and n == 4) else n for n in range(len(ids))],
        },
        schema={"id": pl.Int64, "day": pl.Date, "name": pl.String, "qty": pl.Int64},
    )


def _warehouse(server: PostgresServer) -> str:
    """The tables, and the conninfo of a role that reads all but `UNGRANTED`, waiting at most
    two seconds for a lock."""
    with server.connect() as connection:
        connection.execute("drop schema if exists shop cascade")
        connection.execute("drop role if exists checker")
        connection.execute("create role checker login")
        connection.execute("create schema shop")
        connection.execute("grant usage on schema shop to checker")
        for i in range(N):
            name = f"t{i:03d}"
            if name == MISSING:
                continue
            connection.execute(
                f"create table shop.{name} (id bigint, day date, name text, qty bigint)"
            )
            with connection.cursor() as cursor:
                for day in (date(2024, 1, 2), date(2024, 1, 3)):
                    cursor.executemany(
                        f"insert into shop.{name} values (%s, %s, %s, %s)",
                        _frame(i, day).rows(),
                    )
            if name != UNGRANTED:
                connection.execute(f"grant select on shop.{name} to checker")
    return server.conninfo_for("checker") + " options='-c lock_timeout=2000'"


def _expected() -> dict[tuple[str, str], int]:
    expected = {}
    for i in range(N):
        name = f"t{i:03d}"
        if name in (MISSING, UNGRANTED, LOCKED):
            continue
        _, failure = Item.filter(_frame(i, date(2024, 1, 2)))
        for rule, count in failure.counts().items():
            expected[(name, "dy_rule__" + rule.replace("|", "__"))] = count
    return expected


def test_a_hundred_postgres_tables_one_partition_with_three_unreadable(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    conninfo = _warehouse(postgres)
    (tmp_path / "location.py").write_text(LOCATION.format(n=N, conninfo=conninfo))
    with postgres.connect() as holder:
        holder.autocommit = False
        holder.execute(f"lock table shop.{LOCKED} in access exclusive mode")
        launched, home = dg_launch(tmp_path, "checks", partition=DAY)
        holder.rollback()

    output = launched.stdout + launched.stderr
    with dg.DagsterInstance.from_config(str(home)) as instance:
        (run,) = instance.get_runs()
        evaluations: list[Any] = [
            entry.dagster_event.event_specific_data  # type: ignore[union-attr]
            for entry in instance.all_logs(
                run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION
            )
        ]
        steps = {
            entry.step_key
            for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START)
        }
    assert len(steps) == 2, steps
    assert {e.partition for e in evaluations} == {DAY}
    assert len({e.asset_key for e in evaluations}) == N
    counts = {
        (e.asset_key.to_user_string(), e.check_name): e.metadata["dy_failed_count"].value
        for e in evaluations
        if "dy_failed_count" in e.metadata
    }
    expected = _expected()
    assert {key: counts.get(key) for key in expected} == expected
    for name, said in (
        (MISSING, "does not exist"),
        (UNGRANTED, "permission denied"),
        (LOCKED, "lock timeout"),
    ):
        own = [e for e in evaluations if e.asset_key == dg.AssetKey(name)]
        assert own and all(not e.passed for e in own), name
        assert all(said in e.metadata["dy_error"].value for e in own), own[0].metadata
    assert run.status == dg.DagsterRunStatus.FAILURE
    assert launched.returncode != 0
    assert "could not be checked" in output
