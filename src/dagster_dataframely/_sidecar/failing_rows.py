"""`keep_failing_rows=`: a sidecar run's failing rows, kept where the data lives.

A database source (DuckDB, `SQLTableSource` with pushdown) keeps them in a table beside the
checked one, `<table>__dy_failures` in its schema (or in the schema named), written inside
the database through the pushdown's own connection (`_engine.sql.failing_rows`); every other
source streams them to one parquet file per partition (a polars sink, then a rename) in
`<asset key>__dy_failures/`: beside a parquet or Delta source's path, under the instance's
storage for an IO manager, or under the directory named. Naming a place, not a table or a
file, lets one setting serve every asset of `with_schemas`, a collection or a Component.
Each run first clears its partition's earlier rows, so a passing run leaves none. Keeping is a
convenience: a failure to keep is logged and reported on the failing checks, never raised,
so it never hides a verdict.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import dagster as dg
import dataframely as dy
import polars as pl

from .._engine.catalogue import Rule
from .._engine.evaluate import Evaluation
from .._engine.failing_rows import Stamp, failing_frame, failing_rules, flag_columns
from .._engine.settings import resolve
from ..errors import InvalidSourceError
from ..sources import Source
from ..sources._files import ParquetSource, _ScannedSource

if TYPE_CHECKING:
    from sqlglot import exp

    from .._engine.sql.backend import SQLTable
    from .._engine.sql.staging import Session

#: The suffix of the failures table, directory and asset of a checked asset.
SUFFIX = "__dy_failures"
_UNPARTITIONED = "__unpartitioned"
#: Words of a database's refusal to let the role create or write a table.
_REFUSALS = ("permission", "privilege", "read-only", "read only", "not authorized")


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
    language: str = "sql"
    error: str | None = None

    def metadata(self, rules: Sequence[Rule], evaluation: Evaluation) -> dict[str, Any]:
        """What a failing check of `rules` carries: the address, a query, the count and cap."""
        if self.error is not None:
            return {"dy_failing_rows_error": dg.MetadataValue.text(self.error)}
        flags = [rule.check_name for rule in failing_rules(rules, evaluation)]
        found: dict[str, Any] = {
            "dy_failing_rows_table": dg.MetadataValue.text(self.address),
            "dy_failing_rows_kept": self.kept,
            "dy_failing_rows_cap": self.cap,
        }
        if flags and self.query is not None:
            text = self.query(flags)
            found["dy_failing_rows"] = dg.MetadataValue.md(f"```{self.language}\n{text}\n```")
        return found


@dataclass(frozen=True)
class Keeper:
    """Keeps one run's failing rows of one asset (the hook `schema_results` calls)."""

    setting: KeepFailingRows
    context: dg.AssetCheckExecutionContext
    asset_key: dg.AssetKey
    source: Source

    @property
    def stamp(self) -> Stamp:
        context = self.context
        if context.has_partition_key:
            return Stamp(context.run.run_id, context.partition_key)
        if context.has_partition_key_range:
            window = context.partition_key_range
            return Stamp(context.run.run_id, f"{window.start}...{window.end}")
        return Stamp(context.run.run_id, None)

    def __call__(
        self,
        schema: type[dy.Schema],
        lf: pl.LazyFrame,
        catalogue: Sequence[Rule],
        evaluation: Evaluation,
        pushdown: SQLTable | None,
    ) -> Kept:
        table = getattr(getattr(self.source, "reference", None), "table", None)
        try:
            if pushdown is not None and pushdown.session is not None and table is not None:
                return self._in_database(schema, lf, catalogue, evaluation, pushdown, table)
            return self._in_files(schema, lf, catalogue, evaluation)
        except Exception as error:  # whatever failed, keeping never hides a verdict
            message = (
                f"Could not keep the failing rows of asset {self.asset_key.to_user_string()}: "
                f"{type(error).__name__}: {str(error).strip()[:500]}. The check results are "
                "reported all the same."
            )
            self.context.log.warning(message)
            return Kept("", self.setting.cap, error=message)

    def _in_database(
        self,
        schema: type[dy.Schema],
        lf: pl.LazyFrame,
        catalogue: Sequence[Rule],
        evaluation: Evaluation,
        pushdown: SQLTable,
        table: exp.Table,
    ) -> Kept:
        from .._engine.sql import failing_rows as sql

        dialect = pushdown.dialect
        within = None
        if self.setting.target is not None:  # a schema: folded and quoted as the database has it
            from ..sources._names import parse_table

            named = f"{self.setting.target}.t"
            try:
                within = parse_table(named, dialect.name, where="keep_failing_rows (a schema)")
            except InvalidSourceError as error:  # keeping never hides a verdict
                self.context.log.warning(str(error))
                return Kept(self.setting.target, self.setting.cap, error=str(error))
        target = sql.beside(table, dialect, within)
        address = target.sql(dialect=dialect.name)
        stamp, cap = self.stamp, self.setting.cap
        columns = schema.column_names()
        assert pushdown.session is not None  # see `__call__`
        with pushdown.session() as session:
            try:
                create = sql.create(pushdown, target, columns, catalogue)
                try:
                    session.execute(create.sql(dialect=dialect.name))
                except Exception:  # a concurrent run may have created it meanwhile
                    session.rollback()
                    session.execute(create.sql(dialect=dialect.name))
                found = set(session.run(sql.present(target).sql(dialect=dialect.name)).columns)
                flags = [flag for flag in flag_columns(catalogue) if flag not in found]
                for alter in sql.widen(target, flags):
                    session.execute(alter.sql(dialect=dialect.name))
                statements: list[exp.Expr] = [sql.clear(target, stamp)]
                if failing_rules(catalogue, evaluation):
                    dtypes = lf.collect_schema()
                    select = sql.failing_select(
                        pushdown, schema, dtypes, catalogue, evaluation, stamp, cap
                    )
                    if select is not None:
                        statements.append(sql.insert(target, select, _names(columns, catalogue)))
                    else:  # a failing rule runs in polars: so do the rows it selects
                        rows = failing_frame(lf, columns, catalogue, evaluation, stamp, cap)
                        frame = rows.collect(engine="streaming")
                        statements += sql.values(target, frame, dialect)
                _transaction(session, [s.sql(dialect=dialect.name) for s in statements])
                kept = int(session.run(sql.counted(target, stamp).sql(dialect=dialect.name))[0, 0])
            except Exception as error:  # keeping never hides a verdict
                return self._refused(error, pushdown, session, target, address)
        return Kept(
            address,
            cap,
            kept,
            query=lambda flags: sql.query(target, stamp, flags).sql(dialect=dialect.name),
        )

    def _refused(
        self,
        error: Exception,
        pushdown: SQLTable,
        session: Session,
        target: exp.Table,
        address: str,
    ) -> Kept:
        """A refused write, told: with the GRANTs the role needs where it was refused."""
        from .._engine.sql import failing_rows as sql

        dialect = pushdown.dialect
        role = None
        current = dialect.current_role()
        if current is not None:
            from sqlglot import exp

            try:
                role = str(session.run(exp.select(current).sql(dialect=dialect.name))[0, 0])
            except Exception:
                role = None
        refused = any(word in str(error).lower() for word in _REFUSALS)
        if refused and role is not None:
            grants = "; ".join(
                g.sql(dialect=dialect.name) for g in sql.grant(dialect, target, role)
            )
            fix = f"Grant role {role!r} what it needs ({grants}), or"
        elif refused:
            fix = "Open the database writable (a DuckDB resource without read_only), or"
        else:
            fix = "If the table was made for another schema, drop it to have it made again, or"
        message = (
            f"Could not keep the failing rows of asset {self.asset_key.to_user_string()} in "
            f"table {address}{'' if role is None else f' as role {role!r}'}: "
            f"{type(error).__name__}: {str(error).strip()[:500]}. The check results are "
            f"reported all the same. {fix} set keep_failing_rows= to a schema it may write in."
        )
        self.context.log.warning(message)
        return Kept(address, self.setting.cap, error=message)

    def _in_files(
        self,
        schema: type[dy.Schema],
        lf: pl.LazyFrame,
        catalogue: Sequence[Rule],
        evaluation: Evaluation,
    ) -> Kept:
        stamp, cap = self.stamp, self.setting.cap
        directory = self.directory()
        name = quote(stamp.partition_key or _UNPARTITIONED, safe="") + ".parquet"
        path = f"{directory.rstrip('/')}/{name}"
        try:
            frame = failing_frame(lf, schema.column_names(), catalogue, evaluation, stamp, cap)
            _sink_atomically(frame, directory, name)
            kept = pl.scan_parquet(path).select(pl.len()).collect().item()
        except Exception as error:
            message = (
                f"Could not keep the failing rows of asset {self.asset_key.to_user_string()} "
                f"in {path}: {type(error).__name__}: {str(error).strip()[:500]}. The check "
                "results are reported all the same. Check that the directory can be written, "
                "or set keep_failing_rows= to one that can."
            )
            self.context.log.warning(message)
            return Kept(path, cap, error=message)
        return Kept(
            path,
            cap,
            kept,
            query=lambda flags: (
                f"pl.scan_parquet({path!r}).filter("
                + " | ".join(f"pl.col({flag!r})" for flag in flags)
                + ")"
            ),
            language="python",
        )

    def directory(self) -> str:
        """The directory of the files: the one named, else beside a parquet or Delta
        source's path, else beside the asset's default storage in the instance."""
        if self.setting.target is not None:
            return str(Path(self.setting.target).joinpath(*failures_key(self.asset_key).path))
        if isinstance(self.source, _ScannedSource):
            return _beside(self.source.path, glob=isinstance(self.source, ParquetSource))
        storage = Path(self.context.instance.storage_directory())
        return str(storage.joinpath(*failures_key(self.asset_key).path))


