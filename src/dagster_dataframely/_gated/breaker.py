"""The circuit breaker: what a gated asset does with the tolerance of an `"error"` rule.

With a quarantine, the rows failing an `"error"` rule go to the quarantine while the rule is
within its error tolerance (`dd.tolerate`, `tolerate=`), and the table is written; above it
the run aborts with the table unwritten, because a jump like that means the source broke, and
writing most of a table is worse than writing none. Without a quarantine a tolerated row
would be written into a table downstream reads as `dy.DataFrame[Schema]`, so such a tolerance
is refused when the asset is defined. A tolerance on a `"warn"` rule only sets its check's
verdict. The breaker reads the evaluator's counts, no pass over the data; a rule without a
tolerance never trips it, so a schema without tolerances gates as it always did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg

from .._engine.catalogue import Rule
from .._engine.evaluate import Evaluation
from .._engine.severity import listed
from ..errors import InvalidToleranceError


def tolerated_errors(catalogue: Sequence[Rule]) -> list[Rule]:
    """The `"error"` rules of `catalogue` that carry a tolerance."""
    return [rule for rule in catalogue if rule.severity == "error" and rule.tolerance is not None]


def refuse_without_quarantine(catalogue: Sequence[Rule], schema: str, *, where: str) -> None:
    """Raise `InvalidToleranceError` when an `"error"` rule of `catalogue` (of `schema`) has a
    tolerance and the gated asset `where` has no quarantine to hold its rows."""
    tolerated = tolerated_errors(catalogue)
    if not tolerated:
        return
    rules = listed(sorted(f"{rule.name} ({rule.tolerance})" for rule in tolerated))
    raise InvalidToleranceError(
        f"{where} has no quarantine, but 'error' rules of schema {schema} have tolerances: "
        f"{rules}. Without a quarantine a tolerated row would be written into a table that "
        f"downstream reads as dy.DataFrame[{schema}], where every row passes every 'error' "
        "rule. Pass quarantine=True (the rows go to the quarantine while a rule is within its "
        "tolerance; above it the run aborts, the table unwritten), declare the rules 'warn' "
        "(dd.warn or warn=), or drop their tolerances."
    )


def tripped(catalogue: Sequence[Rule], evaluation: Evaluation) -> dict[str, int]:
    """The tolerated `"error"` rules whose failing rows are above their error tolerance:
    rule name -> failing rows."""
    return {
        rule.name: evaluation.failed[rule.name]
        for rule in tolerated_errors(catalogue)
        if evaluation.fails(rule.name)
        and rule.limits.judge(
            evaluation.failed[rule.name],
            evaluation.row_count,
            table_fails=rule.name in evaluation.failed_table,
        )[0]
        == "error"
    }


def trip_message(
    schema: str,
    key: dg.AssetKey,
    broken: Mapping[str, int],
    catalogue: Sequence[Rule],
    row_count: int,
    address: str,
) -> str:
    """The message of a run the breaker stopped: which rules, how far above, where the rows
    went, and the fix."""
    tolerance = {rule.name: rule.tolerance for rule in catalogue}
    lines = "\n".join(
        f"  - {name}: {count:,} of {row_count:,} row(s) failed; tolerance: {tolerance[name]}"
        for name, count in sorted(broken.items(), key=lambda item: -item[1])
    )
    return (
        f"Asset {key.to_user_string()} was not written: {len(broken)} 'error' rule(s) of "
        f"{schema} failed on more rows than their tolerance allows, so the circuit breaker "
        f"stopped the run (a jump like this usually means the source broke):\n{lines}\n"
        f"This run's failing rows were written to the quarantine at {address}; the table "
        "keeps its previous rows. Fix the source data, or raise error_above= of the rule's "
        "tolerance (dd.tolerate or tolerate=) if this many failing rows is expected."
    )
