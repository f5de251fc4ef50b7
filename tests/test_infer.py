"""`dd.infer_schema` and `dagster-dataframely infer`: a schema written from a table, executed,
and used to check the same table in a real run (every check passes, the column schema too)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from console import dagster_dataframely
from dagster_duckdb import DuckDBResource
from postgres import PostgresResource, PostgresServer
from written_schema import load

import dagster_dataframely as dd
from dagster_dataframely.errors import TableNotFoundError

ORDERS = """
CREATE TYPE mood AS ENUM ('calm', 'busy');
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id BIGINT NOT NULL,
    status VARCHAR,
    amount DOUBLE,
    price DECIMAL(10, 2) NOT NULL,
    placed TIMESTAMPTZ,
    day DATE,
    shop mood,
    tags VARCHAR[],
    "Order Note" VARCHAR,
    packed TIMESTAMP_MS,
    scanned TIMESTAMP_NS
);
INSERT INTO orders VALUES
    (1, 10, 'paid', 2.5, 1.25, '2024-01-01 10:00:00+00', '2024-01-01', 'calm', ['a'], 'x',
        '2024-01-01 11:00:00.123', '2024-01-01 12:00:00.123456789'),
    (2, 11, 'open', NULL, 0, '2024-01-02 10:00:00+00', '2024-01-02', 'busy', [], NULL,
        NULL, NULL),
    (3, 10, 'paid', 7.0, 3.50, NULL, NULL, NULL, NULL, 'y', NULL, NULL);
