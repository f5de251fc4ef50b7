"""What a gated asset does with its table checks: `dd.expect_rows`, `dd.expect_fresh` and
its trend (`trends=`) judged on the rows its function returned, from the figures of the
rules' evaluation (its row count, the newest value of the freshness column, each rule's
failing fraction), before anything is written.

One failing at `ERROR` stops the write as a failing `"error"` rule does: the run fails with
`ValidationAbortError` and the table keeps its previous rows, since a table of the wrong size
or of stale data is what the check exists to keep from downstream. With a quarantine, the
quarantine is written first, as on every gated run. One failing at `WARN` writes the table
and flags it.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from .._checks import figures as f
from .._engine.naming import FRESHNESS_CHECK, ROW_COUNT_CHECK, TRENDS_CHECK

#: The failing rules' rows in a run a table check stopped (`dy_failed_rows`).
HALTED = "not written: a table check failed at ERROR, so the table was not written"


def stop_message(
    key: dg.AssetKey, stopped: Sequence[dg.AssetCheckResult], *, quarantine: str | None
) -> str:
    """The message of a run its table checks stopped: which checks, what they found, where
    the quarantine went, and the fix ("" when none stopped it)."""
    if not stopped:
        return ""
    lines = "\n".join(f"  - {result.check_name}: {_assessment(result)}" for result in stopped)
    held = (
        f"This run's failing rows were written to the quarantine at {quarantine}; "
        if quarantine is not None
        else ""
    )
    names = {result.check_name for result in stopped}
    bounds = [fix for name, fix in _BOUNDS.items() if name in names]
    return (
        f"Asset {key.to_user_string()} was not written: {len(stopped)} table check(s) failed "
        f"at ERROR on the rows its function returned:\n{lines}\n{held}The table keeps its "
        f"previous rows. Fix the source data, {'; '.join(bounds)}, or declare it "
        "severity='warn' to write the table and flag it."
    )


#: How to change each table check's bounds, for the message of a run it stopped.
_BOUNDS = {
    ROW_COUNT_CHECK: "change the row count's bounds (dd.expect_rows, or expect_rows= on dd.asset)",
    FRESHNESS_CHECK: "change the freshness bound (dd.expect_fresh, or expect_fresh= on dd.asset)",
    TRENDS_CHECK: "widen the trend's band (dd.Trends(k=...) on trends=)",
}


def _assessment(result: dg.AssetCheckResult) -> str:
    value = result.metadata.get(f.ASSESSMENT)
    return str(getattr(value, "value", value)).removeprefix("failed at severity ERROR: ")
