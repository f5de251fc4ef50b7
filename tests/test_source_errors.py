"""A database check that cannot run fails the step with an error named by what failed:
`SourceConnectionError` (no server to talk to), `SourceReadError` (the table refused: missing,
not granted), `RuleEvaluationError` (the table was read, computing a pushed-down rule failed).
Each message names the asset, the source, the real table name (never a placeholder), the role
where the driver knows it, and the fix that fits; no rule is reported as passed.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import psycopg
import pytest
from dagster_duckdb import DuckDBResource
from postgres import PostgresResource, PostgresServer
from support import evaluations, logs
from test_pushdown import run_payments_checks

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    RuleEvaluationError,
    SourceConnectionError,
    SourceReadError,
)


class Payments(dy.Schema):
    payment_id = dy.Int64(primary_key=True)
    amount = dy.Float64(min=0)


TABLE = """
CREATE SCHEMA IF NOT EXISTS audit;
DROP TABLE IF EXISTS audit.payments CASCADE;
CREATE TABLE audit.payments (payment_id bigint, amount double precision);
INSERT INTO audit.payments VALUES (1, 1.0), (2, -2.0), (3, 3.0);
"""
#: A view whose `amount` fails to compute on one row: reading its columns' types works, a
#: query computing a rule over its rows fails in the database.
BROKEN = """
CREATE VIEW audit.broken_payments AS
SELECT payment_id, CASE WHEN payment_id = 3 THEN {fail} ELSE amount END AS amount
FROM audit.payments;
"""


def _error(result: dg.ExecuteInProcessResult) -> tuple[str, str]:
    """The class and message of this package's error that failed the step, no rule reported."""
    assert not result.success
    assert not [name for name in evaluations(result) if name.startswith("dy_rule__")]
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    while error is not None and error.cls_name not in _OURS:
        error = error.cause
    assert error is not None, failure.step_failure_data.error
    return error.cls_name or "", error.message


_OURS = {cls.__name__ for cls in (SourceConnectionError, SourceReadError, RuleEvaluationError)}


def _no_placeholder(instance: dg.DagsterInstance, result: Any, message: str) -> None:
    for text in [message, *logs(instance, result)]:
        assert "<table>" not in text and "(dagster/table_name)" not in text


def _postgres_source(**settings: str) -> dd.sources.SQLTableSource:
    return dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres", **settings)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_server_that_refuses_connections_is_a_connection_error() -> None:
    conninfo = f"host=127.0.0.1 port={_free_port()} user=dd dbname=postgres connect_timeout=5"

    instance, result = run_payments_checks(
        Payments, _postgres_source(), {"warehouse": PostgresResource(conninfo=conninfo)}
    )

    name, message = _error(result)
    assert name == "SourceConnectionError"
    assert "Could not connect to the database of asset payments (postgres table " in message
    assert "'finance.payments' via resource 'warehouse')" in message
    assert "OperationalError" in message
    assert "Check that the server is running and accepts connections" in message
    _no_placeholder(instance, result, message)


def test_a_role_without_select_is_a_read_error_naming_the_grant(postgres: PostgresServer) -> None:
    with postgres.connect() as connection:
        connection.execute(TABLE)
        if _role(connection, "outsider"):
            connection.execute("DROP OWNED BY outsider")
        connection.execute("DROP ROLE IF EXISTS outsider")
        connection.execute("CREATE ROLE outsider LOGIN")
        connection.execute("GRANT USAGE ON SCHEMA audit TO outsider")
    resources = {"warehouse": PostgresResource(conninfo=postgres.conninfo_for("outsider"))}

    instance, result = run_payments_checks(
        Payments, _postgres_source(table="audit.payments"), resources
    )

    name, message = _error(result)
    assert name == "SourceReadError"
    assert "in postgres table 'audit.payments' via resource 'warehouse' as role outsider" in (
        message
    )
    assert "GRANT SELECT ON audit.payments TO outsider" in message
    _no_placeholder(instance, result, message)


def test_a_missing_postgres_table_is_a_read_error_naming_it(postgres: PostgresServer) -> None:
    resources = {"warehouse": PostgresResource(conninfo=postgres.conninfo)}

    instance, result = run_payments_checks(
        Payments, _postgres_source(table="audit.refunds"), resources
    )

    name, message = _error(result)
    assert name == "SourceReadError"
    assert "refused to read table audit.refunds" in message and "UndefinedTable" in message
    assert "that audit.refunds exists in the database and schema" in message
    _no_placeholder(instance, result, message)


def test_a_rule_the_database_fails_to_compute_is_an_evaluation_error(
    postgres: PostgresServer,
) -> None:
    with postgres.connect() as connection:
        connection.execute(TABLE)
        connection.execute(BROKEN.format(fail="1 / (payment_id - 3)"))
    resources = {"warehouse": PostgresResource(conninfo=postgres.conninfo)}

    instance, result = run_payments_checks(
        Payments, _postgres_source(table="audit.broken_payments"), resources
    )

    name, message = _error(result)
    assert name == "RuleEvaluationError"
    assert "Could not evaluate the rules of asset payments in postgres table" in message
    assert "PostgreSQL read table audit.broken_payments as role dd" in message
    assert "DivisionByZero" in message and "(query: SELECT" in message
    assert "GRANT" not in message and "materialized" not in message  # not a read's fixes
    _no_placeholder(instance, result, message)


