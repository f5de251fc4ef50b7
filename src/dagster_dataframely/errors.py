"""The errors of dagster-dataframely: one class per user mistake or data outcome.

Every message says what was wrong, where, and what to do about it.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "CheckNameCollisionError",
    "CollectionMemberError",
    "ColumnSchemaError",
    "DagsterDataframelyError",
    "DuplicateChecksError",
    "FailingRowsWriteError",
    "FrameConversionError",
    "IOManagerLoadError",
    "InstanceNotFoundError",
    "InvalidAssetKeyError",
    "InvalidSettingError",
    "InvalidSeverityError",
    "InvalidSourceError",
    "InvalidTableCheckError",
    "InvalidToleranceError",
    "MemberPartitionsError",
    "NoCheckHistoryError",
    "NoValidRowsError",
    "QuarantineKeyCollisionError",
    "QuarantineLayoutError",
    "QuarantineSelectionError",
    "ReservedColumnError",
    "RuleEvaluationError",
    "SourceConnectionError",
    "SourceReadError",
    "TableNotFoundError",
    "TablesNotCheckedError",
    "UnknownAssetError",
    "UnknownModelError",
    "UnloadableAssetError",
    "UnmatchedSelectionError",
    "UnsupportedFrameError",
    "UnsupportedManifestError",
    "UnsupportedSchemaError",
    "ValidationAbortError",
]


class DagsterDataframelyError(Exception):
    """Base class of every error this package raises."""


# ----------------------------------- definition time ---------------------------------- #


class InvalidSettingError(DagsterDataframelyError, ValueError):
    """A setting has a value it cannot take, in an argument or an environment variable."""


class InvalidSeverityError(DagsterDataframelyError, ValueError):
    """`dd.warn` or `warn=` names something that is neither a rule nor a column."""


class InvalidToleranceError(DagsterDataframelyError, ValueError):
    """`dd.tolerate` or `tolerate=` names an unknown rule, or a limit no rule can have."""


class InvalidTableCheckError(DagsterDataframelyError, ValueError):
    """`dd.expect_rows`, `dd.expect_fresh` (or `expect_rows=`, `expect_fresh=`) are given
    bounds no table can meet, or name a column that is not a timestamp of the schema."""


class ReservedColumnError(DagsterDataframelyError, ValueError):
    """A schema column uses the `dy_` prefix this package reserves for check names."""


class CheckNameCollisionError(DagsterDataframelyError, ValueError):
    """Two rules (or columns) of one schema map to the same check name."""


class InvalidAssetKeyError(DagsterDataframelyError, ValueError):
    """A value passed as an asset key is none of `AssetKey`, `"prefix/name"` or its parts."""


class UnsupportedSchemaError(DagsterDataframelyError, TypeError):
    """An object passed as a schema cannot be turned into a rule catalogue."""


class UnknownAssetError(DagsterDataframelyError, ValueError):
    """`dd.with_schemas`, or a `SchemaChecksComponent` entry, names an asset key the
    Definitions (the project's defs folder) do not declare."""


class DuplicateChecksError(DagsterDataframelyError, ValueError):
    """Two entries of `SchemaChecksComponent`s (in one `defs.yaml` or two) define the same
    asset checks: one asset checked twice, or against two schemas."""


class CollectionMemberError(DagsterDataframelyError, ValueError):
    """`members=` of `dd.collection_checks` names a member the collection lacks, or misses a
    required one."""


class MemberPartitionsError(DagsterDataframelyError, ValueError):
    """The members of a collection's checks are partitioned differently (or some not at all)."""


class ChecksJobError(DagsterDataframelyError, ValueError):
    """`dd.checks_job` was given no checks, something else than checks, or checks partitioned
    differently (one run checks one partition)."""


class UnloadableAssetError(DagsterDataframelyError, ValueError):
    """Checks name an asset the sidecar cannot read: it has no IO manager (a dbt model, an
    external `AssetSpec`) and no `source=` says where its table is."""


class InvalidSourceError(DagsterDataframelyError, ValueError):
    """A `source=` is not a source, or cannot select what the run checks (a partitioned run
    and no `partition_expr`, a table name that is not one)."""


# ------------------------------------- run time ------------------------------------- #


class UnsupportedFrameError(DagsterDataframelyError, TypeError):
    """A value to validate is not a table this package can read."""


class FrameConversionError(DagsterDataframelyError, TypeError):
    """A pandas frame has a column polars cannot convert, most often one holding values of
    several types (`"A-1"` on one row, `7` on the next)."""

    def __init__(self, message: str, *, column: str | None) -> None:
        super().__init__(message)
        #: the column that could not be converted, None when no single column is to blame
        self.column = column


class SourceReadError(DagsterDataframelyError):
    """The sidecar could not read an asset's table from its source (a missing or truncated
    file, a refused query); the message names the asset and the source."""


class SourceConnectionError(SourceReadError):
    """The sidecar could not connect to an asset's database (a server that refuses, a wrong
    host or password); the message names the asset, the source, the table and the resource."""


class TablesNotCheckedError(DagsterDataframelyError):
    """A step checking many assets could not check some of their tables (each unreadable
    table's own error is in its checks' `dy_error` and in this message); the others' results
    were reported."""


class RuleEvaluationError(DagsterDataframelyError):
    """The database read the table but failed evaluating a pushed-down rule (an overflow, a
    regex its engine refuses): not a read problem; the message names the asset, the source,
    the table and the query."""


class FailingRowsWriteError(DagsterDataframelyError):
    """`keep_failing_rows=`: the rules were evaluated and their verdicts stand, but the
    failing rows could not be written where they are kept (a table made for an earlier
    schema, a role without the privilege, a folder that cannot be written). Never raised:
    its message is logged and carried by each failing check (`dy_failing_rows_error`)."""


class IOManagerLoadError(SourceReadError):
    """The asset's IO manager could not load it; the message names the asset and the IO
    manager."""


class ColumnSchemaError(DagsterDataframelyError):
    """The frame's columns do not match the schema: a column is missing or has another dtype.

    The package never casts; the message names `Schema.cast` as the remedy.

    Attributes:
        mismatches: column -> (expected dtype, actual dtype or None when the column is
            missing).
    """

    def __init__(self, message: str, *, mismatches: Mapping[str, tuple[str, str | None]]):
        super().__init__(message)
        self.mismatches = dict(mismatches)


class ValidationAbortError(DagsterDataframelyError):
    """Rows failed `"error"` rules and the asset does not quarantine, or (the circuit breaker)
    failed them on more rows than their tolerance allows: nothing was written to the table.

    Attributes:
        counts: rule name -> failed rows, for the `"error"` rules that failed.
        quarantine: the quarantine address, when the invalid rows were written to one.
    """

    def __init__(
        self, message: str, *, counts: Mapping[str, int], quarantine: str | None = None
    ) -> None:
        super().__init__(message)
        self.counts = dict(counts)
        self.quarantine = quarantine


class NoValidRowsError(ValidationAbortError):
    """Every row failed an `"error"` rule: the quarantine was written, the table was not."""


class QuarantineKeyCollisionError(DagsterDataframelyError):
    """Another asset in the code location already materializes the quarantine's asset key of
    a hand-wired asset (for the quarantine `dd.asset` declares, Dagster refuses the duplicate
    key when the Definitions load)."""


class QuarantineSelectionError(DagsterDataframelyError):
    """A run selected the checks of a quarantined `dd.asset` without the table or its
    quarantine: nothing computes the frame they judge. (A run of the quarantine alone runs
    the pair.)"""


class QuarantineLayoutError(DagsterDataframelyError):
    """The stored quarantine table has other columns than the quarantine to write (a rule or a
    column was added or removed): the run fails before the IO manager deletes anything."""

    def __init__(
        self, message: str, *, table: str, stored: tuple[str, ...], written: tuple[str, ...]
    ) -> None:
        super().__init__(message)
        #: the stored table, as the IO manager names it
        self.table = table
        #: its columns, and the columns of the quarantine this run writes
        self.stored = stored
        self.written = written


class TableNotFoundError(DagsterDataframelyError, LookupError):
    """A schema cannot be inferred for a table, file or connection that holds no readable
    table; the message names it, the closest names the database has, and what to give."""


class UnsupportedManifestError(DagsterDataframelyError, ValueError):
    """A dbt `manifest.json` of a schema version this package does not read, or not a dbt
    manifest at all; the message names the version found and the dbt versions that write a
    readable one."""


class UnknownModelError(DagsterDataframelyError, LookupError):
    """A model selected by name that the dbt manifest does not have; the message lists the
    closest model names it has."""


class InstanceNotFoundError(DagsterDataframelyError, LookupError):
    """The report was given no Dagster instance to read: `DAGSTER_HOME` is not set, or it (or
    `--instance`) names a directory that does not exist."""


class NoCheckHistoryError(DagsterDataframelyError, LookupError):
    """The Dagster instance holds no check evaluation to report (an empty instance, or none
    in the time window or partition asked for); the message names the instance and filters."""


class UnmatchedSelectionError(DagsterDataframelyError, ValueError):
    """The report's asset selection matches no asset with check evaluations, or uses a part of
    Dagster's selection syntax that needs the asset graph (`--defs`); the message names the
    selection and the closest asset keys the instance has."""
