"""A stand-in Databricks SQL warehouse for the tests: the part of Databricks' SQL Statement
Execution API (REST over HTTPS) that the Databricks SQL connector's SEA backend
(`databricks.sql.connect(..., use_sea=True)`) sends, each statement run on a local Spark.

A warehouse runs Spark SQL; what it adds and this stands in for is its sessions (each a
`SparkSession.newSession()`: its own parameters and temporary views), its parameters
(`ANSI_MODE`, `TIMEZONE`: `SET`, `RESET`, and a session's `session_confs`, on Spark's
`spark.sql.ansi.enabled` and `spark.sql.session.timeZone`), its statement states and errors
(`FAILED` with the error's SQLSTATE in `sql_state` and in the message, as Databricks writes
it) and results inline: Arrow IPC (`INLINE_OR_EXTERNAL_LINKS`, the connector's
`use_hybrid_disposition=True`), LZ4-framed when asked. Results by external link and as JSON
arrays are refused (HTTP 400, naming the connect argument that avoids them), and so is the
Thrift protocol the connector uses without `use_sea` (it needs Spark's Thrift server, which
pip's pyspark lacks). The server's certificate is self-signed, made with `cryptography` (no
`openssl` command needed); the connector trusts it through `_tls_trusted_ca_file`.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from ssl import PROTOCOL_TLS_SERVER, SSLContext
from typing import Any

#: The warehouse's parameters this stand-in knows, as Spark's settings, and their defaults on
#: a SQL warehouse.
PARAMETERS = {"ANSI_MODE": "spark.sql.ansi.enabled", "TIMEZONE": "spark.sql.session.timeZone"}
DEFAULTS = {"ANSI_MODE": "true", "TIMEZONE": "UTC"}
HTTP_PATH = "/sql/1.0/warehouses/standin"
_SET = re.compile(r"^\s*SET\s+(\w+)\s*=\s*(.*?)\s*;?\s*$", re.IGNORECASE | re.DOTALL)
_RESET = re.compile(r"^\s*RESET\s+(\w+)\s*;?\s*$", re.IGNORECASE)
_LIST = re.compile(r"^\s*SET\s*;?\s*$", re.IGNORECASE)
#: Spark's type names as the Statement Execution API's manifest writes them.
_TYPE_NAMES = {
    "tinyint": "BYTE",
    "smallint": "SHORT",
    "int": "INT",
    "bigint": "LONG",
    "timestamp_ntz": "TIMESTAMP_NTZ",
}


@dataclass
class _Session:
    spark: Any
    #: The parameters set in the session (by `session_confs` or `SET`), as `SET` lists them.
    changed: dict[str, str] = field(default_factory=dict)

    def set(self, name: str, value: str) -> None:
        key = name.upper()
        value = value.strip().strip("'\"")
        if key in PARAMETERS:
            self.spark.conf.set(PARAMETERS[key], value)
            self.changed[key] = value
        else:  # a warehouse refuses every other key (a `spark.sql.*` one too)
            raise _Refused(
                "CONFIG_NOT_AVAILABLE",
                f"[CONFIG_NOT_AVAILABLE] Configuration {name} is not available. SQLSTATE: 42K0I",
                "42K0I",
            )

    def reset(self, name: str) -> None:
        key = name.upper()
        if key in PARAMETERS:
            self.spark.conf.set(PARAMETERS[key], DEFAULTS[key])
            self.changed.pop(key, None)


class _Refused(Exception):
    def __init__(self, condition: str, message: str, sqlstate: str | None) -> None:
        super().__init__(message)
        self.condition, self.message, self.sqlstate = condition, message, sqlstate


def _self_signed(cert: Path, key: Path) -> None:
    """A certificate for 127.0.0.1 and localhost, valid for a day, signed by its own key."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.timezone.utc)
    names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        # Its own trust anchor: the connector is given it as the CA file.
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


