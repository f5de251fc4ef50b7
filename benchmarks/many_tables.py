"""Benchmark: the checks of many tables in DuckDB or PostgreSQL, against `dbt test` on them.

    .venv/bin/python benchmarks/many_tables.py [--database duckdb|postgres] [--tables 100]
        [--rows 100_000] [--repeat 2] [--contenders dbt multiprocess in_process one_per_step
        execute_in_process floor floor_in_process]

N tables `shop.t0000`... of R rows each, every one with the same five checks, as a team adds
them to all its tables: a primary key (unique, and not null), a second not-null, an `is_in`
and a minimum. About 1% of a table's rows fail a rule where that table fails it; each rule
fails in some tables and passes in the others (table i fails `unique` where i % 2 == 0, see
`FAILS`), so the verdicts differ from table to table. The tables are in one DuckDB file
(`--database duckdb`, the default) or in a throwaway PostgreSQL server started as the tests
start theirs (`--database postgres`, `tests/postgres.py`), built by the same SQL with the same
rows and vacuumed and analyzed there. The contenders, on the same tables:

- `dbt`: `dbt test --threads 4` (dbt-duckdb or dbt-postgres, in `.bench-venv`, built or
  updated as `compare/run.py` does), a project of dbt sources with `unique`, `not_null` x2,
  `accepted_values` and a generic test of its own, `min_value`; its `target/` removed before
  each run (a cold parse);
- `multiprocess`: the checks job of `dd.with_schemas(..., checks_job="checks")` through
  `dagster job execute` with a fresh DAGSTER_HOME, the default multiprocess executor, its
  source `DuckDBTableSource()`, or `SQLTableSource(dialect="postgres")` through a
  `get_connection()` resource as docs/sources.md defines one;
- `in_process`: the same with `checks_job_executor=dg.in_process_executor`;
- `one_per_step`: the same as `multiprocess` with `checks_per_step=1`, one step per asset;
- `execute_in_process`: `job.execute_in_process()` in a fresh interpreter;
- `floor` and `floor_in_process`: Dagster's own cost of the same checks, the floor under
  `multiprocess` and `in_process`: the same job, steps and check specs (names, blocking),
  each check passing at once without reading anything. What a contender costs beyond its
  floor is what the package adds to Dagster; the floor is what any one-check-per-rule
  Dagster job pays for as many checks through the CLI and its instance.

Dataframely states `is_in` on a string as a column check, `dy.String(check=lambda s:
s.is_in([...]))`, which the package translates to SQL (`dy_engine: duckdb` or `postgres`), as
it does the other four rules. Its checks job also runs each asset's `dy_schema__columns`
check, which dbt has no counterpart of.

Each contender runs in a fresh process tree, round-robin: wall seconds, and CPU seconds and
peak RSS of every process of the tree (`getrusage(RUSAGE_CHILDREN)` of a measuring process
around it; its peak is that of the tree's largest single process, not their sum), medians.
On PostgreSQL the server's CPU in the run too (`srv`: its backends and parallel workers, as
`pushdown_postgres.py` counts it), since pushed-down work is the server's, and `cost`, the
client's CPU plus the server's, each with its ratio to dbt's. Each run's failing checks,
dbt's too, are compared with the ones the data were built to fail. For the Dagster CLI
contenders, each run also prints what the step summary cost: the most time a step took from
its last event to its summary's log entry, by the events' own timestamps.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _measure import (
    MB,
    child_figures,
    cost,
    dispatch,
    interleaved,
    load_average,
    postmaster,
    server_cpu,
)

HERE = Path(__file__).resolve().parent
DBT = HERE.parent / ".bench-venv" / "bin" / "dbt"
CONTENDERS = (
    "dbt", "multiprocess", "in_process", "one_per_step", "execute_in_process", "floor",
    "floor_in_process",
)  # fmt: skip
#: Each floor contender, and the contender whose checks it runs without their work.
FLOORS = {"floor": "multiprocess", "floor_in_process": "in_process"}
STATUSES = ("placed", "shipped", "returned")
#: Each rule, and the tables that fail it: table i where i % FAILS[rule] == 0. The id's nulls
#: are only in tables whose key repeats too: dbt's `unique` skips nulls, Dataframely's
#: primary key counts them, and both then fail it.
FAILS = {"unique": 2, "id_not_null": 4, "customer_not_null": 3, "status_in": 5, "amount_min": 7}
#: Each rule by its Dagster check's name.
CHECKS = {
    "dy_rule__primary_key": "unique",
    "dy_rule__id__nullability": "id_not_null",
    "dy_rule__customer__nullability": "customer_not_null",
    "dy_rule__status__check": "status_in",
    "dy_rule__amount__min": "amount_min",
}

LOCATION = '''\
"""{n} tables, each with the same five checks: the benchmark's code location."""
import dagster as dg
import dataframely as dy

