"""The quarantine: the frame of invalid rows, where it is written, and the key it is written as.

A quarantine frame is the invalid rows (the schema's columns) followed by one `String` column
per rule, named by the rule's check name, holding `"valid"` or `"invalid"`. A writer receives
that frame, writes it and returns its address, a string because it can name a database table.
In a run the asset's own IO manager writes it as the asset key `<last key part>_quarantine`
(same prefix), after checking that a database table stored there has the same columns:
the body hands it to the IO manager itself and records the write as a materialization of
that key, whether `dd.asset` declares the key (`declared_quarantine`) or a hand-wired asset
does not (`delegating_writer`). Under direct invocation, with no IO manager, a parquet file
holds it (`file_writer`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, overload

import dagster as dg
import dataframely as dy
import polars as pl

from .._checks import step_internals
from .._checks.asset_keys import parse_asset_key
from .._checks.metadata import COLUMN_SCHEMA_KEY, written_schema
from .._engine.catalogue import Rule, rules
from .._engine.schemas import SchemaLike, as_dataframely
from .._engine.settings import resolve
from ..errors import QuarantineKeyCollisionError, QuarantineLayoutError
from ..io import parquet_path, takes_lazy_frames, write_frame

if TYPE_CHECKING:  # universal-pathlib loads fsspec: imported when a path is first built
    from upath import UPath

#: Writes a quarantine frame and returns its address (a path, a table name, ...).
QuarantineWriter: TypeAlias = Callable[[pl.DataFrame], str]
#: Writes a quarantine frame (or plan) within the step's events: yields the quarantine's
#: materialization when it is a declared output of the step, and returns the address.
QuarantineStep: TypeAlias = Callable[
    [pl.DataFrame | pl.LazyFrame], Generator[dg.MaterializeResult, None, str]
]

QUARANTINE_SUFFIX = "_quarantine"
# Metadata an IO manager logs that names where it wrote, most specific first.
_ADDRESS_KEYS = ("dagster/table_name", "dagster/uri", "path", "uri", "table")


def quarantine_output(key: dg.AssetKey) -> str:
    """The name of the output `dd.asset` declares for the quarantine asset `key`."""
    return key.to_python_identifier()


def quarantine_key(asset_key: dg.AssetKey | str | Sequence[str]) -> dg.AssetKey:
    """The asset key a quarantine is written as: `<last key part>_quarantine`, same prefix."""
    key = parse_asset_key(asset_key, argument="key")
    return dg.AssetKey([*key.path[:-1], key.path[-1] + QUARANTINE_SUFFIX])


# ----------------------------------- the frame ----------------------------------- #


def quarantine_frame(schema: SchemaLike, failure: dy.FailureInfo) -> pl.DataFrame:
    """The frame every quarantine writer receives, from the `failure` of `Schema.filter`.

    The invalid rows in the schema's columns, then one `String` column per rule of `schema`,
    named by the rule's check name (`dy_rule__amount__min`), holding `"valid"` or
    `"invalid"` (`"unknown"` where Dataframely could not evaluate the rule).
    """
    dy_schema = as_dataframely(schema)
    details = failure.details()
    present = set(details.columns)
    catalogue = [rule for rule in rules(dy_schema) if rule.name in present]
    flags = details.select(
        *dy_schema.column_names(),
        *(
            pl.col(rule.name)
            .cast(pl.String)
            .replace_strict({"valid": True, "invalid": False}, default=None)
            .alias(rule.check_name)
            for rule in catalogue
        ),
    )
    return flagged_quarantine(dy_schema, flags, rules(dy_schema))


@overload
def flagged_quarantine(
    schema: type[dy.Schema], flags: pl.DataFrame, catalogue: Sequence[Rule]
) -> pl.DataFrame: ...
@overload
def flagged_quarantine(
    schema: type[dy.Schema], flags: pl.DataFrame | pl.LazyFrame, catalogue: Sequence[Rule]
) -> pl.DataFrame | pl.LazyFrame: ...
def flagged_quarantine(
    schema: type[dy.Schema], flags: pl.DataFrame | pl.LazyFrame, catalogue: Sequence[Rule]
) -> pl.DataFrame | pl.LazyFrame:
    """The quarantine frame of invalid rows that carry one Boolean column per rule, named by
    its check name (`False` fails). A rule without a column passed on every row."""
    present = set(flags.collect_schema().names())
    return flags.select(
        *schema.column_names(), *(_status(rule.check_name, present) for rule in catalogue)
    )


def _status(name: str, present: set[str]) -> pl.Expr:
    """The flag column `name` in words: `"valid"`, `"invalid"`, `"unknown"` for null;
    `"valid"` when the flags have no such column.

    Row by row, so polars' streaming engine streams it: `replace_strict` is a whole-column
    function there, which held the quarantine's plan in memory in proportion to the rows
    read, not to the rows quarantined (issue 40: 536 MB at 10M rows and 1,869 MB at 50M,
    against 257 and 272 MB row by row, 5% of the rows quarantined)."""
    valid = pl.lit("valid", dtype=pl.String)
    if name not in present:
        return valid.alias(name)
    flag = pl.col(name)
    words = pl.when(flag).then(valid).when(~flag).then(pl.lit("invalid", dtype=pl.String))
    return words.otherwise(pl.lit("unknown", dtype=pl.String)).alias(name)


# ---------------------------------- the writers ---------------------------------- #


def delegating_writer(
    context: dg.AssetExecutionContext | dg.OpExecutionContext,
) -> QuarantineWriter:
    """A writer that hands the quarantine to the asset's own IO manager, as the asset key
    `<last key part>_quarantine` with the same prefix and the run's partition.

    The IO manager receives the step's output context with only the asset key changed. The
    address is what the IO manager reports (a table name or a path), else the key. Each write
    is logged as a materialization of the quarantine key (row count, address, partition), so
    the quarantine has its own history in the catalog. A database IO manager's stored table
    is compared with the frame first: other columns raise `QuarantineLayoutError` before the
    IO manager deletes a row.
    Raises `dagster._core.errors.DagsterInvalidPropertyError` under direct invocation, which
    has no step and so no IO manager: use `file_writer` there.
    """
    if not step_internals.in_run(context):
        raise step_internals.DagsterInvalidPropertyError(
            "delegating_writer(context) needs a step to reach the asset's IO manager, and a "
            "directly invoked asset has none. Under direct invocation use "
            "dd.wiring.file_writer(key, quarantine_dir, partition_key) instead."
        )
    table_key = context.asset_key

    def write(frame: pl.DataFrame) -> str:
        stored = _store(context, table_key, frame)
        context.log_event(stored.materialization())
        return stored.address

    return write


def declared_quarantine(
    context: step_internals.Context, table_key: dg.AssetKey, key: dg.AssetKey
) -> QuarantineStep:
    """The quarantine `dd.asset` declares beside the table `table_key` as `key`, written by the body
    itself through the IO manager, so that a failed write is an exception the body catches
    (every rule result is reported before the run fails), and so that a run that selected
    the table alone writes it too.

    When the run selected the quarantine, its materialization is yielded as that output's
    `MaterializeResult` without a value (Dagster records it, with its lineage, and does not
    call the IO manager again; downstream steps load what was written); otherwise it is
    logged as an `AssetMaterialization` of the quarantine key. Returns the address the IO
    manager logged, else the key.
    """

    def write(frame: pl.DataFrame | pl.LazyFrame) -> Generator[dg.MaterializeResult, None, str]:
        stored = _store(context, table_key, frame, key, output_name=quarantine_output(key))
        if stored.key in context.selected_asset_keys:
            yield dg.MaterializeResult(asset_key=stored.key, metadata=stored.metadata)
        else:
            context.log_event(stored.materialization())
        return stored.address

    return write


def writing(writer: QuarantineWriter) -> QuarantineStep:
    """`writer` as a step that yields nothing: it writes and returns the address. A writer
    takes a `pl.DataFrame`, so a plan is collected for it (the quarantine's rows only)."""

    def write(frame: pl.DataFrame | pl.LazyFrame) -> Generator[dg.MaterializeResult, None, str]:
        yield from ()
        return writer(frame if isinstance(frame, pl.DataFrame) else frame.collect())

    return write


def file_writer(
    key: dg.AssetKey | str | Sequence[str],
    quarantine_dir: str | os.PathLike[str] | None = None,
    partition_key: str | None = None,
    *,
    written_as: dg.AssetKey | None = None,
) -> QuarantineWriter:
    """A writer that writes the quarantine of asset `key` as parquet at `quarantine_path`.

    For direct invocation, which has no IO manager. The file is written beside its target
    and renamed into place, so a failed write never leaves a partial file.
    """
    path = quarantine_path(key, quarantine_dir, partition_key, written_as=written_as)

    def write(frame: pl.DataFrame) -> str:
        write_frame(frame, path)
        return str(path)

    return write


def quarantine_path(
    key: dg.AssetKey | str | Sequence[str],
    quarantine_dir: str | os.PathLike[str] | None = None,
    partition_key: str | None = None,
    *,
    written_as: dg.AssetKey | None = None,
) -> UPath:
    """Where `file_writer` writes the quarantine of asset `key`.

    `<quarantine_dir>/<prefix parts>/<name>_quarantine.parquet`, or for a partition
    `<quarantine_dir>/<prefix parts>/<name>_quarantine/<partition key>.parquet`, so two
    partitions never share a file: the layout of `dd.ParquetIOManager`, whose encoding keeps
    unsafe characters out of file names (`2024-01-01-00:00` -> `2024-01-01-00~3A00`).
    `quarantine_dir` defaults to the `quarantine_dir` setting; `written_as`, the quarantine's
    key when `dd.asset(quarantine_key=...)` chose another one.
    """
    from upath import UPath

    root = UPath(resolve("quarantine_dir", quarantine_dir)).expanduser().absolute()
    return parquet_path(root, written_as or quarantine_key(key), partition_key)


# --------------------------------- the key guard --------------------------------- #


def validate_quarantine_key(context: step_internals.Context) -> None:
    """Raise `QuarantineKeyCollisionError` when another asset in the code location
    materializes the quarantine's key `<last key part>_quarantine`. A no-op under direct
    invocation, which has no asset graph to look in."""
    graph = step_internals.asset_graph(context)
    if graph is None:
        return
    key = quarantine_key(context.asset_key)
    if graph.has(key) and graph.get(key).is_materializable:
        raise QuarantineKeyCollisionError(
            f"Asset {context.asset_key.to_user_string()} writes its quarantine as the asset key "
            f"{key.to_user_string()}, but another asset in this code location already "
            "materializes that key, so one would overwrite the other. Rename one of the two "
            "assets (name= or key_prefix=), or turn the quarantine off for this asset."
        )


# ------------------------------------ helpers ------------------------------------ #


def _check_layout(
    context: step_internals.Context,
    table_key: dg.AssetKey,
    key: dg.AssetKey,
    columns: tuple[str, ...],
    output_name: str | None,
) -> None:
    """Raise `QuarantineLayoutError` when the database table stored for the quarantine of
    `table_key` (as `key`) has other `columns` than the quarantine (its IO manager would
    delete the stored rows, then fail on the insert)."""
    stored = step_internals.stored_table(context, key, table_key=table_key, output_name=output_name)
    if stored is not None and stored.columns != columns:
        raise _layout_error(table_key, stored, columns)


@dataclass(frozen=True)
class _Stored:
    """A quarantine the IO manager stored: its key, address and materialization metadata."""

    key: dg.AssetKey
    partition: str | None
    address: str
    metadata: dict[str, Any]

    def materialization(self) -> dg.AssetMaterialization:
        return dg.AssetMaterialization(
            asset_key=self.key,
            partition=self.partition,
            description=f"Rows of {self.metadata['dy_quarantine_of']} that failed an "
            '"error" rule in this run (none when empty).',
            metadata=self.metadata,
        )


def _store(
    context: step_internals.Context,
    table_key: dg.AssetKey,
    frame: pl.DataFrame | pl.LazyFrame,
    key: dg.AssetKey | None = None,
    *,
    output_name: str | None = None,
) -> _Stored:
    """Write the quarantine of `table_key` as `key` (default `<name>_quarantine`) through the
    step's IO manager, after the layout check; what the IO manager logged, with the row
    count and the table's key. `output_name` is the step's output of the quarantine, when the
    op declares one. A plan (`pl.LazyFrame`) goes to an IO manager that takes plans as it is,
    to stream it; any other IO manager gets it collected."""
    key = key or quarantine_key(table_key)
    partition = context.partition_key if context.has_partition_key else None
    layout = pl.DataFrame(schema=frame.collect_schema())  # the columns, no rows
    _check_layout(context, table_key, key, tuple(layout.columns), output_name)
    handed: list[pl.DataFrame | pl.LazyFrame] = []

    def fit(io_manager: Any, value: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
        if isinstance(value, pl.LazyFrame) and not takes_lazy_frames(io_manager):
            value = value.collect(engine="streaming")
        handed.append(value)
        return value

    logged = step_internals.write_as(
        context, key, frame, table_key=table_key, output_name=output_name, fit=fit
    )
    address = _address(logged, key, partition)
    metadata = {
        **logged,
        "dagster/row_count": _row_count(handed[0], logged),
        COLUMN_SCHEMA_KEY: written_schema(_declared_columns(context, key), layout),
        "dy_quarantine": address,
        "dy_quarantine_of": table_key.to_user_string(),
    }
    return _Stored(key, partition, address, metadata)


def _row_count(written: pl.DataFrame | pl.LazyFrame, logged: dict[str, Any]) -> int:
    """The rows written: a frame's height; for a plan, what the IO manager logged, else a
    count over the plan (one more pass, for an IO manager that streams but counts nothing)."""
    if isinstance(written, pl.DataFrame):
        return written.height
    count = logged.get("dagster/row_count")
    count = getattr(count, "value", count)
    if isinstance(count, int):
        return count
    return int(written.select(pl.len()).collect(engine="streaming").item())


def _declared_columns(context: step_internals.Context, key: dg.AssetKey) -> dg.TableSchema | None:
    """The quarantine's Columns tab when `dd.asset` declared it, for its descriptions."""
    spec = context.assets_def.specs_by_key.get(key) if context.has_assets_def else None
    declared = spec.metadata.get(COLUMN_SCHEMA_KEY) if spec else None
    if isinstance(declared, dg.TableSchemaMetadataValue):
        return declared.schema
    return declared if isinstance(declared, dg.TableSchema) else None


def _address(metadata: dict[str, Any], key: dg.AssetKey, partition: str | None) -> str:
    for name in _ADDRESS_KEYS:
        if name in metadata:
            return str(getattr(metadata[name], "value", metadata[name]))
    where = key.to_user_string()
    return where if partition is None else f"{where} (partition {partition})"


def _layout_error(
    asset_key: dg.AssetKey, stored: step_internals.StoredTable, written: tuple[str, ...]
) -> QuarantineLayoutError:
    added = [c for c in written if c not in stored.columns]
    removed = [c for c in stored.columns if c not in written]
    changes = [
        *([f"columns added: {', '.join(added)}"] if added else []),
        *([f"columns removed: {', '.join(removed)}"] if removed else []),
        *([] if added or removed else ["the same columns in another order"]),
    ]
    return QuarantineLayoutError(
        f"Asset {asset_key.to_user_string()} cannot write its quarantine: the stored table "
        f"{stored.address} has other columns than this run's quarantine (one per rule, so a "
        f"rule added, removed or renamed changes them): {'; '.join(changes)}. Nothing was "
        "deleted and the table was not written. Move the stored quarantine aside, keeping its "
        f"rows, then rerun: ALTER TABLE {stored.relation} RENAME TO "
        f"{stored.relation.rsplit('.', 1)[-1]}_before_layout_change; (or DROP TABLE "
        f"{stored.relation}; to discard them). The next run creates it with the new columns.",
        table=stored.address,
        stored=stored.columns,
        written=written,
    )
