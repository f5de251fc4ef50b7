"""The summary a check step logs at its end: the figures of its checks where the CLI shows
them (`dagster job execute`, `dagster asset materialize` and `dg launch` print the run's log,
not check metadata).

A table of the checks that failed or warned (asset, rule, failing rows of rows checked, the
fraction, the tolerance in words, the verdict, the engine, where the failing rows were kept),
cut at `LISTED` rows, then one line for the checks that passed. It reads only the results the
step yields (`Figures`), so it costs no pass over the data. Every check step logs it: the
sidecar's (one asset or many), the gated asset's and the collection's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import dagster as dg

from .._engine.display import percent, shorten
from .figures import Figures

E = TypeVar("E")

#: The most failing or warning checks the summary lists; the others are counted.
LISTED = 20
#: The widest cell: a long address or error is cut, so the table stays a table.
_CELL = 60
_HEADER = (
    "asset",
    "rule",
    "failing rows",
    "fraction",
    "tolerance",
    "verdict",
    "engine",
    "failing rows kept in",
)
_NONE = "-"


@dataclass
class Summary:
    """The check results of one step, gathered as the step yields them."""

    checked: list[Figures] = field(default_factory=list)

    def add(self, event: object) -> None:
        """Note `event` if it is a check result (a step also yields materializations)."""
        if isinstance(event, dg.AssetCheckResult):
            self.checked.append(Figures.of(event))

    def text(self, limit: int = LISTED) -> str:
        """The summary: a headline, the table of the checks that failed or warned (at most
        `limit` rows, then how many more), and one line for the checks that passed."""
        failed = [f for f in self.checked if f.verdict == "failed"]
        warned = [f for f in self.checked if f.verdict == "warned"]
        passed = [f for f in self.checked if f.verdict == "passed"]
        assets = len({f.asset for f in self.checked})
        lines = [
            f"dagster-dataframely: {_count(len(self.checked), 'check')} of "
            f"{_count(assets, 'asset')}: {len(failed)} failed, {len(warned)} warned, "
            f"{len(passed)} passed."
        ]
        rows = _rows(failed + warned)
        if rows:
            lines += _table(rows[:limit])
            if len(rows) > limit:
                lines.append(f"... and {len(rows) - limit} more")
        lines.append(_passed(passed))
        return "\n".join(lines)


def summarized(events: Iterable[E], log: Any) -> Iterator[E]:
    """`events`, passed on as they come; at the end, even when the step stops with an error
    after its results, the summary of their check results as one entry of `log`. Not where
    the step stopped reading them (an IO manager that failed to store an output): the
    step has ended, and the generator is closed whenever it is collected, perhaps after
    the run and its instance are gone."""
    summary = Summary()
    abandoned = False
    try:
        for event in events:
            summary.add(event)
            yield event
    except GeneratorExit:
        abandoned = True
        raise
    finally:
        if summary.checked and not abandoned:
            log.info(summary.text())


def _rows(flagged: list[Figures]) -> list[tuple[str, ...]]:
    """A row per check; one per table that could not be checked (its checks all carry the
    same error), where its first check stood."""
    unchecked = Counter(f.asset for f in flagged if f.error is not None)
    rows = []
    for figures in flagged:
        if figures.error is None:
            rows.append(_row(figures))
        elif figures.asset in unchecked:
            every = f"every check ({unchecked.pop(figures.asset)})"
            asset = figures.asset or _NONE
            rows.append((asset, every, "not checked", _NONE, _NONE, "failed", _NONE, _NONE))
    return rows


def _row(figures: Figures) -> tuple[str, ...]:
    failing = _NONE
    if figures.failed_count is not None and figures.row_count is not None:
        failing = f"{figures.failed_count:,} of {figures.row_count:,}"
    kept = figures.failed_rows or _NONE  # a gated asset's: what happened to them, in words
    if figures.kept_error is not None:
        kept = f"not kept: {figures.kept_error}"
    elif figures.kept is not None:  # an address: cut at its start, its end names the table
        kept = figures.kept if len(figures.kept) <= _CELL else "…" + figures.kept[1 - _CELL :]
    return (
        figures.asset or _NONE,
        figures.rule or figures.check or _NONE,
        failing,
        _NONE if figures.failed_fraction is None else percent(figures.failed_fraction),
        figures.tolerance or figures.expected or _NONE,
        figures.verdict,
        figures.engine or _NONE,
        kept,
    )


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    """`rows` under the header as lines of left-aligned columns, two spaces apart; a column
    no row fills (no rows kept, say) is left out."""
    shown = [i for i in range(len(_HEADER)) if any(row[i] != _NONE for row in rows)]
    cells = [[_HEADER[i] for i in shown]]
    cells += [[shorten(row[i], _CELL) for i in shown] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(shown))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in cells
    ]


def _passed(passed: list[Figures]) -> str:
    """`Passed: 11 checks (1 with failing rows within its tolerance, 2 skipped).`"""
    if not passed:
        return "Passed: none."
    tolerated = sum(1 for f in passed if f.failed_count and f.skipped is None)
    skipped = sum(1 for f in passed if f.skipped is not None)
    notes = [
        *([f"{tolerated} with failing rows within its tolerance"] if tolerated else []),
        *([f"{skipped} skipped"] if skipped else []),
    ]
    return f"Passed: {_count(len(passed), 'check')}" + (f" ({', '.join(notes)})." if notes else ".")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
