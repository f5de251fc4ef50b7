"""The connections the console script's `infer` and `infer-dbt` open: a DuckDB file (read
only), a PostgreSQL connection string, or a resource of a code location's Definitions (any
database `SQLTableSource` reads: Snowflake, BigQuery, ...). A connection that cannot be
opened is a `SourceConnectionError` that names the option and says what to do, never a
driver's traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import dagster as dg

from ..errors import SourceConnectionError

#: What to do about a file DuckDB refuses, by a phrase of its message.
_DUCKDB_FIXES = {
    "lock": (
        "another process holds it open for writing (a running `dagster dev`, a dbt run): "
        "infer when it has finished, or from a copy of the file"
    ),
    "not a valid duckdb": (
        "give the DuckDB file the table is in; a parquet or Delta path is given without --duckdb"
    ),
}
_POSTGRES_FIX = (
    "check the host, port, database, user and password of the connection string "
    "('host=... port=5432 dbname=... user=...'), and that the server accepts connections"
)


@contextmanager
def opened(
    duckdb_file: Path | None,
    conninfo: str | None,
    resource: tuple[dg.Definitions, str] | None = None,
) -> Iterator[tuple[Any, str | None]]:
    """The connection the options name, and its dialect where they say it (None: the
    caller's, or DuckDB's recognized by its module); (None, None) for a path."""
    if duckdb_file is not None:
        with _duckdb_file(duckdb_file) as connection:
            yield connection, "duckdb"
    elif conninfo is not None:
        with _postgres(conninfo) as connection:
            yield connection, "postgres"
    elif resource is not None:
        with _resource(*resource) as connection:
            yield connection, None
    else:
        yield None, None


@contextmanager
def _duckdb_file(path: Path) -> Iterator[Any]:
    """`path` opened read only: a file that is missing, locked or not DuckDB's is refused
    with what to do (DuckDB would create a missing one, and find no table in it)."""
    import duckdb

    if not path.is_file():
        raise SourceConnectionError(
            f"No DuckDB database file at --duckdb {path} (from {Path.cwd()}): give the path "
            "of the file the table is in (DuckDBResource's database=, the path in dbt's "
            "profiles.yml)."
        )
    try:
        connection = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as error:
        reason = str(error).lower()
        fix = next((f for phrase, f in _DUCKDB_FIXES.items() if phrase in reason), None)
        raise _refused(f"DuckDB file --duckdb {path}", error, fix) from error
    with connection:
        yield connection


@contextmanager
def _postgres(conninfo: str) -> Iterator[Any]:
    try:
        import psycopg
    except ImportError as error:
        raise SourceConnectionError(
            "--postgres reads through psycopg, which is not installed: pip install psycopg"
        ) from error
    try:
        connection = psycopg.connect(conninfo)
    except psycopg.Error as error:
        raise _refused("the PostgreSQL server of --postgres", error, _POSTGRES_FIX) from error
    with connection:
        yield connection


@contextmanager
def _resource(definitions: dg.Definitions, key: str) -> Iterator[Any]:
    """Resource `key` of `definitions`, initialized as a run initializes it (its `EnvVar`s
    read from the environment)."""
    resources = dict(definitions.resources or {})
    if key not in resources:
        raise SourceConnectionError(
            f"The Definitions have no resource {key!r} (they have: "
            f"{', '.join(sorted(resources)) or 'none'}). Name the resource that connects to "
            "the table's database with --resource."
        )
    stack = ExitStack()
    try:
        built = stack.enter_context(dg.build_resources({key: resources[key]}))
    except Exception as error:
        raise _refused(
            f"resource {key!r} of the Definitions",
            error,
            "check its configuration and the environment variables it reads",
        ) from error
    with stack:
        yield getattr(built, key)


def _refused(what: str, error: Exception, fix: str | None) -> SourceConnectionError:
    reason = " ".join(str(error).split()).rstrip(".!?")
    return SourceConnectionError(
        f"Cannot open {what}: {reason}." + (f" {fix[0].upper()}{fix[1:]}." if fix else "")
    )