@dataclass
class Warehouse:
    """The stand-in, serving on `127.0.0.1:port` until `stop()`; `connect_args` are what
    `databricks.sql.connect` needs beyond host, path and token to reach it."""

    spark: Any
    workdir: Path
    server: ThreadingHTTPServer = field(init=False)
    sessions: dict[str, _Session] = field(default_factory=dict)
    #: Every request's method and path, in order (for the tests to see what was sent).
    requests: list[tuple[str, str]] = field(default_factory=list)
    #: Set: after this many more statements the warehouse drops the connection and stops
    #: (a connection lost mid-check).
    drop_after: int | None = None

    def __post_init__(self) -> None:
        cert, key = self.workdir / "warehouse.pem", self.workdir / "warehouse.key"
        _self_signed(cert, key)
        self.ca_file = str(cert)
        context = SSLContext(PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        warehouse = self

        class Handler(_Handler):
            owner = warehouse

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def host(self) -> str:
        """`host:port`, as `DatabricksSQLResource(server_hostname=)` takes it."""
        return f"127.0.0.1:{self.port}"

    @property
    def connect_args(self) -> dict[str, Any]:
        return {
            "use_sea": True,
            "use_hybrid_disposition": True,
            "_tls_trusted_ca_file": self.ca_file,
            "enable_telemetry": False,
            # A lost warehouse fails a test in seconds, not the connector's 900 s.
            "_retry_stop_after_attempts_count": 2,
            "_retry_stop_after_attempts_duration": 5.0,
            "_retry_delay_min": 0.1,
            "_retry_delay_max": 0.2,
        }

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- the API --------------------------------------------------------------------------

    def create_session(self, body: dict[str, Any]) -> dict[str, Any]:
        session = _Session(self.spark.newSession())
        for name, value in DEFAULTS.items():
            session.spark.conf.set(PARAMETERS[name], value)
        for name, value in (body.get("session_confs") or {}).items():
            session.set(name, str(value))
        if body.get("catalog"):
            session.spark.sql(f"USE CATALOG `{body['catalog']}`")
        if body.get("schema"):
            session.spark.sql(f"USE SCHEMA `{body['schema']}`")
        session_id = str(uuid.uuid4())
        self.sessions[session_id] = session
        return {"session_id": session_id}

    def execute(self, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("format") != "ARROW_STREAM" or body.get("disposition") != (
            "INLINE_OR_EXTERNAL_LINKS"
        ):
            raise _BadRequest(
                "This stand-in serves results inline as Arrow only: connect with "
                "use_hybrid_disposition=True (and use_cloud_fetch left True)."
            )
        session = self.sessions[body["session_id"]]
        statement_id = str(uuid.uuid4())
        try:
            table = _run(session, body["statement"])
        except _Refused as error:
            return _failed(statement_id, error.condition, error.message, error.sqlstate)
        except Exception as error:  # pyspark's errors: Spark's message and SQLSTATE
            state = getattr(error, "getSqlState", lambda: None)()
            condition = getattr(error, "getCondition", lambda: None)() or "INTERNAL_ERROR"
            return _failed(statement_id, condition, _message(error), state)
        return _succeeded(statement_id, table, body.get("result_compression"))


class _BadRequest(Exception):
    pass


def _run(session: _Session, statement: str) -> Any:
    """The statement's result as a `pyarrow.Table`; the warehouse's parameters kept apart
    from Spark's settings."""
    import pyarrow as pa

    if match := _SET.match(statement):
        session.set(match.group(1), match.group(2))
        return pa.table({"key": [match.group(1)], "value": [match.group(2)]})
    if match := _RESET.match(statement):
        session.reset(match.group(1))
        return pa.table({"key": pa.array([], pa.string())})
    if _LIST.match(statement):
        return pa.table(
            {"key": list(session.changed), "value": list(session.changed.values())},
            schema=pa.schema([("key", pa.string()), ("value", pa.string())]),
        )
    frame = session.spark.sql(statement)
    return frame.toArrow(), frame.schema


def _failed(statement_id: str, condition: str, message: str, state: str | None) -> dict[str, Any]:
    """A statement Databricks refused: `FAILED`, its error's text ending with its SQLSTATE."""
    if state and f"SQLSTATE: {state}" not in message:
        message = f"{message} SQLSTATE: {state}"
    status: dict[str, Any] = {
        "state": "FAILED",
        "error": {"error_code": "BAD_REQUEST", "message": message},
    }
    if state:
        status["sql_state"] = state
    del condition  # the error class is in the message, as Databricks writes it
    return {"statement_id": statement_id, "status": status}


def _message(error: Exception) -> str:
    text = str(error).strip()
    return text.split("\n\nJVM stacktrace:")[0].strip()


def _succeeded(statement_id: str, result: Any, compression: str | None) -> dict[str, Any]:
    import pyarrow as pa

    table, spark_schema = result if isinstance(result, tuple) else (result, None)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    payload = sink.getvalue().to_pybytes()
    manifest: dict[str, Any] = {
        "format": "ARROW_STREAM",
        "schema": {"column_count": table.num_columns, "columns": _columns(table, spark_schema)},
        "total_row_count": table.num_rows,
        "total_chunk_count": 1,
        "truncated": False,
    }
    if compression == "LZ4_FRAME":
        import lz4.frame

        payload = lz4.frame.compress(payload)
        manifest["result_compression"] = "LZ4_FRAME"
    return {
        "statement_id": statement_id,
        "status": {"state": "SUCCEEDED"},
        "manifest": manifest,
        "result": {
            "chunk_index": 0,
            "row_offset": 0,
            "row_count": table.num_rows,
            "attachment": base64.b64encode(payload).decode(),
        },
    }


def _columns(table: Any, spark_schema: Any) -> list[dict[str, Any]]:
    """The manifest's columns: Spark's type of each (`STRING COLLATE UTF8_LCASE` in
    `type_text`), or a string's for the warehouse's own answers (`SET`)."""
    columns = []
    fields = spark_schema.fields if spark_schema is not None else None
    for position, name in enumerate(table.column_names):
        if fields is None:
            simple, text = "string", "STRING"
        else:
            data_type = fields[position].dataType
            simple, text = data_type.simpleString(), _type_text(data_type)
        base = simple.split("(")[0].split("<")[0].split(" ")[0]
        column: dict[str, Any] = {
            "name": name,
            "position": position,
            "type_name": _TYPE_NAMES.get(base, base.upper()),
            "type_text": text,
        }
        if base == "decimal":
            column["type_precision"] = fields[position].dataType.precision  # type: ignore[index]
            column["type_scale"] = fields[position].dataType.scale  # type: ignore[index]
        columns.append(column)
    return columns


def _type_text(data_type: Any) -> str:
    collation = getattr(data_type, "collation", None)
    text = data_type.simpleString().upper()
    if collation and collation.upper() != "UTF8_BINARY":
        return f"STRING COLLATE {collation.upper()}"
    return text


class _Handler(BaseHTTPRequestHandler):
    owner: Warehouse

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self, status: int, body: dict[str, Any] | None) -> None:
        data = json.dumps(body or {}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length)) if length else {}

    def _route(self, method: str) -> None:
        warehouse, path = self.owner, self.path.split("?")[0]
        warehouse.requests.append((method, path))
        body = self._body()
        if self.headers.get("Authorization") != "Bearer dapi-standin":
            self._answer(401, {"error_code": "UNAUTHENTICATED", "message": "bad token"})
            return
        try:
            if method == "POST" and path == "/api/2.0/sql/sessions":
                self._answer(200, warehouse.create_session(body))
            elif method == "DELETE" and path.startswith("/api/2.0/sql/sessions/"):
                warehouse.sessions.pop(path.rsplit("/", 1)[1], None)
                self._answer(200, {})
            elif method == "POST" and path == "/api/2.0/sql/statements":
                if warehouse.drop_after is not None:
                    warehouse.drop_after -= 1
                if warehouse.drop_after == -1:
                    threading.Thread(target=warehouse.stop).start()
                    self.close_connection = True
                    self.connection.close()
                    return
                self._answer(200, warehouse.execute(body))
            elif path.startswith("/api/2.0/sql/statements/"):
                # Statements finish inside their POST: cancel and close have nothing to end.
                self._answer(200, {})
            else:
                self._answer(404, {"error_code": "NOT_FOUND", "message": f"no {path}"})
        except _BadRequest as error:
            self._answer(400, {"error_code": "INVALID_PARAMETER_VALUE", "message": str(error)})

    def do_POST(self) -> None:
        self._route("POST")

    def do_GET(self) -> None:
        self._route("GET")

    def do_DELETE(self) -> None:
        self._route("DELETE")


TOKEN = "dapi-standin"


@contextmanager
def warehouse(spark: Any, workdir: Path) -> Iterator[Warehouse]:
    """A stand-in warehouse on `spark`, stopped after the context."""
    standin = Warehouse(spark, workdir)
    try:
        yield standin
    finally:
        standin.stop()
