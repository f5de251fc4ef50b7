"""The phrases the HTML and Markdown reports share: an evaluation's failing rows, kept rows and
the filters, in the words the step's summary and the metadata use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._engine.display import share

#: What a verdict is shown as, where a glance must tell them apart.
MARKS = {"passed": "✔ passed", "warned": "▲ warned", "failed": "✖ failed", "unknown": "? unknown"}


def failing(evaluation: Mapping[str, Any]) -> str:
    """`12 of 1,000 rows, 1.2%` failed; why there is no figure, for an error or a skip."""
    if evaluation["error"]:
        return "not evaluated: " + evaluation["error"].splitlines()[0]
    if evaluation["skipped"]:
        return "skipped: " + evaluation["skipped"]
    if evaluation["failed_count"] is None or evaluation["row_count"] is None:
        return ""
    return share(evaluation["failed_count"], evaluation["row_count"])


def filters(report: Mapping[str, Any]) -> str:
    """The filters the report was made with, in words."""
    given = [f"{name} {value}" for name, value in report["filters"].items() if value]
    return "; ".join(given) if given else "every asset, partition and run"


def totals(report: Mapping[str, Any]) -> str:
    """`3 failed, 1 warned, 40 passed` (the checks' latest verdicts)."""
    counts = report["totals"]
    shown = [f"{counts[v]} {v}" for v in ("failed", "warned", "passed", "unknown") if counts[v]]
    return ", ".join(shown)


def last_runs(count: int) -> str:
    """`in the last run`, `over the last 5 runs`."""
    return "in the last run" if count == 1 else f"over the last {count} runs"
