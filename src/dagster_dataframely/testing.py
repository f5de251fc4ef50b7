"""`dd.testing`: call a `dd.asset` in a unit test and read what it would have written.

`run_asset` invokes the asset directly (no Dagster run, no IO manager), and returns the rows
the IO manager would have written, the quarantined rows, the check results and the
materialization metadata, or the error that aborted it.

Example:
    ```python
    from dagster_dataframely.testing import run_asset

    def test_orders_quarantine_the_bad_rows(tmp_path):
        orders = make_orders_asset(quarantine_dir=str(tmp_path))  # dd.asset(..., quarantine=True)
        run = run_asset(orders, raw_orders=frame)
        assert run.frame.height == 6
        assert run.quarantine.height == 7
        assert run.failed == {"dy_rule__primary_key": 2, ...}
    ```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dagster as dg
import polars as pl

from .errors import ColumnSchemaError, ValidationAbortError

__all__ = ["AssetRun", "run_asset"]


@dataclass(frozen=True)
class AssetRun:
    """What one direct call of a `dd.asset` produced."""

    #: The rows the IO manager would have written; None when nothing was written.
    frame: pl.DataFrame | None
    #: The quarantined rows (with one column per rule), read back; None when none.
    quarantine: pl.DataFrame | None
    #: check name -> its result, for every check the call reported.
    checks: Mapping[str, dg.AssetCheckResult]
    #: The table's materialization metadata (values unwrapped); empty when nothing was written.
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: The error that aborted the write (rows failed "error" rules, or the columns mismatch).
    error: ValidationAbortError | ColumnSchemaError | None = None

    @property
    def failed(self) -> dict[str, int]:
        """check name -> failed rows, for the checks that failed."""
        return {
            name: _value(result.metadata.get("dy_failed_count", 0))
            for name, result in self.checks.items()
            if not result.passed
        }


def run_asset(
    asset: dg.AssetsDefinition, *, partition_key: str | None = None, **inputs: Any
) -> AssetRun:
    """Call `asset` (made by `dd.asset`) with upstream `inputs` by name and collect its output.

    A function that takes `context` gets `dg.build_asset_context(partition_key=...)`. A
    quarantine is written as parquet under the asset's `quarantine_dir` (pass
    `quarantine_dir=tmp_path` to `dd.asset` in tests) and read back into `quarantine`.
    `ValidationAbortError` and `ColumnSchemaError` are returned in `error`, with the check
    results reported before them; any other error is raised.
    """
    call: list[Any] = []
    if asset.op.compute_fn.has_context_arg():  # type: ignore[union-attr]
        call.append(dg.build_asset_context(partition_key=partition_key))
    events: list[Any] = []
    error: ValidationAbortError | ColumnSchemaError | None = None
    try:
        returned: Any = asset(*call, **inputs)  # a dd.asset body is a generator
        events.extend(returned)
    except (ValidationAbortError, ColumnSchemaError) as raised:
        error = raised
    checks = {e.check_name or "": e for e in events if isinstance(e, dg.AssetCheckResult)}
    written = [e for e in events if isinstance(e, dg.MaterializeResult)]
    metadata = {k: _value(v) for k, v in (written[0].metadata or {}).items()} if written else {}
    address = metadata.get("dy_quarantine") or getattr(error, "quarantine", None)
    return AssetRun(
        frame=_frame(written[0].value) if written else None,
        quarantine=pl.read_parquet(address) if address else None,
        checks=checks,
        metadata=metadata,
        error=error,
    )


def _frame(value: Any) -> pl.DataFrame:
    return value.collect() if isinstance(value, pl.LazyFrame) else value


def _value(value: Any) -> Any:
    return value.value if isinstance(value, dg.MetadataValue) else value