CREATE TABLE waits (order_id INTEGER, wait INTERVAL);
"""


def dtypes(schema: type[dy.Schema]) -> dict[str, pl.DataType]:
    return {name: column.dtype for name, column in schema.columns().items()}


def failing_rows(
    schema: type[dy.Schema], source: dd.sources.Source, resources: dict[str, Any]
) -> dict[str, int | None]:
    """check name -> failing rows (0: passed; None: failed, counting no rows, as the column
    schema does), from a real run of the sidecar on the asset `orders` whose table `source`
    reads."""

    @dg.asset(name="orders")
    def orders() -> None:
        """The table exists already: the run only checks it."""

    result = dg.materialize(
        [orders, dd.schema_checks(schema, asset=orders, source=source)],
        resources=resources,
        instance=dg.DagsterInstance.ephemeral(),
        raise_on_error=False,
    )
    evaluations = result.get_asset_check_evaluations()
    assert evaluations, "the run evaluated no check"
    counts = {e.check_name: e.metadata.get("dy_failed_count") for e in evaluations}
    return {
        e.check_name: 0 if e.passed else getattr(counts[e.check_name], "value", None)
        for e in evaluations
    }


def checked(schema: type[dy.Schema], source: dd.sources.Source, resources: dict[str, Any]) -> dict:
    """check name -> passed, from a real run of the sidecar on the asset `orders`."""
    return {name: rows == 0 for name, rows in failing_rows(schema, source, resources).items()}


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute(ORDERS)
    return path


def test_a_duckdb_table_becomes_a_schema_its_checks_pass_on(shop: Path) -> None:
    with duckdb.connect(str(shop)) as connection:
        connection.execute("SET TimeZone = 'America/New_York'")  # the user's session
        source = dd.infer_schema("orders", connection=connection)
        zone = connection.sql("SELECT current_setting('TimeZone')").fetchone()
    assert zone == ("America/New_York",)  # read on cursors of its own, the session untouched
    schema = load(source, "Orders")

    columns = schema.columns()
    assert columns["order_id"].primary_key and not columns["customer_id"].nullable
    assert columns["status"].nullable and columns["Order Note"].nullable
    assert dtypes(schema)["price"] == pl.Decimal(10, 2)
    # Each timestamp with its zone and unit, as DuckDBTableSource reads them; an ENUM is
    # the Categorical DuckDB's Arrow hands over.
    assert [dtypes(schema)[c] for c in ("placed", "packed", "scanned", "shop")] == [
        pl.Datetime("us", "UTC"),
        pl.Datetime("ms"),
        pl.Datetime("ns"),
        pl.Categorical(),
    ]
    outcomes = checked(
        schema,
        dd.sources.DuckDBTableSource(table="orders"),
        {"duckdb": DuckDBResource(database=str(shop))},
    )
    assert outcomes["dy_schema__columns"] is True
    assert all(outcomes.values()), outcomes


def test_utc_is_written_utc_and_the_schema_checks_the_table_and_its_parquet_copy(
    tmp_path: Path,
) -> None:
    database, copy = tmp_path / "events.duckdb", tmp_path / "events.parquet"
    with duckdb.connect(str(database)) as connection:
        connection.execute("SET TimeZone = 'Etc/UTC'")  # a session that spells UTC so
        connection.execute(
            "CREATE TABLE events AS "
            "SELECT 1 AS event_id, TIMESTAMPTZ '2024-01-01 10:00:00+00' AS at"
        )
        connection.execute(f"COPY events TO '{copy}'")
        source = dd.infer_schema("events", connection=connection)
    schema = load(source, "Events")

    assert 'at = dy.Datetime(time_unit="us", time_zone="UTC", nullable=True)' in source
    table = checked(
        schema,
        dd.sources.DuckDBTableSource(table="events"),
        {"duckdb": DuckDBResource(database=str(database))},
    )
    parquet = checked(schema, dd.sources.ParquetSource(str(copy)), {})
    assert table["dy_schema__columns"] is True and all(table.values()), table
    assert parquet["dy_schema__columns"] is True and all(parquet.values()), parquet


def test_a_type_polars_cannot_read_is_a_comment_never_a_guess(shop: Path) -> None:
    with duckdb.connect(str(shop)) as connection:
        source = dd.infer_schema("waits", connection=connection)

    assert list(load(source, "Waits").columns()) == ["order_id"]
    assert "    # wait: INTERVAL has no Dataframely column type (polars cannot read it)" in source


def test_profile_proposals_are_comments_never_rules(shop: Path) -> None:
    with duckdb.connect(str(shop)) as connection:
        plain = dd.infer_schema("orders", connection=connection)
        profiled = dd.infer_schema("orders", connection=connection, profile=True)

    proposals = [line.strip() for line in profiled.splitlines() if "# proposed" in line]
    assert (
        '# proposed (3 rows, 2 values): check={"is_in": lambda col: col.is_in(["open", "paid"])}'
        in proposals
    )
    assert "# proposed (3 rows, no nulls): nullable=False" in proposals  # status
    # The range the rows hold, both ends: not `min=0` for values that start at 10.
    assert "# proposed (3 rows, values 10 to 11): min=10, max=11" in proposals  # customer_id
    assert (
        '# proposed (3 rows, values 0.00 to 3.50): min=Decimal("0.00"), max=Decimal("3.50")'
        in proposals
    )  # price
    assert "# proposed (3 rows, no NaN): allow_nan=False" in proposals  # amount
    # The declared primary key is the key: no other column is proposed as one.
    assert not any("primary_key" in line for line in proposals)
    rules = lambda source: [r.name for r in dd.wiring.rules(load(source, "Orders"))]  # noqa: E731
    assert rules(profiled) == rules(plain)


def test_a_parquet_file_becomes_a_schema_its_checks_pass_on(tmp_path: Path) -> None:
    path = tmp_path / "readings.parquet"
    pl.DataFrame(
        {
            "sensor": ["a", "b", "a"],
            "value": [1.5, None, float("nan")],
            "at": pl.Series([1, 2, 3]).cast(pl.Datetime("ms", "Europe/Berlin")),
        }
    ).write_parquet(path)

    source = dd.infer_schema(path, profile=True)
    schema = load(source, "Readings")

    assert dtypes(schema) == dict(pl.read_parquet(path).schema)
    assert "# proposed (3 rows, unique, never null): primary_key=True" in source  # `at`
    # `value` holds a NaN: only infinities are proposed away, in the same polars pass.
    assert "allow_nan=False" not in source
    assert "# proposed (3 rows, no infinity): allow_inf=False" in source
    outcomes = checked(schema, dd.sources.ParquetSource(str(path)), {})
    assert outcomes and all(outcomes.values()), outcomes


def test_a_delta_table_becomes_a_schema_its_checks_pass_on(tmp_path: Path) -> None:
    path = tmp_path / "events"
    frame = pl.DataFrame({"event_id": [1, 2], "kind": ["open", None]})
    frame.write_delta(str(path))

    schema = load(dd.infer_schema(path), "Events")

    assert dtypes(schema) == dict(frame.schema)
    outcomes = checked(schema, dd.sources.DeltaSource(str(path)), {})
    assert outcomes and all(outcomes.values()), outcomes


def test_a_path_that_holds_no_table_says_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match=r"parquet '.*missing.parquet'.*--duckdb FILE"):
        dd.infer_schema(tmp_path / "missing.parquet")


POSTGRES_TABLE = """
CREATE SCHEMA IF NOT EXISTS sales;
DROP TABLE IF EXISTS sales.invoices;
CREATE TABLE sales.invoices (
    invoice_id bigint,
    line smallint,
    total numeric(12, 2) NOT NULL,
    currency varchar(3) NOT NULL,
    code char(2),
    issued_at timestamptz,
    reference uuid,
    rate float8,
    PRIMARY KEY (invoice_id, line)
);
INSERT INTO sales.invoices VALUES
    (1, 1, 10.00, 'EUR', 'ab', '2024-01-01 10:00+00', gen_random_uuid(), 'NaN'),
    (1, 2, 2.50, 'USD', NULL, NULL, NULL, 'Infinity');
