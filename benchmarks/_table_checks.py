"""What the table-check benchmarks add to a plain check run, in one place: a tolerance on
every rule, a row-count check and a freshness check (issue 25), and the environment that
runs a variant on another checkout's sources (`main:` variants, `--baseline-src`)."""

from __future__ import annotations

import os
from typing import Any

#: A variant prefix: run it on the baseline's sources (`--baseline-src`).
BASELINE = "main:"


def checked_settings(schema: type, fresh: str) -> dict[str, Any]:
    """`tolerate=` with a tolerance on every rule, `expect_rows=` and `expect_fresh=` on the
    timestamp column `fresh`, as `dd.wiring.check_results` takes them."""
    import dagster_dataframely as dd

    tolerance = dd.Tolerance(warn_above="1%")
    return {
        "tolerate": {rule.name: tolerance for rule in dd.wiring.rules(schema)},
        "expect_rows": dd.ExpectRows(min=1, max=10**12),
        "expect_fresh": dd.ExpectFresh(fresh, within="100000d"),
    }


def variant_env(variant: str, baseline_src: str | None) -> tuple[str, dict[str, str] | None]:
    """The method a variant names, and the environment it runs in: the baseline's sources
    first on the path for a `main:` variant, this one's otherwise."""
    if not variant.startswith(BASELINE):
        return variant, None
    if baseline_src is None:
        raise SystemExit(f"{variant} needs --baseline-src (a checkout's src folder)")
    return variant.removeprefix(BASELINE), {**os.environ, "PYTHONPATH": baseline_src}
