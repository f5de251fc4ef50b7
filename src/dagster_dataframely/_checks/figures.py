"""One check's figures as a typed record: the `dy_*` metadata keys a check result carries,
named once here, and `Figures`, read back from a result's metadata.

The writers (`results`, `verdicts`, the gate's outcome, the kept rows, the step runner) use
these names, and the readers (the step's summary, the report) read `Figures`, so a key is
spelled in one place, as Dagster's `TableMetadataSet` does for its own keys. `from_metadata`
takes the `MetadataValue`s the package writes and the plain values a Dagster instance or its
JSON returns alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

#: A failing check's outcome in words. The UI lists metadata sorted by key (Dagster's event log
#: stores it with sorted keys), so the key sorts before every other key of a check result.
ASSESSMENT = "dy_assessment"
#: The rule a check of one rule evaluates (a check of several lists them under `RULES`).
RULE = "dy_rule"
RULES = "dy_rules"
#: The rule's readable constraint and its polars expression, on a failing check of one rule.
CONSTRAINT = "dy_constraint"
EXPRESSION = "dy_expression"
#: The failing rows (the worst rule's for a check of several) and the rows checked.
FAILED_COUNT = "dy_failed_count"
ROW_COUNT = "dy_row_count"
#: The failing rows as a fraction of the rows checked (the worst rule's), the float Dagster plots.
FAILED_FRACTION = "dy_failed_fraction"
#: The tolerance in words, and the failing rows to spare before the check fails (< 0: above it).
TOLERANCE = "dy_tolerance"
TOLERANCE_MARGIN = "dy_tolerance_margin"
#: Where the check's rules ran: `duckdb`, `polars`, or both (`duckdb, polars`).
ENGINE = "dy_engine"
#: A bounded sample of the failing rows.
FAILED_SAMPLE = "dy_failed_sample"
#: The kept failing rows (`keep_failing_rows=`): their table, a query reading this check's,
#: how many were kept and the most one run keeps; or why none were kept.
KEPT_TABLE = "dy_failing_rows_table"
KEPT_QUERY = "dy_failing_rows"
KEPT_ROWS = "dy_failing_rows_kept"
KEPT_CAP = "dy_failing_rows_cap"
KEPT_ERROR = "dy_failing_rows_error"
#: A gated asset's failing rows: what happened to them in words, and the quarantine's address.
FAILED_ROWS = "dy_failed_rows"
QUARANTINE = "dy_quarantine"
#: Why the table could not be read or evaluated (the check has no figures then).
ERROR = "dy_error"
#: Why the check was not evaluated (zero rows, no partition) though it passed.
SKIPPED = "dy_skipped"
#: The table checks': the expectation in words, and for freshness the newest value and its age.
EXPECTED = "dy_expected"
NEWEST = "dy_newest"
AGE_SECONDS = "dy_age_seconds"


@dataclass(frozen=True)
class Figures:
    """What one check result says, read from its metadata; a key it lacks is None.

    `passed` and `severity` come from the result itself (`of`), not its metadata: a check
    failing at WARN warned, at ERROR failed.
    """

    asset: str | None = None
    check: str | None = None
    passed: bool | None = None
    severity: str | None = None
    assessment: str | None = None
    rule: str | None = None
    failed_count: int | None = None
    row_count: int | None = None
    failed_fraction: float | None = None
    tolerance: str | None = None
    tolerance_margin: int | None = None
    engine: str | None = None
    sample: tuple[Mapping[str, Any], ...] = ()
    kept_table: str | None = None
    kept_query: str | None = None
    kept_rows: int | None = None
    kept_error: str | None = None
    failed_rows: str | None = None
    quarantine: str | None = None
    error: str | None = None
    skipped: str | None = None
    expected: str | None = None
    age_seconds: float | None = None

    @classmethod
    def from_metadata(
        cls,
        metadata: Mapping[str, Any],
        *,
        asset: str | None = None,
        check: str | None = None,
        passed: bool | None = None,
        severity: str | None = None,
    ) -> Figures:
        """The figures in `metadata`, `MetadataValue`s or plain values."""

        def text(key: str) -> str | None:
            value = _plain(metadata.get(key))
            return None if value is None else str(value)

        def number(key: str, kind: type[int] | type[float]) -> Any:
            value = _plain(metadata.get(key))
            return None if value is None else kind(value)

        return cls(
            asset=asset,
            check=check,
            passed=passed,
            severity=severity,
            assessment=text(ASSESSMENT),
            rule=text(RULE),
            failed_count=number(FAILED_COUNT, int),
            row_count=number(ROW_COUNT, int),
            failed_fraction=number(FAILED_FRACTION, float),
            tolerance=text(TOLERANCE),
            tolerance_margin=number(TOLERANCE_MARGIN, int),
            engine=text(ENGINE),
            sample=_records(metadata.get(FAILED_SAMPLE)),
            kept_table=text(KEPT_TABLE),
            kept_query=text(KEPT_QUERY),
            kept_rows=number(KEPT_ROWS, int),
            kept_error=text(KEPT_ERROR),
            failed_rows=text(FAILED_ROWS),
            quarantine=text(QUARANTINE),
            error=text(ERROR),
            skipped=text(SKIPPED),
            expected=text(EXPECTED),
            age_seconds=number(AGE_SECONDS, float),
        )

    @classmethod
    def of(cls, result: dg.AssetCheckResult | dg.AssetCheckEvaluation) -> Figures:
        """The figures of a check result as a step yields it, or of an evaluation as the
        instance stores it."""
        return cls.from_metadata(
            result.metadata,
            asset=None if result.asset_key is None else result.asset_key.to_user_string(),
            check=result.check_name,
            passed=result.passed,
            severity=result.severity.value,
        )

    @property
    def verdict(self) -> str:
        """`passed`, `warned` (failed at WARN) or `failed`; `unknown` without a result."""
        if self.passed is None:
            return "unknown"
        if self.passed:
            return "passed"
        return "warned" if self.severity == dg.AssetCheckSeverity.WARN.value else "failed"

    @property
    def kept(self) -> str | None:
        """Where the failing rows went: the kept rows' table or the quarantine."""
        return self.kept_table or self.quarantine


def _plain(value: Any) -> Any:
    """The plain value of a `MetadataValue`, a plain value as is."""
    return value.value if isinstance(value, dg.MetadataValue) else value


def _records(value: Any) -> tuple[Mapping[str, Any], ...]:
    """The rows of a table value: a `TableMetadataValue`, or its records as plain mappings."""
    if isinstance(value, dg.TableMetadataValue):
        return tuple(record.data for record in value.records)
    if isinstance(value, Mapping) and "records" in value:  # a table as JSON
        value = value["records"]
    if isinstance(value, list | tuple):
        return tuple(
            record.data if isinstance(record, dg.TableRecord) else record for record in value
        )
    return ()
