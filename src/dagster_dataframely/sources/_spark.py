"""`SparkTableSource`: a table of a `SparkSession`'s catalog, or a parquet or Delta path,
checked by Spark SQL.

It is `SQLTableSource` with the `spark` dialect, reading through the session the resource
gives instead of a DB-API connection (`_spark_session`): the same pushdown, partitions,
session settings and errors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..errors import InvalidSourceError
from ._sql import SQLTableSource

if TYPE_CHECKING:
    import dagster as dg
    from sqlglot import exp

    from ._sql import _Database


@dataclass(frozen=True, kw_only=True)
class SparkTableSource(SQLTableSource):
    """A table Spark reads, checked where it lives, through the session under `resource_key`.

    The resource is a `SparkSession` (or anything with `sql()`), dagster-pyspark's
    `PySparkResource`, or a function that returns a session. `table` is a name in the
    session's catalog (`db.orders`, a temporary view), defaulting to the asset's
    `dagster/table_name`; or give `path` (with `format`, `parquet` or `delta`) to check
    files. `partition_expr` selects the run's partition, as for the other databases.
    """

    resource_key: str = "spark"
    dialect: str = "spark"
    path: str | None = None
    format: Literal["parquet", "delta"] = "parquet"

    connection_fix: ClassVar[str] = (
        "Check that resource '{resource_key}' gives a SparkSession that runs or can start: a "
        "local session needs a Java runtime (JAVA_HOME, or java on PATH), a cluster's must be "
        "reachable, a Spark Connect server (sc://...) must be running and accept connections "
        "at its URL from this machine, and a stopped session runs no query (give one that is "
        "not stopped)."
    )
    read_fixes: ClassVar[Mapping[str, str]] = {
        "42501": "Give the user the Spark session runs as read access to {table}: to its "
        "folder and files (file-system permissions; for cloud storage, the credential or "
        "role the cluster reads it with), or for a catalog table SELECT on it.",
        "42K03": "Check the path (path=): the Spark session finds no files at {table}.",
    }
    #: The fix of a Delta path Spark reports missing (`42P01`). A session without Delta Lake
    #: reads `delta` in ``delta.`path` `` as a schema's name and finds no such table; one
    #: with it says the path holds no Delta table. The same state, so the fix names both.
    delta_fix: ClassVar[str] = (
        "Check that the path (path=) holds a Delta table (a _delta_log folder) and that the "
        "session reads Delta tables: start it with Delta Lake (the delta-spark package, "
        "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension and "
        "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog; "
        "Databricks has it built in). To check the table without Spark, give "
        "dd.sources.DeltaSource(path=...), which reads it with deltalake."
    )

    def __post_init__(self) -> None:
        if self.path is not None:
            if self.table is not None:
                raise InvalidSourceError(
                    f"SparkTableSource(table={self.table!r}, path={self.path!r}): give the "
                    "table's name or its path, not both."
                )
            if self.format not in ("parquet", "delta"):
                raise InvalidSourceError(
                    f"SparkTableSource(format={self.format!r}): give 'parquet' or 'delta'."
                )
            quoted = self.path.replace("`", "``")
            object.__setattr__(self, "table", f"{self.format}.`{quoted}`")
            if self.format == "delta":  # this source's fixes, over the class's
                object.__setattr__(self, "read_fixes", {**self.read_fixes, "42P01": self.delta_fix})
        super().__post_init__()

    @contextmanager
    def resolved(self, database: _Database) -> Iterator[exp.Table]:
        """A path's files as a temporary view for the check's queries (see
        `SparkConnection.temporary_view`): listed and their schema read once, not by each
        query (the column facts, the count, every sample). A catalog table is read by its
        name."""
        from sqlglot import exp

        table = self.reference.table
        assert table is not None
        if self.path is None:
            yield table
            return
        sql = exp.select(exp.Star()).from_(table.copy()).sql(dialect=self.dialect)
        with ExitStack() as stack:
            with database.named(sql):  # the path's errors, as a query of it fails
                view = stack.enter_context(database.connection.temporary_view(sql))
            database.log(f"Read {self.format} path '{self.path}' as temporary view {view}.")
            yield exp.to_table(view)

    def concurrent(self, context: dg.AssetCheckExecutionContext) -> bool:
        """One session serves the checks one at a time: each pins the session's settings
        through `spark.conf` and puts them back when it ends."""
        return False

    def connection(self, resource: Any) -> AbstractContextManager[Any]:
        from ._spark_session import spark_connection

        return spark_connection(resource)

    def describe(self) -> str:
        where = f"{self.format} path '{self.path}'" if self.path else None
        table = where or (f"table '{self.table}'" if self.table else "the asset's table")
        return f"Spark {table} via resource '{self.resource_key}'"