import dagster_dataframely as dd
{resource}


class Orders(dy.Schema):
    id = dy.Int64(primary_key=True)
    customer = dy.String()
    status = dy.String(nullable=True, check=lambda s: s.is_in({statuses!r}))
    amount = dy.Int64(nullable=True, min=0)


tables = [
    dg.AssetSpec(f"t{{i:04d}}", metadata={{"dagster/table_name": f"shop.t{{i:04d}}"}})
    for i in range({n})
]
defs = dd.with_schemas(
    dg.Definitions(assets=tables, resources={{{resources}}}),
    {{spec.key: Orders for spec in tables}},
    source={source},
    checks_job="checks",
    checks_per_step={per_step},
    checks_job_executor={executor},
)
'''

FLOOR = '''\
"""Dagster's own cost of `location_{measured}`'s checks: the same job, steps and check specs,
each check passing without reading anything."""
import dagster as dg

import location_{measured}


def passing(checks: dg.AssetChecksDefinition) -> dg.AssetChecksDefinition:
    @dg.multi_asset_check(
        specs=list(checks.check_specs), name=checks.node_def.name, can_subset=True
    )
    def floor(context: dg.AssetCheckExecutionContext):
        for key in context.selected_asset_check_keys:
            yield dg.AssetCheckResult(asset_key=key.asset_key, check_name=key.name, passed=True)

    return floor


def floor_of(measured: dg.Definitions) -> dg.Definitions:
    checks = [passing(each) for each in measured.asset_checks]
    job = dg.define_asset_job(
        "checks",
        selection=dg.AssetSelection.checks(*checks),
        executor_def=measured.resolve_job_def("checks").executor_def,
    )
    return dg.Definitions(assets=list(measured.assets), asset_checks=checks, jobs=[job])