def test_a_rule_duckdb_fails_to_compute_is_an_evaluation_error(tmp_path: Path) -> None:
    database = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute(TABLE)
        connection.execute(BROKEN.format(fail="error('no amount for payment 3')::DOUBLE"))
    source = dd.sources.DuckDBTableSource(table="audit.broken_payments")

    instance, result = run_payments_checks(
        Payments, source, {"duckdb": DuckDBResource(database=str(database))}
    )

    name, message = _error(result)
    assert name == "RuleEvaluationError"
    assert "DuckDB table 'audit.broken_payments'" in message
    assert "no amount for payment 3" in message
    _no_placeholder(instance, result, message)


def _role(connection: Any, name: str) -> bool:
    found = connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
    return found is not None


class PlainDuckDB(dg.ConfigurableResource):
    """A DuckDB resource that opens its file once (DuckDBResource retries for a minute)."""

    database: str

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with duckdb.connect(self.database) as connection:
            yield connection


def test_a_duckdb_file_that_cannot_be_opened_is_a_connection_error(tmp_path: Path) -> None:
    missing = tmp_path / "no_such_folder" / "warehouse.duckdb"
    resources = {"duckdb": PlainDuckDB(database=str(missing))}

    instance, result = run_payments_checks(Payments, dd.sources.DuckDBTableSource(), resources)

    name, message = _error(result)
    assert name == "SourceConnectionError"
    assert "Could not connect to the database of asset payments (DuckDB table " in message
    assert "'finance.payments' via resource 'duckdb')" in message and "no_such_folder" in message
    _no_placeholder(instance, result, message)


class LostAfterCounts(PostgresResource):
    """A PostgreSQL resource whose session is lost after the pushed-down counts, before the
    samples: `terminated`, a second connection ends its backend (`pg_terminate_backend`, as an
    administrator or a server shutting down does; the server says so, SQLSTATE 57P01), or
    `cut`, the network between them drops (a relay closes both sockets; the driver only
    finds the connection closed, no SQLSTATE)."""

    how: str

    @contextmanager
    def get_connection(self) -> Iterator[psycopg.Connection]:
        cursor = _TerminatedAfterCounts if self.how == "terminated" else _CutAfterCounts
        with psycopg.connect(self.conninfo, cursor_factory=cursor) as connection:
            yield connection


class _AfterCounts(psycopg.Cursor):
    def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        ran = super().execute(query, *args, **kwargs)
        if "COUNT(*) AS __dy_rows" in str(query):  # the counts ran: the samples are next
            self.lose()
        return ran

    def lose(self) -> None:
        raise NotImplementedError


class _TerminatedAfterCounts(_AfterCounts):
    def lose(self) -> None:
        with psycopg.connect(self.connection.info.dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (self.connection.info.backend_pid,))


class _CutAfterCounts(_AfterCounts):
    def lose(self) -> None:
        _RELAYS[self.connection.info.port].cut()


class _Relay:
    """A TCP relay to the server on a port of its own, whose connections `cut` drops."""

    def __init__(self, port: int) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port, self.target = int(self.listener.getsockname()[1]), port
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with suppress(OSError):  # the listener closed
            while True:
                client, _ = self.listener.accept()
                server = socket.create_connection(("127.0.0.1", self.target))
                self.sockets += [client, server]
                for source, target in ((client, server), (server, client)):
                    threading.Thread(target=_pump, args=(source, target), daemon=True).start()

    def cut(self) -> None:
        for end in self.sockets:
            with suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        self.listener.close()
        self.cut()


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Relay `source` to `target` until either closes, then close `target` too (a backend
    the server ended closes its side: the client must see that)."""
    with suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    with suppress(OSError):
        target.shutdown(socket.SHUT_RDWR)


#: The relays of the running tests, by their port (a cursor finds its own by its connection's).
_RELAYS: dict[int, _Relay] = {}


@pytest.mark.parametrize("how", ["terminated", "cut"])
def test_a_connection_lost_between_the_counts_and_the_samples_is_a_connection_error(
    postgres: PostgresServer, how: str
) -> None:
    with postgres.connect() as connection:
        connection.execute(TABLE)
    relay = _Relay(postgres.port)
    _RELAYS[relay.port] = relay
    conninfo = postgres.conninfo.replace(f"port={postgres.port}", f"port={relay.port}")

    try:
        instance, result = run_payments_checks(
            Payments,
            _postgres_source(table="audit.payments"),
            {"warehouse": LostAfterCounts(conninfo=conninfo, how=how)},
        )
    finally:
        _RELAYS.pop(relay.port).close()

    name, message = _error(result)
    assert name == "SourceConnectionError"
    assert "Lost the connection to the database of asset payments (table audit.payments)" in (
        message
    )
    assert "No rule's result was reported" in message
    assert "Check that the server is running and reachable, then run the check again." in message
    assert "report the rule" not in message
    _no_placeholder(instance, result, message)
