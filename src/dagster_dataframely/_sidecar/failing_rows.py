"""`keep_failing_rows=`: a sidecar run's failing rows, kept where the data lives.

A database source (DuckDB, `SQLTableSource`) keeps them in a table beside the checked one,
`<table>__dy_failures` in its schema (or in the schema named), written inside the database
through the source's own connection (`failing_tables`), whichever engine evaluated the
rules. A database that cannot replace a partition's rows in a transaction (Spark,
Redshift, Trino: `keeps_failing_rows`) selects them and they are streamed to files, as every
other source's are: one parquet file per partition (a polars sink, then a rename) in
`<asset key>__dy_failures/`: beside a parquet or Delta source's path, under the instance's
storage for an IO manager, or under the directory named. Naming a place, not a table or a
file, lets one setting serve every asset of `with_schemas`, a collection or a Component.
Each run first clears its asset's earlier rows of the partitions it checked, so a passing run
leaves none; a run over several partitions keeps each row under its own. The package writes
only into a table it made (`ownership`): any other table of that name is left as it is.
Keeping is a convenience: a failure to keep is a `FailingRowsWriteError`, logged and
reported on the failing checks, never raised, so it never hides a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import dagster as dg
import dataframely as dy
import polars as pl

from .._checks import figures as f
from .._engine.catalogue import Rule
from .._engine.evaluate import Evaluation
from .._engine.failing_rows import (
    PARTITION_KEY,
    Removed,
    Stamp,
    UntoldPartitions,
    failing_frame,
    failing_rules,
)
from .._engine.settings import resolve
from ..errors import FailingRowsWriteError, InvalidSourceError
from ..sources import Source
from ..sources._files import ParquetSource, _ScannedSource
from ..sources._partitions import run_partition
from ..sources._spark import SparkTableSource
from .failing_files import SUFFIX, beside, sink_atomically
from .failing_tables import Unkept, keep_in_table, told

if TYPE_CHECKING:
    from sqlglot import exp

    from .._engine.sql.backend import SQLTable
    from .._engine.sql.staging import Session

_UNPARTITIONED = "__unpartitioned"
#: Marks a collection member's file of the rows its filters removed: `<partition>@filters`
#: (a quoted partition key never holds `@`).
_REMOVED = "@filters"


@dataclass(frozen=True)
class KeepFailingRows:
    """The setting, resolved once: `target` names the schema or directory (None: beside the
    checked table), `cap` the most rows one run keeps."""

    target: str | None
    cap: int

    @classmethod
    def resolve(cls, keep: bool | str | None, cap: int | None) -> KeepFailingRows | None:
        kept = resolve("keep_failing_rows", keep)
        if kept is False:
            return None
        return cls(None if kept is True else str(kept), resolve("max_failing_rows", cap))


def failures_key(asset_key: dg.AssetKey) -> dg.AssetKey:
    """The asset key of the failing rows of `asset_key`: its last part + `__dy_failures`."""
    return dg.AssetKey([*asset_key.path[:-1], asset_key.path[-1] + SUFFIX])


@dataclass(frozen=True)
class Kept:
    """Where a run kept its failing rows; `query(flags)` reads those failing any of the check
    names `flags`; `error` says why nothing was kept."""

    address: str
    cap: int
    kept: int = 0
    query: Callable[[Sequence[str]], str] | None = None
    error: str | None = None

    def metadata(self, rules: Sequence[Rule], evaluation: Evaluation) -> dict[str, Any]:
        """What a failing check of `rules` carries: the address, a query, the count and cap."""
        if self.error is not None:
            return {f.KEPT_ERROR: dg.MetadataValue.text(self.error)}
        flags = [rule.check_name for rule in failing_rules(rules, evaluation)]
        found: dict[str, Any] = {
            f.KEPT_TABLE: dg.MetadataValue.text(self.address),
            f.KEPT_ROWS: self.kept,
            f.KEPT_CAP: self.cap,
        }
        if flags and self.query is not None:  # text: shown whole in the Checks tab, copied as is
            found[f.KEPT_QUERY] = dg.MetadataValue.text(self.query(flags))
        return found


@dataclass(frozen=True)
class Keeper:
    """Keeps one run's failing rows of one asset: the rows failing its rules (the hook
    `schema_results` calls) and, for a collection member, the rows its `filters` removed
    (`removed`). Each kind replaces only its own earlier rows of the partition."""

    setting: KeepFailingRows
    context: dg.AssetCheckExecutionContext
    asset_key: dg.AssetKey
    source: Source
    #: A collection member's filter records: their flags follow its rules' in every row.
    filters: Sequence[Rule] = ()
    #: The checked rows in their database (a database source's, whichever engine evaluates
    #: the rules): the failing rows are kept there. None: the pushdown's, else in files.
    database: SQLTable | None = None
    #: Rows kept so far in this step, by kind (True: removed by filters): the cap holds for
    #: a member's rule and filter rows together.
    written: dict[bool, int] = field(default_factory=dict, compare=False)

    def stamp(self, dtypes: Mapping[str, pl.DataType], pushdown: SQLTable | None = None) -> Stamp:
        """The run's stamp on its rows; over several partitions, how each row's key is told
        from the source's `partition_expr` (a column of `dtypes`, or SQL `pushdown` runs)."""
        asset, run_id = self.asset_key.to_user_string(), self.context.run.run_id
        partition = run_partition(self.context)
        if partition is None:
            return Stamp(asset, run_id)
        if len(partition.keys) < 2:
            return Stamp(asset, run_id, partition.keys)
        column = getattr(self.source, "partition_expr", None)  # as the source selects rows
        expr = getattr(getattr(self.source, "reference", None), "partition_expr", None)
        return Stamp(
            asset, run_id, partition.keys, partition.row_key(column, expr, dtypes, pushdown)
        )

    def __call__(
        self,
        schema: type[dy.Schema],
        lf: pl.LazyFrame,
        catalogue: Sequence[Rule],
        evaluation: Evaluation,
        pushdown: SQLTable | None,
    ) -> Kept:
        shape = [*catalogue, *self.filters]
        columns, stamp = schema.column_names(), self.stamp(lf.collect_schema(), pushdown)

        def select(cap: int) -> exp.Select | None:
            from .._engine.sql import failing_rows as sql

            if pushdown is None:  # polars evaluated the rules, or read the rows cast
                return None
            dtypes = lf.collect_schema()
            return sql.failing_select(pushdown, schema, dtypes, shape, evaluation, stamp, cap)

        def frame(cap: int) -> pl.LazyFrame:
            return failing_frame(lf, columns, shape, evaluation, stamp, cap)

        rows = _Rows(columns, shape, bool(failing_rules(shape, evaluation)), frame, select)
        return self._keep(rows, stamp, pushdown, removed=False)

    def removed(
        self,
        schema: type[dy.Schema],
        catalogue: Sequence[Rule],
        removed: Removed,
        pushdown: SQLTable | None,
    ) -> Kept:
        """Keep the valid rows of this collection member that its filters removed
        (`catalogue`: the member's rules); the database's rows where `removed` has them."""
        ran = {rule.name: rule for rule in removed.filters}
        shape = [*catalogue, *(ran.get(rule.name, rule) for rule in self.filters)]
        valid = {} if removed.valid is None else removed.valid.collect_schema()
        columns, passed = schema.column_names(), removed.passed(shape)
        stamp = self.stamp(valid, pushdown if removed.rows is not None else None)

        def select(cap: int) -> exp.Select | None:
            from .._engine.sql import failing_rows as sql

            if removed.rows is None:
                return None
            return sql.removed_select(removed, columns, shape, stamp, cap)

        def frame(cap: int) -> pl.LazyFrame:
            assert removed.valid is not None  # polars evaluated the filters
            return failing_frame(removed.valid, columns, shape, passed, stamp, cap)

        rows = _Rows(columns, shape, bool(failing_rules(shape, passed)), frame, select)
        return self._keep(rows, stamp, pushdown, removed=True, session=removed.session)

    def _keep(
        self,
        rows: _Rows,
        stamp: Stamp,
        pushdown: SQLTable | None,
        *,
        removed: bool,
        session: Session | None = None,
    ) -> Kept:
        database = self.database if self.database is not None else pushdown
        table = getattr(getattr(self.source, "reference", None), "table", None)
        try:
            if database is not None and not database.dialect.keeps_failing_rows:
                return self._in_files(
                    rows, stamp, removed=removed, database=database, session=session
                )
            if database is None or database.session is None or table is None:
                return self._in_files(rows, stamp, removed=removed)
            if session is not None:
                return self._in_database(rows, stamp, database, table, session, removed=removed)
            with database.session() as opened:
                return self._in_database(rows, stamp, database, table, opened, removed=removed)
        except UntoldPartitions as error:
            message = (
                f"Did not keep the failing rows of asset {self.asset_key.to_user_string()}: "
                f"{error}. The check results are reported all the same."
            )
            self.context.log.warning(message)
            return Kept("", self.setting.cap, error=message)
        except Exception as error:  # whatever failed, keeping never hides a verdict
            return self._unkept("their table or folder", told(error), "")

    def _in_database(
        self,
        rows: _Rows,
        stamp: Stamp,
        database: SQLTable,
        table: exp.Table,
        session: Session,
        *,
        removed: bool,
    ) -> Kept:
        cap = self.setting.cap - sum(self.written.values())
        try:
            kept = keep_in_table(
                rows,
                stamp,
                database,
                table,
                session,
                schema=self.setting.target,
                cap=cap,
                removed=removed,
            )
        except InvalidSourceError as error:  # a schema name that does not parse
            self.context.log.warning(str(error))
            return Kept(str(self.setting.target), self.setting.cap, error=str(error))
        except Unkept as refused:
            return self._unkept(refused.where, refused.why, refused.fix)
        self.written[removed] = kept.kept
        return Kept(kept.address, self.setting.cap, kept.kept, query=kept.query)

    def _unkept(self, where: str, why: str, fix: str) -> Kept:
        """Nothing kept, told as a `FailingRowsWriteError` (logged, and carried by each
        failing check): where, why, and the fix; the verdicts are reported all the same."""
        error = FailingRowsWriteError(
            f"The failing rows of asset {self.asset_key.to_user_string()} were not kept in "
            f"{where}: {why}. The rules were evaluated: the check results are reported all "
            f"the same. {fix}".rstrip()
        )
        message = f"{type(error).__name__}: {error}"
        self.context.log.warning(message)
        return Kept(where, self.setting.cap, error=message)

    def _in_files(
        self,
        rows: _Rows,
        stamp: Stamp,
        *,
        removed: bool,
        database: SQLTable | None = None,
        session: Session | None = None,
    ) -> Kept:
        """One file per partition the run checked, each replacing that partition's; the
        rows selected in `database` where it has them (`_Rows.read`), each under its own
        partition key, which splits a range's rows between the files."""
        cap = self.setting.cap - sum(self.written.values())
        directory = self.directory()
        mark = _REMOVED if removed else ""
        keys = stamp.partitions or (_UNPARTITIONED,)
        names = [quote(key, safe="") + mark + ".parquet" for key in keys]
        paths = [f"{directory.rstrip('/')}/{name}" for name in names]
        path = paths[0] if len(paths) == 1 else f"{directory.rstrip('/')}/"
        try:
            frame = rows.read(max(cap, 0), database, session)
        except UntoldPartitions:
            raise  # a range's rows untold: `_keep` says so
        except Exception as error:  # the database's select, or polars' of repeated keys
            return self._unkept(path, f"selecting them failed: {told(error)}", "")
        try:
            for key, name in zip(keys, names, strict=True):
                own = frame if len(keys) == 1 else frame.filter(pl.col(PARTITION_KEY) == key)
                sink_atomically(own, directory, name)
            kept = pl.scan_parquet(paths).select(pl.len()).collect().item()
        except Exception as error:
            return self._unkept(
                path,
                f"the write was refused: {told(error)}",
                "Check that the directory can be written, or set keep_failing_rows= to one "
                "that can.",
            )
        self.written[removed] = kept
        return Kept(
            path,
            self.setting.cap,
            kept,
            query=lambda flags: (
                f"pl.scan_parquet({paths[0] if len(paths) == 1 else paths!r}).filter("
                + " | ".join(f"pl.col({flag!r})" for flag in flags)
                + ")"
            ),
        )

    def directory(self) -> str:
        """The directory of the files: the one named, else beside a parquet or Delta
        source's path (Spark's too), else beside the asset's default storage in the
        instance."""
        if self.setting.target is not None:
            return str(Path(self.setting.target).joinpath(*failures_key(self.asset_key).path))
        if isinstance(self.source, _ScannedSource):
            return beside(self.source.path, glob=isinstance(self.source, ParquetSource))
        if isinstance(self.source, SparkTableSource) and self.source.path is not None:
            return beside(self.source.path, glob=self.source.format == "parquet")
        storage = Path(self.context.instance.storage_directory())
        return str(storage.joinpath(*failures_key(self.asset_key).path))


@dataclass(frozen=True)
class _Rows:
    """The rows one keeping writes: the checked `columns`, the rules whose flags follow
    (`shape`), whether any flag fails (`failing`), and how to select at most a cap of them:
    in polars (`frame`) or, where every flag has an exact SQL form, in the database
    (`select`, None otherwise)."""

    columns: Sequence[str]
    shape: Sequence[Rule]
    failing: bool
    frame: Callable[[int], pl.LazyFrame]
    select: Callable[[int], exp.Select | None]

    def read(
        self, cap: int, database: SQLTable | None, session: Session | None = None
    ) -> pl.LazyFrame:
        """At most `cap` of the rows, to write to files: selected in `database` (through
        `session` where it staged them) where it has them, so that only they leave it; else
        by polars (no row fails: an empty frame of the kept shape)."""
        select = None if database is None or not self.failing else self.select(cap)
        if select is None:
            return self.frame(cap)
        assert database is not None
        run = database.run if session is None else session.run
        return run(select.sql(dialect=database.dialect.name)).lazy()