defs = floor_of(location_{measured}.defs)
'''

#: The code location's PostgreSQL resource, as docs/sources.md defines one.
POSTGRES_RESOURCE = """\
from contextlib import contextmanager

import psycopg


class PostgresResource(dg.ConfigurableResource):
    conninfo: str

    @contextmanager
    def get_connection(self):
        with psycopg.connect(self.conninfo) as connection:
            yield connection
"""

#: `execute_in_process` in a fresh interpreter: the failing checks, as one JSON line.
IN_PROCESS = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from location_multiprocess import defs
result = defs.resolve_job_def("checks").execute_in_process(raise_on_error=False)
print(json.dumps([[e.asset_key.to_user_string(), e.check_name, e.passed]
                  for e in result.get_asset_check_evaluations()]))
"""

MIN_VALUE = """\
{% test min_value(model, column_name, min) %}
select {{ column_name }} from {{ model }} where {{ column_name }} < {{ min }}
{% endtest %}
"""


def table(i: int) -> str:
    return f"t{i:04d}"


def expected(tables: int) -> set[tuple[str, str]]:
    """The (table, rule) pairs the data were built to fail."""
    return {(table(i), rule) for i in range(tables) for rule, k in FAILS.items() if i % k == 0}


@dataclass(frozen=True)
class Warehouse:
    """The database the tables are built in, and how each contender reaches it."""

    #: What it is, for the report's first line.
    name: str
    #: A connection to build the tables with (a context manager that closes it).
    connect: Callable[[], Any]
    #: The code location's resource: what it imports and defines, its entry in the resources,
    #: and the source the checks read through it.
    resource: str
    resources: str
    source: str
    #: dbt's target (profiles.yml) on it.
    profile: dict[str, Any]
    #: Statements run once the tables are built.
    finish: tuple[str, ...] = ()
    #: The server's postmaster, whose CPU each run counts; None for an embedded database.
    postmaster: int | None = None


@contextmanager
def warehouse(database: str, folder: Path) -> Iterator[Warehouse]:
    """`database`, for as long as the benchmark runs: a file in `folder` (DuckDB), or a
    throwaway server started as the tests start theirs (PostgreSQL, `tests/postgres.py`)."""
    if database == "duckdb":
        import duckdb

        path = str(folder / "warehouse.duckdb")
        yield Warehouse(
            name="one DuckDB file",
            connect=lambda: duckdb.connect(path),
            resource="from dagster_duckdb import DuckDBResource\n",
            resources=f'"duckdb": DuckDBResource(database={path!r})',
            source="dd.sources.DuckDBTableSource()",
            profile={"type": "duckdb", "path": path},
        )
        return
    sys.path.insert(0, str(HERE.parent / "tests"))
    from postgres import DATABASE, USER, running_server

    with running_server() as server:
        with server.connect() as connection:
            server_pid = postmaster(connection)
        yield Warehouse(
            name="a PostgreSQL server",
            connect=server.connect,
            resource=POSTGRES_RESOURCE,
            resources=f'"postgres": PostgresResource(conninfo={server.conninfo!r})',
            source='dd.sources.SQLTableSource(resource_key="postgres", dialect="postgres")',
            profile={
                "type": "postgres",
                "host": server.host,
                "port": server.port,
                "user": USER,
                "password": "",
                "dbname": DATABASE,
                "schema": "shop",
            },
            # Statistics for the planner, and hint bits set so that no check's scan writes.
            finish=("vacuum analyze",),
            postmaster=server_pid,
        )


def build(folder: Path, warehouse: Warehouse, tables: int, rows: int) -> None:
    """The tables, one code location per Dagster contender, and the dbt project."""

    def fails(rule: str, i: int) -> str:
        return "true" if i % FAILS[rule] == 0 else "false"

    # One SQL text for DuckDB and PostgreSQL: a bigint series `n`, an array literal.
    statuses = ", ".join(f"'{status}'" for status in STATUSES)
    with warehouse.connect() as connection:
        connection.execute("create schema shop")
        for i in range(tables):
            # Rows 1, 2, 3, 4 and 5 of each hundred fail a rule each where table i fails it.
            connection.execute(f"""
                create table shop.{table(i)} as select
                    case when {fails("id_not_null", i)} and n % 100 = 5 then null
                         when {fails("unique", i)} and n % 100 = 1 then n - 1
                         else n end as id,
                    case when {fails("customer_not_null", i)} and n % 100 = 2 then null
                         else 'c' || (n % 1000) end as customer,
                    case when {fails("status_in", i)} and n % 100 = 3 then 'lost'
                         else (array[{statuses}])[n % 3 + 1] end as status,
                    case when {fails("amount_min", i)} and n % 100 = 4 then -1
                         else n % 500 end as amount
                from generate_series(0::bigint, {rows - 1}) as series(n)
            """)
        for statement in warehouse.finish:
            connection.execute(statement)
    if warehouse.postmaster is not None:
        (folder / "postmaster").write_text(str(warehouse.postmaster))
    for name, per_step, executor in (
        ("multiprocess", 50, None),
        ("in_process", 50, "dg.in_process_executor"),
        ("one_per_step", 1, None),
    ):
        (folder / f"location_{name}.py").write_text(
            LOCATION.format(
                n=tables,
                statuses=list(STATUSES),
                resource=warehouse.resource,
                resources=warehouse.resources,
                source=warehouse.source,
                per_step=per_step,
                executor=executor,
            )
        )
    for name, measured in FLOORS.items():
        (folder / f"location_{name}.py").write_text(FLOOR.format(measured=measured))
    project = folder / "dbt"
    (project / "models").mkdir(parents=True)
    (project / "macros").mkdir()
    (project / "macros" / "min_value.sql").write_text(MIN_VALUE)
    (project / "dbt_project.yml").write_text(
        'name: many_tables\nversion: "1.0"\nconfig-version: 2\nprofile: many_tables\n'
        "flags:\n  send_anonymous_usage_stats: false\n"
    )
    # YAML is a superset of JSON: the profile and the sources written as JSON.
    target = {**warehouse.profile, "threads": 4}
    profile = {"many_tables": {"target": "bench", "outputs": {"bench": target}}}
    (project / "profiles.yml").write_text(json.dumps(profile, indent=1))
    sources = {
        "version": 2,
        "sources": [
            {"name": "shop", "schema": "shop", "tables": [dbt_table(i) for i in range(tables)]}
        ],
    }
    (project / "models" / "sources.yml").write_text(json.dumps(sources, indent=1))
    (folder / "expected.json").write_text(json.dumps(sorted(expected(tables))))


def dbt_table(i: int) -> dict[str, Any]:
    """Table i as a dbt source with the five tests, each named `<table>__<rule>`."""

    def test(kind: str, rule: str, **arguments: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"name": f"{table(i)}__{rule}"}
        if arguments:
            body["arguments"] = arguments
        return {kind: body}

    return {
        "name": table(i),
        "columns": [
            {
                "name": "id",
                "data_tests": [test("unique", "unique"), test("not_null", "id_not_null")],
            },
            {"name": "customer", "data_tests": [test("not_null", "customer_not_null")]},
            {
                "name": "status",
                "data_tests": [test("accepted_values", "status_in", values=list(STATUSES))],
            },
            {"name": "amount", "data_tests": [test("min_value", "amount_min", min=0)]},
        ],
    }


def command(contender: str, folder: Path, home: Path) -> tuple[list[str], dict[str, str]]:
    """The command line of `contender` and its environment."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if contender == "dbt":
        project = folder / "dbt"
        env.update(DBT_SEND_ANONYMOUS_USAGE_STATS="false", DO_NOT_TRACK="1")
        return [str(DBT), "test", "--project-dir", str(project), "--profiles-dir", str(project),
                "--threads", "4"], env  # fmt: skip
    if contender == "execute_in_process":
        return [sys.executable, "-c", IN_PROCESS, str(folder)], env
    env.update(DAGSTER_HOME=str(home), NO_COLOR="1")
    dagster = Path(sys.executable).parent / "dagster"
    return [str(dagster), "job", "execute", "-f", f"location_{contender}.py", "-j", "checks"], env


def measure(contender: str, folder_name: str) -> dict[str, Any]:
    """One run of `contender` in a process tree of its own: its figures and failing checks."""
    folder = Path(folder_name)
    shutil.rmtree(folder / "dbt" / "target", ignore_errors=True)
    pidfile = folder / "postmaster"
    server = int(pidfile.read_text()) if pidfile.exists() else None
    with tempfile.TemporaryDirectory(prefix="home-", dir=folder) as home_name:
        home = Path(home_name)
        (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
        argv, env = command(contender, folder, home)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        server_before = server_cpu(server) if server else 0.0
        start = time.perf_counter()
        run = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # The run's backends and their parallel workers: pushed-down work is the server's.
        served = server_cpu(server) - server_before if server else 0.0
        if run.returncode not in (0, 1):
            sys.exit(
                f"{contender} exited {run.returncode}:\n{run.stdout[-3000:]}{run.stderr[-3000:]}"
            )
        failing, checked = verdicts(contender, folder, home, run.stdout)
        measured = contender not in ("dbt", "execute_in_process", *FLOORS)
        summary = summary_ms(home) if measured else -1.0
    wanted = {tuple(pair) for pair in json.loads((folder / "expected.json").read_text())}
    if contender in FLOORS:
        wanted = set()  # every check of a floor passes
    return {
        "seconds": seconds,
        "cpu_seconds": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "server_cpu_seconds": served,
        "peak_mb": after.ru_maxrss * 1024 / MB,
        "checked": checked,
        "failing": len(failing),
        "agrees": float(failing == wanted),
        "exit": run.returncode,
        "summary_ms": summary,
    }


def verdicts(
    contender: str, folder: Path, home: Path, stdout: str
) -> tuple[set[tuple[str, str]], int]:
    """The (table, rule) pairs that failed in the run, and how many of the five checks per
    table it evaluated."""
    if contender == "dbt":
        results = json.loads((folder / "dbt" / "target" / "run_results.json").read_text())
        found = [
            (tuple(r["unique_id"].split(".")[2].split("__")), r["status"] == "pass")
            for r in results["results"]
        ]
    elif contender == "execute_in_process":
        found = [
            ((asset, CHECKS[name]), passed)
            for asset, name, passed in json.loads(stdout.strip().splitlines()[-1])
            if name in CHECKS
        ]
    else:
        found = dagster_verdicts(home)
    return {pair for pair, passed in found if not passed}, len(found)


def dagster_verdicts(home: Path) -> list[tuple[tuple[str, str], bool]]:
    """The rule checks' verdicts of the one run in the Dagster instance at `home`."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        (record,) = instance.get_runs()
        logs = instance.all_logs(record.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        evaluations = [entry.dagster_event.event_specific_data for entry in logs]  # type: ignore[union-attr]
    return [
        ((e.asset_key.to_user_string(), CHECKS[e.check_name]), e.passed)
        for e in evaluations
        if e.check_name in CHECKS
    ]


def summary_ms(home: Path) -> float:
    """The most milliseconds a step of the run took from its last event before its summary to
    the summary's log entry (the events' own timestamps): the summary's whole cost, formatting
    what the step already holds and logging it."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        (record,) = instance.get_runs()
        logs = instance.all_logs(record.run_id)
    last: dict[str, float] = {}
    gaps = [0.0]
    for entry in logs:
        if entry.step_key is None:
            continue
        if entry.user_message.startswith("dagster-dataframely: "):
            gaps.append(entry.timestamp - last[entry.step_key])
        last[entry.step_key] = entry.timestamp
    return 1000 * max(gaps)


def main(args: argparse.Namespace) -> None:
    if "dbt" in args.contenders:  # built, or updated where its requirements changed
        sys.path.insert(0, str(HERE))
        from compare.run import bench_python

        bench_python()
    with (
        tempfile.TemporaryDirectory(prefix="dd-bench-many-") as folder_name,
        warehouse(args.database, Path(folder_name)) as database,
    ):
        folder = Path(folder_name)
        server = database.postmaster is not None
        start = time.perf_counter()
        build(folder, database, args.tables, args.rows)
        print(
            f"{args.tables} tables x {args.rows:,} rows in {database.name}, 5 checks each "
            f"({time.perf_counter() - start:.1f} s to build); failing checks built in: "
            f"{len(expected(args.tables))} of {5 * args.tables}"
        )
        print(f"load average before: {load_average()} (2 cores, shared)", flush=True)
        disagreeing: list[str] = []

        def run(contender: str) -> dict[str, Any]:
            found = child_figures(__file__, contender, str(folder), label=contender)
            print(
                f"  {contender}: {found['seconds']:.1f} s, {found['cpu_seconds']:.1f} cpu s, "
                + (f"{found['server_cpu_seconds']:.1f} server cpu s, " if server else "")
                + f"{int(found['failing'])} failing, exit {int(found['exit'])}"
                + (f", summary {found['summary_ms']:.1f} ms" if found["summary_ms"] >= 0 else ""),
                flush=True,
            )
            if not found["agrees"]:
                disagreeing.append(contender)
            return found

        medians = interleaved(args.contenders, args.repeat, run)
    report(medians, args.tables, server)
    if disagreeing:
        print(f"verdicts differing from the data's: {', '.join(disagreeing)}")
    else:
        print("every run's failing checks are exactly the ones built into the data")
    print(
        f"load average after: {load_average()}; medians of {args.repeat} interleaved runs; "
        "cpu and peak are the whole process tree's (peak: its largest single process)"
        + (
            "; srv is the PostgreSQL server's CPU in the run (its backends and parallel "
            "workers), cost is cpu + srv"
            if server
            else ""
        ),
        flush=True,
    )


def report(medians: dict[str, dict[str, float]], tables: int, server: bool) -> None:
    """The table of figures, each contender's ratios to dbt's, and its cost per table. With a
    `server`, its CPU (`srv`) and the cost, the client's CPU plus the server's, too."""
    figures = {"wall": "seconds", "cpu": "cpu_seconds"}
    if server:
        figures.update(srv="server_cpu_seconds", cost="cost_seconds")
    seconds = " ".join(f"{name + ' s':>7}" for name in figures)
    versus = " ".join(f"{name + '/dbt':>8}" for name in figures)
    header = (
        f"{'contender':18} | {seconds} {'peak MB':>8} | {versus} | "
        f"{'ms/table':>8} {'cpu ms/t':>8} | {'checks':>6} {'failing':>7}"
    )
    print(header)
    print("-" * len(header))
    found = {contender: {**m, "cost_seconds": cost(m)} for contender, m in medians.items()}
    dbt = found.get("dbt")
    for contender, m in found.items():
        values = " ".join(f"{m[key]:7.1f}" for key in figures.values())
        ratios = " ".join(
            f"{f'{m[key] / dbt[key]:7.2f}x' if dbt else '':>8}" for key in figures.values()
        )
        print(
            f"{contender:18} | {values} {m['peak_mb']:8.0f} | {ratios} | "
            f"{1000 * m['seconds'] / tables:8.0f} "
            f"{1000 * m['cpu_seconds'] / tables:8.0f} | {int(m['checked']):6} {int(m['failing']):7}"
        )
    beyond = [(floor, name) for floor, name in FLOORS.items() if {floor, name} <= medians.keys()]
    if not beyond:
        return
    print("\nbeyond Dagster's own cost (the contender less its floor: what the package adds)")
    # With a server, the CPU its pushed-down queries took is the package's too.
    spent, unit = ("cost_seconds", "cost s") if server else ("cpu_seconds", "cpu s")
    for floor, name in beyond:
        wall = found[name]["seconds"] - found[floor]["seconds"]
        cpu = found[name][spent] - found[floor][spent]
        against = (
            f"; {wall / dbt['seconds']:.2f}x / {cpu / dbt[spent]:.2f}x dbt's whole run"
            if dbt
            else ""
        )
        print(
            f"  {name}: {wall:.1f} s wall, {cpu:.1f} {unit} ({1000 * wall / tables:.0f} / "
            f"{1000 * cpu / tables:.0f} ms a table){against}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database", choices=("duckdb", "postgres"), default="duckdb", help="where the tables are"
    )
    parser.add_argument("--tables", type=int, default=100, help="tables built (N)")
    parser.add_argument("--rows", type=int, default=100_000, help="rows per table")
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure (median)")
    parser.add_argument(
        "--contenders", nargs="+", choices=CONTENDERS, default=list(CONTENDERS), metavar="NAME"
    )
    dispatch(parser, measure, main, ("CONTENDER", "FOLDER"))