def _names(columns: Sequence[str], catalogue: Sequence[Rule]) -> list[str]:
    from .._engine.failing_rows import kept_columns

    return [*columns, *kept_columns(columns, catalogue)]


def _transaction(session: Session, statements: Sequence[str]) -> None:
    """`statements` in one transaction: all of them, or (rolled back) none."""
    from sqlglot import exp

    dialect = session.dialect.name
    session.execute(exp.Transaction().sql(dialect=dialect))
    try:
        for statement in statements:
            session.execute(statement)
    except Exception:
        with suppress(Exception):  # DuckDB's cursor holds the transaction open until told
            session.execute(exp.Rollback().sql(dialect=dialect))
        session.rollback()  # the connection's own, which pins the session's settings again
        raise
    session.execute(exp.Commit().sql(dialect=dialect))


def _beside(path: str, *, glob: bool) -> str:
    """`orders.parquet`, `orders/` or `orders/*.parquet` -> `orders__dy_failures`."""
    head = path
    if glob:
        for mark in "*?[":
            head = head.split(mark, 1)[0]
    head = head.rstrip("/")
    stem = head.rsplit("/", 1)
    parent, last = (stem[0], stem[1]) if len(stem) == 2 else ("", stem[0])
    last = last.removesuffix(".parquet")
    return f"{parent}/{last}{SUFFIX}" if parent else f"{last}{SUFFIX}"