"""


def test_a_postgres_table_becomes_a_schema_its_checks_pass_on(postgres: PostgresServer) -> None:
    with postgres.connect() as connection:
        connection.execute(POSTGRES_TABLE)
        source = dd.infer_schema("sales.invoices", connection=connection, dialect="postgres")
        profiled = dd.infer_schema(
            "sales.invoices", connection=connection, dialect="postgres", profile=True
        )
    schema = load(source, "Invoices")

    columns = schema.columns()
    assert [n for n, c in columns.items() if c.primary_key] == ["invoice_id", "line"]
    assert dtypes(schema)["line"] == pl.Int16()
    assert dtypes(schema)["total"] == pl.Decimal(12, 2)
    assert not columns["currency"].nullable and columns["code"].nullable
    assert "reference" not in columns and "# reference: uuid has no Dataframely" in source
    # Counted in PostgreSQL: a NaN and an infinity, so neither is proposed away; two
    # currencies under the C collation (byte order, as polars compares).
    assert "allow_nan=False" not in profiled and "allow_inf=False" not in profiled
    assert 'col.is_in(["EUR", "USD"])' in profiled
    outcomes = checked(
        schema,
        dd.sources.SQLTableSource(
            resource_key="warehouse", dialect="postgres", table="sales.invoices"
        ),
        {"warehouse": PostgresResource(conninfo=postgres.conninfo)},
    )
    assert outcomes["dy_schema__columns"] is True
    assert all(outcomes.values()), outcomes


def test_a_missing_table_names_the_closest_tables(shop: Path) -> None:
    with (
        duckdb.connect(str(shop)) as connection,
        pytest.raises(TableNotFoundError, match=r'table "order".*Did you mean orders\?'),
    ):
        dd.infer_schema("order", connection=connection)


def test_the_cli_writes_the_schema_and_names_a_missing_table(shop: Path, tmp_path: Path) -> None:
    target = tmp_path / "orders_schema.py"
    options = ["--duckdb", str(shop), "--profile", "-o", str(target)]
    written = dagster_dataframely("infer", "orders", *options, cwd=tmp_path)
    missing = dagster_dataframely("infer", "ordrs", "--duckdb", str(shop), cwd=tmp_path)

    assert written.returncode == 0, written.stderr
    assert "# proposed" in target.read_text()
    assert load(target.read_text(), "Orders").columns()["order_id"].primary_key
    assert missing.returncode == 1
    assert "Did you mean orders?" in missing.stderr


def test_the_cli_names_a_database_it_cannot_open_and_what_to_do(shop: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.duckdb").write_text("not a database")
    with socket.socket() as closed:  # a port nothing listens on once the socket is closed
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    missing = dagster_dataframely("infer", "orders", "--duckdb", "shopp.duckdb", cwd=tmp_path)
    foreign = dagster_dataframely("infer", "orders", "--duckdb", "notes.duckdb", cwd=tmp_path)
    refused = dagster_dataframely(
        "infer", "orders", "--postgres", f"host=127.0.0.1 port={port} dbname=shop", cwd=tmp_path
    )
    with duckdb.connect(str(shop)):  # this process writes to the file: the CLI cannot lock it
        locked = dagster_dataframely("infer", "orders", "--duckdb", str(shop), cwd=tmp_path)

    for run in (missing, foreign, refused, locked):
        assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "No DuckDB database file at --duckdb shopp.duckdb" in missing.stderr
    assert "not a valid DuckDB database file" in foreign.stderr
    assert "a parquet or Delta path is given without --duckdb" in foreign.stderr
    assert "Cannot open the PostgreSQL server of --postgres" in refused.stderr
    assert "Check the host, port" in refused.stderr
    assert f"Cannot open DuckDB file --duckdb {shop}" in locked.stderr
    assert "Another process holds it open for writing" in locked.stderr


def test_the_cli_reads_a_table_through_a_resource_of_the_definitions(
    postgres: PostgresServer, shop: Path, tmp_path: Path
) -> None:
    """As for Snowflake or BigQuery, whose connection only a resource knows."""
    with postgres.connect() as connection:
        connection.execute(POSTGRES_TABLE)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    (tmp_path / "project.py").write_text(
        "import dagster as dg\n"
        "from dagster_duckdb import DuckDBResource\n"
        "from postgres import PostgresResource\n\n"
        "defs = dg.Definitions(resources={\n"
        f"    'warehouse': PostgresResource(conninfo={postgres.conninfo!r}),\n"
        f"    'down': PostgresResource(conninfo='host=127.0.0.1 port={port} dbname=shop'),\n"
        f"    'duckdb': DuckDBResource(database={str(shop)!r}),\n"
        "})\n"
    )

    def infer(table: str, resource: str, *dialect: str) -> Any:
        options = ["--defs", "project:defs", "--resource", resource, *dialect]
        return dagster_dataframely("infer", table, *options, cwd=tmp_path)

    invoices = infer("sales.invoices", "warehouse", "--dialect", "postgres")
    orders = infer("orders", "duckdb")  # DuckDB's connection says its dialect
    typo = infer("sales.invoices", "warehous", "--dialect", "postgres")
    undialected = infer("sales.invoices", "warehouse")
    down = infer("sales.invoices", "down", "--dialect", "postgres")

    assert invoices.returncode == 0, invoices.stderr
    assert load(invoices.stdout, "Invoices").primary_key() == ["invoice_id", "line"]
    assert orders.returncode == 0, orders.stderr
    assert load(orders.stdout, "Orders").primary_key() == ["order_id"]
    for run in (typo, undialected, down):
        assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "no resource 'warehous' (they have: down, duckdb, warehouse)" in typo.stderr
    assert "pass dialect= (--dialect on the command line" in undialected.stderr
    assert "Cannot connect through PostgresResource" in down.stderr
