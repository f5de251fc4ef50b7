"""Trends: this run's row count and each rule's failing fraction against the same figures of
the previous evaluations, flagged outside a robust band, the median ± k * MAD (median absolute
deviation), which one odd run in the history cannot stretch as it would a mean ± k * sd.

The figures travel on the trend check's own result (`dy_trend_figures`), so the history of
one check holds every rule's: one read of the instance per step, whatever the number of rules.
A fraction of 0 is left out of them, so each run also records a digest of the rules it judged
(`dy_trend_rules`): a rule absent from a past run's figures failed no row there only if that
run judged the same rules. Rules judged against no such history are "not enough history",
never a history of zeros (a rule renamed, added or removed starts afresh).
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidTableCheckError
from .severity import Severity

#: The figure of the row count among a run's figures (rule names hold no `:`-prefixed name).
ROWS = ":rows"
#: Significant digits a fraction is recorded with: enough to tell 1 row in 10^9 apart.
_DIGITS = 9
#: Hex digits of the digest of a run's rule names: 64 bits, which two rule sets never share
#: in practice.
_DIGEST = 16


@dataclass(frozen=True)
class Trends:
    """Compare this run's row count and each rule's failing fraction with the last `window`
    evaluations of the asset's checks; a figure outside the median ± `k` * MAD of that history
    fails the check `dy_table__trends` at `severity`. With fewer than `min_history`
    evaluations the check passes and says how many more it needs.

    Example:
        ```python
        dd.schema_checks(Orders, asset=orders, trends=dd.Trends(window=30, k=4))
        ```
    """

    window: int = 20
    k: float = 3.0
    min_history: int = 5
    severity: Severity = "warn"

    def __post_init__(self) -> None:
        where = f"dd.Trends(window={self.window!r}, k={self.k!r}, min_history={self.min_history!r})"
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 2:
            raise InvalidTableCheckError(f"{where}: window is a whole number of runs, 2 or more.")
        if (
            isinstance(self.min_history, bool)
            or not isinstance(self.min_history, int)
            or not 1 <= self.min_history <= self.window
        ):
            raise InvalidTableCheckError(
                f"{where}: min_history is a whole number of runs from 1 to window."
            )
        if isinstance(self.k, bool) or not isinstance(self.k, (int, float)) or not self.k > 0:
            raise InvalidTableCheckError(
                f"{where}: k, the band's width in MADs, is a positive number (3 is usual)."
            )
        if self.severity not in ("error", "warn"):
            raise InvalidTableCheckError(
                f"{where} has severity={self.severity!r}: give 'warn' (the default) or 'error'."
            )

    @property
    def description(self) -> str:
        return (
            f"The row count and each rule's failing fraction lie within the median ± {self.k:g} "
            f"* MAD of the last {self.window} evaluations."
        )

    @classmethod
    def of(cls, value: Any, *, where: str) -> Trends | None:
        """`value` (a `Trends`, a mapping of its fields as YAML gives it, or None) as one."""
        if value is None or isinstance(value, Trends):
            return value
        if isinstance(value, Mapping) and set(value) <= {"window", "k", "min_history", "severity"}:
            return cls(**value)
        raise InvalidTableCheckError(
            f"trends= for {where} is {value!r}: pass dd.Trends(window=20, k=3.0) or a mapping "
            "with keys window, k, min_history, severity."
        )


@dataclass(frozen=True)
class Recorded:
    """A run's figures, as its trend check records them for the runs after it: its row count
    and each rule's failing fraction where it is not 0 (`figures`), and the digest of the
    names of the rules it judged (`rules`; None when it judged none: it had no rows, or an
    older version wrote it)."""

    figures: Mapping[str, float]
    rules: str | None = None


def recorded(row_count: int, failed: Mapping[str, int]) -> Recorded:
    """A run's `Recorded` figures from its row count and each rule's failing rows. With no
    rows there is no fraction: the rules are not judged."""
    found: dict[str, float] = {ROWS: float(row_count)}
    if not row_count:
        return Recorded(found)
    found |= {
        rule: float(f"{count / row_count:.{_DIGITS}g}") for rule, count in failed.items() if count
    }
    names = "\n".join(sorted(failed)).encode()
    return Recorded(found, hashlib.sha256(names).hexdigest()[:_DIGEST])


@dataclass(frozen=True)
class Deviation:
    """A figure outside its band: its value, the history's median and MAD, and the band."""

    figure: str
    value: float
    median: float
    mad: float
    low: float
    high: float


def deviations(
    trends: Trends,
    current: Mapping[str, float],
    history: Sequence[Mapping[str, float]],
    judged: Sequence[str],
) -> list[Deviation]:
    """The figures of `judged` (the row count, rule names) whose value in `current` lies
    outside the median ± k * MAD of their values in `history`."""
    found = []
    for figure in judged:
        past = [run.get(figure, 0.0) for run in history]
        median = statistics.median(past)
        mad = statistics.median(abs(value - median) for value in past)
        low, high = median - trends.k * mad, median + trends.k * mad
        value = current.get(figure, 0.0)
        if not low <= value <= high:
            found.append(Deviation(figure, value, median, mad, low, high))
    return found
