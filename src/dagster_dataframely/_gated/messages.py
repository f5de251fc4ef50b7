"""The messages of a gated run that writes no table: which rules failed, how often, where
the rows went, and the fix."""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg
import dataframely as dy

_LISTED_RULES = 50


def joined(*messages: str) -> str:
    return "\n".join(message for message in messages if message)


def _counts(blocked: Mapping[str, int]) -> str:
    ordered = sorted(blocked.items(), key=lambda item: -item[1])
    lines = [
        f"  - {name}: {f'{count} row(s)' if count else 'the (empty) table fails it'}"
        for name, count in ordered[:_LISTED_RULES]
    ]
    if len(ordered) > _LISTED_RULES:
        lines.append(f"  … and {len(ordered) - _LISTED_RULES} more rules")
    return "\n".join(lines)


def abort_message(schema: type[dy.Schema], key: dg.AssetKey, blocked: Mapping[str, int]) -> str:
    return (
        f'Asset {key.to_user_string()} was not written: rows failed {len(blocked)} "error" '
        f"rule(s) of {schema.__name__}. Failed rows per rule (a row that fails several rules "
        f"counts for each):\n{_counts(blocked)}\nThe asset's checks show samples of the failing "
        'rows. Fix the rows upstream or drop them in the asset, declare a rule "warn" '
        "(dd.warn or warn=), or write the invalid rows to a quarantine (quarantine=True on "
        "dd.asset, or a quarantine_writer)."
    )


def no_valid_rows_message(
    schema: type[dy.Schema],
    key: dg.AssetKey,
    row_count: int,
    blocked: Mapping[str, int],
    address: str,
) -> str:
    return (
        f"Asset {key.to_user_string()} was not written: every one of its {row_count} row(s) "
        f'failed an "error" rule of {schema.__name__}. The rows were written to the '
        f"quarantine at {address}. Failed rows per rule:\n{_counts(blocked)}\nInspect the "
        "quarantine and fix the source data; a quarantine lets a run succeed when some rows "
        "fail, not when every row fails."
    )
