"""A database's failure, named by what failed: connecting, reading the table, or evaluating the
rules pushed down to it. Each message names the asset, the source, the table (its real name),
the role where the driver tells it, and the fix that fits what failed.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any

from ..errors import (
    DagsterDataframelyError,
    RuleEvaluationError,
    SourceConnectionError,
    SourceReadError,
)
from ._base import logged

#: SQLSTATEs (PostgreSQL, Snowflake, ...) of a table that cannot be read, and the fix each
#: calls for; `{table}` and `{role}` are filled in.
_READ_FIXES = {
    "42P01": "Check the table's name (table=, or the asset's dagster/table_name metadata) "
    "and that {table} exists in the database and schema the resource connects to.",
    "3F000": "Check the schema in the table's name (table=, or the asset's dagster/table_name "
    "metadata): the database the resource connects to has no such schema.",
    "42S02": "Check the table's name (table=, or the asset's dagster/table_name metadata; a "
    'bare name is read in upper case, write "name" for a quoted one) and that {role} may read '
    "{table}: Snowflake reports a table a role may not read as missing.",
    "42501": "Grant the resource's database role SELECT on the table "
    "(GRANT SELECT ON {table} TO {role}).",
    "57014": "The query was cancelled (statement_timeout): raise the statement_timeout of "
    "{role}, or check one partition at a time (partition_expr) so each query reads less.",
}
_READ_FIX = "Check that {table} exists and that {role} may read it."
#: A SQLSTATE written in an error's message (Spark's and Databricks' errors end with it).
_WRITTEN_SQLSTATE = re.compile(r"SQLSTATE: ([0-9A-Z]{5})\b")
#: SQLSTATE prefixes of a lost or refused connection: class 08, and the 57P codes of a server
#: that ended the session (shut down, crashed, or an administrator terminated it).
_CONNECTION_STATES = ("08", "57P")
#: Drivers' errors of a connection lost mid-query that carry no SQLSTATE (module, class).
_LOST = {("databricks.sql.exc", "RequestError"), ("urllib3.exceptions", "MaxRetryError")}
#: DuckDB's errors of a table that cannot be read (the others, in a rule query, are the rule's).
_DUCKDB_READ = ("CatalogException", "PermissionException", "IOException")


#: What to check when a database connection cannot be opened (`{resource_key}` filled in).
CONNECTION_FIX = (
    "Check that the server is running and accepts connections at the address resource "
    "'{resource_key}' gives, and the resource's credentials."
)


def closed(connection: Any) -> bool:
    """Whether the driver says `connection` is closed (psycopg's `closed`, psycopg2's non-zero
    one): a query failed because the session is gone, whatever the error says."""
    state = getattr(connection, "closed", False)
    return state is True or (type(state) is int and state != 0)


def role_of(connection: Any) -> str | None:
    """The database role `connection` acts as, where the driver says (psycopg: `info.user`)."""
    info = getattr(connection, "info", None)
    role = getattr(info, "user", None) or getattr(connection, "role", None)
    return role if isinstance(role, str) and role else None


@contextmanager
def connecting(
    opening: AbstractContextManager[Any],
    *,
    asset: str,
    source: str,
    resource_key: str,
    fix: str = CONNECTION_FIX,
) -> Iterator[Any]:
    """The connection `opening` gives, open inside the context; a failure to open it is a
    `SourceConnectionError` whose message ends with `fix` (`{resource_key}` filled in);
    this package's own errors, a resource that gives none, pass."""
    with ExitStack() as stack:
        try:
            connection = stack.enter_context(opening)
        except DagsterDataframelyError:
            raise
        except Exception as error:
            raise _connection_error(
                error, asset=asset, source=source, fix=fix.format(resource_key=resource_key)
            ) from error
        yield connection


def _connection_error(
    error: Exception, *, asset: str, source: str, fix: str
) -> SourceConnectionError:
    """The error of a connection the resource could not open: nothing was read."""
    return SourceConnectionError(
        f"Could not connect to the database of asset {asset} ({source}): "
        f"{type(error).__name__}: {_text(error)}. Nothing was checked. {fix}"
    )


def query_error(
    error: Exception,
    sql: str,
    *,
    rules: bool,
    asset: str,
    source: str,
    table: str,
    role: str | None,
    dialect: str,
    fixes: Mapping[str, str] | None = None,
    closed: bool = False,
) -> SourceConnectionError | SourceReadError | RuleEvaluationError:
    """The error of a query that failed: on a connection the server ended (or `closed`, as
    the driver says after the failure) it is lost; a rule query (`rules`) whose table was
    read fails evaluating the rule; any query the database refuses for its table fails
    reading it. `fixes` (SQLSTATE -> fix) are the source's own, over the ones here."""
    known = {**_READ_FIXES, **(fixes or {})}
    state = _sqlstate(error)
    detail = f"{type(error).__name__}: {_text(error)} (query: {logged(sql)})"
    as_role = f" as role {role}" if role else ""
    if closed or state.startswith(_CONNECTION_STATES) or _lost(error):
        return SourceConnectionError(
            f"Lost the connection to the database of asset {asset} (table {table}) through "
            f"{source}{as_role}: {detail}. No rule's result was reported. Check that the "
            "server is running and reachable, then run the check again."
        )
    if rules and not _read_failure(error, state, known):
        return RuleEvaluationError(
            f"Could not evaluate the rules of asset {asset} in {source}: {dialect} read table "
            f"{table}{as_role} but failed computing the rules pushed down to it: {detail}. A "
            "rule's SQL, or a value it reads, fails in the database (an overflow, a regex its "
            "engine refuses, an error in a view's column). If the table's values are sound, "
            "report the rule to dagster-dataframely, so that it falls back to polars; meanwhile "
            "check the table in polars (DuckDBTableSource(pushdown=False), or a function "
            "source that reads it)."
        )
    fix = known.get(state, _READ_FIX).format(table=table, role=role or "the resource's role")
    return SourceReadError(
        f"Could not check asset {asset} in {source}{as_role}: the database refused to read "
        f"table {table}: {detail}. {fix}"
    )


def _sqlstate(error: Exception) -> str:
    """The error's SQLSTATE: the driver's attribute (`sqlstate`, psycopg2's `pgcode`), else
    the `SQLSTATE: 42P01` Spark and the Databricks SQL connector write in the message."""
    state = getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)
    if state:
        return str(state)
    written = _WRITTEN_SQLSTATE.search(str(error))
    return written.group(1) if written else ""


def _lost(error: Exception) -> bool:
    """Whether the driver lost the connection (its error has no SQLSTATE to say so)."""
    return isinstance(error, ConnectionError) or any(
        (kind.__module__, kind.__name__) in _LOST for kind in type(error).__mro__
    )


def _read_failure(error: Exception, state: str, known: Mapping[str, str]) -> bool:
    """Whether the database refused the table itself (missing, not granted, too slow)."""
    if state:
        return state in known
    duckdb = sys.modules.get("duckdb")
    return duckdb is not None and type(error).__name__ in _DUCKDB_READ


def _text(error: Exception) -> str:
    """The error's message on one line: its driver's `summary` of it where it gives one (a
    Spark error's first line, not its plan or Java stack)."""
    return " ".join(str(getattr(error, "summary", None) or error).split())
