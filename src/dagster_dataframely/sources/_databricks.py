"""`DatabricksSQLResource`: a Databricks SQL warehouse's DB-API connection, for
`SQLTableSource(resource_key=..., dialect="databricks")`.

dagster-databricks' resources give a workspace client, not a SQL connection; this one opens
the Databricks SQL connector's (`databricks.sql.connect`), which the user installs
(`databricks-sql-connector`): it is imported only when a check connects.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dagster as dg
from pydantic import Field

#: How long the reachability probe waits for the warehouse's port: the connector itself
#: retries an unreachable host for up to 900 s before it fails.
_PROBE_SECONDS = 3.0


class DatabricksSQLResource(dg.ConfigurableResource):
    """A connection to a Databricks SQL warehouse through the Databricks SQL connector.

    `server_hostname` and `http_path` are the warehouse's connection details;
    `access_token` a personal access token (leave it unset and pass the connector's other
    auth, e.g. `{"auth_type": "databricks-oauth"}` or a `credentials_provider`, in
    `connect_args`). `catalog` and `schema` are the session's initial ones, so a bare table
    name is read there. `connect_args` go to `databricks.sql.connect` as they are.
    """

    server_hostname: str = Field(
        description="The warehouse's host, e.g. dbc-1234.cloud.databricks.com (an optional :port)."
    )
    http_path: str = Field(
        description="The warehouse's HTTP path, e.g. /sql/1.0/warehouses/abc123."
    )
    access_token: str | None = Field(default=None, description="A personal access token.")
    catalog: str | None = Field(default=None, description="The session's initial catalog.")
    schema_: str | None = Field(
        default=None, alias="schema", description="The session's initial schema."
    )
    connect_args: dict[str, Any] = Field(
        default_factory=dict, description="More keyword arguments of databricks.sql.connect."
    )

    @contextmanager
    def get_connection(self) -> Iterator[Any]:
        """The connector's connection, open inside the context and closed after it. The
        warehouse's port is probed first, so an unreachable one fails in seconds."""
        host, port = _address(self.server_hostname)
        _probe(host, port)
        from databricks import sql

        args: dict[str, Any] = {"server_hostname": host, "http_path": self.http_path}
        if port != 443:
            args["port"] = port
        optional = {
            "access_token": self.access_token,
            "catalog": self.catalog,
            "schema": self.schema_,
        }
        args.update({key: value for key, value in optional.items() if value is not None})
        args.update(self.connect_args)
        connection = sql.connect(**args)
        try:
            yield connection
        finally:
            connection.close()


def _address(server_hostname: str) -> tuple[str, int]:
    """The host and port of `server_hostname` (`host`, `host:port`, or a URL)."""
    text = server_hostname.strip().removeprefix("https://").split("/", 1)[0]
    host, _, port = text.rpartition(":") if text.count(":") == 1 else (text, "", "")
    return (host, int(port)) if port.isdigit() else (text, 443)


def _probe(host: str, port: int) -> None:
    """Fail fast when `host:port` is unknown or accepts no TCP connection."""
    fix = (
        "Check the resource's server_hostname (the warehouse's host, from its Connection "
        "details), that the warehouse is running and that this machine can reach it."
    )
    try:
        with socket.create_connection((host, port), timeout=_PROBE_SECONDS):
            pass
    except socket.gaierror as error:
        raise ConnectionError(
            f"Databricks host {host!r} is unknown ({error.strerror or error}). {fix}"
        ) from error
    except OSError as error:
        raise ConnectionError(
            f"Databricks warehouse {host}:{port} accepts no connection "
            f"({error.strerror or type(error).__name__}). {fix}"
        ) from error
