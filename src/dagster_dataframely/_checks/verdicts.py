"""A check's verdict from its rules' counts and tolerances: which rules crossed which level,
the failing fraction Dagster plots, and the margin left.

It reads only the counts an `Evaluation` holds, so a tolerance costs no pass over the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

from .._engine.catalogue import Rule
from .._engine.display import share
from .._engine.evaluate import Evaluation
from .._engine.severity import Severity
from . import figures as f
from .specs import Check


@dataclass(frozen=True)
class Verdict:
    """The verdict on one check.

    Attributes:
        check: The check judged.
        levels: Rule name -> the level its count crossed (`"error"`, `"warn"`), or None
            within its tolerance.
        fractions: Rule name -> its failing rows as a fraction of the rows checked.
        margins: Rule name -> failing rows to spare before its check fails (>= 0), or rows
            above the limit it crossed (< 0).
    """

    check: Check
    levels: Mapping[str, Severity | None]
    fractions: Mapping[str, float]
    margins: Mapping[str, int]
    row_count: int
    failed: Mapping[str, int]

    @classmethod
    def of(cls, check: Check, evaluation: Evaluation) -> Verdict:
        rows = evaluation.row_count
        failed = {rule.name: evaluation.failed[rule.name] for rule in check.rules}
        judged = {
            rule.name: rule.limits.judge(
                failed[rule.name], rows, table_fails=rule.name in evaluation.failed_table
            )
            for rule in check.rules
        }
        return cls(
            check=check,
            levels={name: level for name, (level, _) in judged.items()},
            fractions={name: count / rows if rows else 0.0 for name, count in failed.items()},
            margins={name: margin for name, (_, margin) in judged.items()},
            row_count=rows,
            failed=failed,
        )

    @property
    def failing(self) -> list[Rule]:
        """The rules that crossed a level of their tolerance."""
        return [rule for rule in self.check.rules if self.levels[rule.name] is not None]

    @property
    def level(self) -> Severity:
        """The worst level crossed; for a passing check, the worst it could cross."""
        crossed = {self.levels[rule.name] for rule in self.failing}
        if crossed:
            return "error" if "error" in crossed else "warn"
        return "error" if self.check.has_error_rule else "warn"

    @property
    def tolerated(self) -> str:
        """For a passing check with failing rows, the rows its tolerances let through, in
        words (the worst rule); empty when no row failed."""
        worst = max(self.check.rules, key=lambda rule: self.failed[rule.name])
        if not self.failed[worst.name]:
            return ""
        name = "" if len(self.check.rules) == 1 else f"{worst.name}, "
        return f"{name}{share(self.failed[worst.name], self.row_count)} ({worst.limits})"

    def metadata(self) -> dict[str, Any]:
        """`dy_tolerance` in words, `dy_failed_fraction` (the worst rule's, as a float Dagster
        plots) and `dy_tolerance_margin` (the smallest rule's)."""
        words = {str(rule.limits) for rule in self.check.rules}
        return {
            f.TOLERANCE: dg.MetadataValue.text(
                words.pop() if len(words) == 1 else f"per rule, see {f.RULES}"
            ),
            f.FAILED_FRACTION: dg.MetadataValue.float(max(self.fractions.values())),
            f.TOLERANCE_MARGIN: dg.MetadataValue.int(min(self.margins.values())),
        }
