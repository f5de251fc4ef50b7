"""What a gated run says about its rows: the words each failing check carries for what
happened to them (`dy_failed_rows`, and `dy_quarantine` where they went), and the table's
materialization with the written rows' columns, sample and statistics."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from .._checks import figures as f
from .._checks.metadata import COLUMN_SCHEMA_KEY, written_schema
from .._checks.specs import Check
from .._engine.display import table
from .._engine.evaluate import Evaluation
from .split import Split

WRITTEN = "written to the table"
ABORTED = 'not written: rows failed "error" rules, so the run wrote nothing and failed'
STOPPED = "not written: rules failed above their tolerance, so the table was not written"
UNWRITTEN = "not written: writing the quarantine failed, so the table was not written either"


@dataclass(frozen=True)
class Fate:
    """What a run did with the rows that failed its rules, per rule severity: each failing
    check says so in words (`dy_failed_rows`), and the checks whose rows went to the
    quarantine, only those, carry its address (`dy_quarantine`)."""

    error: str
    warn: str
    quarantine: str | None = None
    #: the rows of "warn" rules were quarantined too (every row broke an "error" rule)
    all: bool = False

    def told(
        self,
        results: Iterator[dg.AssetCheckResult],
        checks: Sequence[Check],
        evaluation: Evaluation,
    ) -> Iterator[dg.AssetCheckResult]:
        by_name = {check.name: check for check in checks}
        for result in results:
            check = by_name.get(result.check_name or "")
            if result.passed or check is None:
                yield result
                continue
            failing = {r.severity for r in check.rules if evaluation.failed[r.name]}
            words = {self.error if severity == "error" else self.warn for severity in failing}
            metadata: dict[str, Any] = dict(result.metadata)
            metadata[f.FAILED_ROWS] = (
                words.pop()
                if len(words) == 1
                else f'rows of its "error" rules: {self.error}; of its "warn" rules: {self.warn}'
            )
            if self.quarantine is not None and ("error" in failing or self.all):
                metadata[f.QUARANTINE] = self.quarantine
            yield result.with_metadata(metadata)


@dataclass(frozen=True)
class Description:
    """What the table's materialization says about the rows written: among it the columns
    written (`dagster/column_schema`), so `dg.build_column_schema_change_checks` sees drift."""

    #: the schema's Columns tab: descriptions and constraints of the columns written
    declared: dg.TableSchema
    statistics: bool
    row_sample: int
    #: the table's IO manager streams a plan itself; otherwise a plan is collected for it
    takes_lazy: bool = False
    #: the statistics of the written rows (`written_statistics`)
    statistics_of: Callable[[], pl.DataFrame] | None = None

    def materialization(
        self, key: dg.AssetKey, split: Split, extra: Mapping[str, Any] | None = None
    ) -> dg.MaterializeResult:
        """The table's materialization, handing the written rows to its IO manager (a plan
        only to one that takes plans); the row sample is a head of the written rows."""
        written = split.written
        metadata: dict[str, Any] = {
            "dagster/row_count": split.written_rows,
            COLUMN_SCHEMA_KEY: written_schema(
                self.declared, pl.DataFrame(schema=written.collect_schema())
            ),
        }
        if self.row_sample:
            metadata["dy_row_sample"] = table(split.head(self.row_sample), null="null")
        if self.statistics and self.statistics_of is not None:
            metadata["dy_statistics"] = table(self.statistics_of())
        metadata.update(extra or {})
        value = (
            written
            if isinstance(written, pl.DataFrame) or self.takes_lazy
            else written.collect(engine="streaming")
        )
        return dg.MaterializeResult(asset_key=key, value=value, metadata=metadata)