def _sink_atomically(frame: pl.LazyFrame, directory: str, name: str) -> None:
    """Stream `frame` to `directory/name`: to a temporary file renamed over it locally (a
    reader never sees half a file); an object store's upload is atomic of itself."""
    if "://" in directory:
        frame.sink_parquet(f"{directory.rstrip('/')}/{name}")
        return
    Path(directory).mkdir(parents=True, exist_ok=True)
    temporary = Path(directory, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        frame.sink_parquet(temporary)
        os.replace(temporary, Path(directory, name))
    finally:
        temporary.unlink(missing_ok=True)


def failures_spec(
    asset_key: dg.AssetKey,
    schema: type[dy.Schema],
    catalogue: Sequence[Rule],
    partitions_def: dg.PartitionsDefinition | None,
) -> dg.AssetSpec:
    """The failing rows of `asset_key` as an asset downstream of it, with its Columns tab:
    the schema's columns, a flag per rule and the run's stamp. The checks write it, so it
    is declared, not materialized."""
    from .._checks.metadata import COLUMN_SCHEMA_KEY, table_schema
    from .._engine.failing_rows import PARTITION_KEY, RUN_ID

    checked = table_schema(schema)
    added = [
        dg.TableColumn(rule.check_name, "Boolean", description=f"Fails {rule.name}")
        for rule in {rule.check_name: rule for rule in catalogue}.values()
    ]
    added += [
        dg.TableColumn(RUN_ID, "String", description="The run that kept the row"),
        dg.TableColumn(PARTITION_KEY, "String", description="The partition the run checked"),
    ]
    return dg.AssetSpec(
        failures_key(asset_key),
        deps=[asset_key],
        partitions_def=partitions_def,
        description=(
            f"The rows of {asset_key.to_user_string()} failing a rule of {schema.__name__}, "
            "kept by its checks (keep_failing_rows=): one Boolean per rule, true where the row "
            "fails it."
        ),
        metadata={COLUMN_SCHEMA_KEY: dg.TableSchema(columns=[*checked.columns, *added])},
    )
