"""The report as Markdown, for a pull request's comment or a CI log: per asset, one table of
the checks that failed or warned (latest figures, and the failing fraction over the last
runs), one line for those that passed, and the partitions x checks grid of a partitioned
asset. The columns, samples and plots stay in the HTML."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .words import MARKS, failing, filters, last_runs, totals


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as GitHub-flavoured Markdown."""
    lines = [
        "# Data quality report",
        "",
        f"{len(report['assets'])} assets, checks {totals(report)}. "
        f"Instance `{report['instance']}`; {filters(report)}; "
        f"generated {report['generated_at']}.",
    ]
    for asset in report["assets"]:
        lines += ["", f"## {asset['asset']}: {MARKS[asset['verdict']]}", ""]
        rows = asset["row_counts"]
        if rows:
            counts = _trend([r["rows"] for r in rows])
            lines += [f"Rows checked {last_runs(len(rows))}: {counts}", ""]
        flagged = [check for check in asset["checks"] if check["verdict"] != "passed"]
        if flagged:
            header = ["Check", "Verdict", "Failing rows", "Tolerance", "Engine", "Partition"]
            lines += _table([*header, "Trend", "Kept in"], [_check(check) for check in flagged])
            lines += [""]
        passed = len(asset["checks"]) - len(flagged)
        if passed:
            lines += [f"{MARKS['passed']}: {passed} {'other ' if flagged else ''}checks."]
        if asset["partitions"] is not None:
            grid = asset["partitions"]
            lines += ["", "Partitions \u00d7 checks:", ""]
            lines += _table(
                ["Partition", *grid["checks"]],
                [
                    [partition, *(MARKS.get(row.get(c, ""), "·")[0] for c in grid["checks"])]
                    for partition, row in grid["verdicts"].items()
                ],
            )
    return "\n".join(lines) + "\n"


def _check(check: Mapping[str, Any]) -> list[str]:
    current = check["current"]
    fractions = [e["failed_fraction"] for e in check["history"] if e["failed_fraction"] is not None]
    return [
        f"`{check['check']}`",
        MARKS[check["verdict"]],
        failing(current),
        current["tolerance"] or "",
        current["engine"] or "",
        current["partition"] or "",
        _trend([f"{f:.2%}" for f in fractions]),
        f"`{current['kept']}`" if current["kept"] else "",
    ]


def _trend(values: Sequence[Any]) -> str:
    shown = [f"{v:,}" if isinstance(v, int) else str(v) for v in values]
    return " → ".join(shown)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(row) for row in rows)]
