"""The hook through which a sidecar keeps a run's failing rows (`keep_failing_rows=`).

`schema_results` calls a `Keeper` once, after the evaluation and before any result is
yielded, and adds what the returned `KeptRows` says to each failing check's metadata; a
collection's filter backends call its `removed` for each member they evaluated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import dagster as dg
import dataframely as dy
import polars as pl

from .._engine.catalogue import Rule
from .._engine.evaluate import Evaluation
from .specs import Check

if TYPE_CHECKING:
    from .._engine.failing_rows import Removed
    from .._engine.sql.backend import SQLTable


class KeptRows(Protocol):
    def metadata(self, rules: Sequence[Rule], evaluation: Evaluation) -> dict[str, Any]:
        """What a failing check of `rules` carries about the kept rows."""
        ...


class Keeper(Protocol):
    def __call__(
        self,
        schema: type[dy.Schema],
        lf: pl.LazyFrame,
        catalogue: Sequence[Rule],
        evaluation: Evaluation,
        pushdown: SQLTable | None,
    ) -> KeptRows:
        """Keep the failing rows of `evaluation` (`catalogue` is every rule of `schema`; `lf`
        and, when the database evaluated them, `pushdown` hold the rows)."""
        ...

    def removed(
        self,
        schema: type[dy.Schema],
        catalogue: Sequence[Rule],
        removed: Removed,
        pushdown: SQLTable | None,
    ) -> KeptRows:
        """Keep the valid rows of a collection member (its `schema` and rules `catalogue`)
        that its filters removed (`removed`); `pushdown`: the member's table in SQL."""
        ...


def keeping(
    checks: Sequence[Check],
    found: Iterable[dg.AssetCheckResult],
    kept: KeptRows,
    evaluation: Evaluation,
) -> Iterator[dg.AssetCheckResult]:
    """`found`, the results of `checks` in order, each failing one with where its rows are."""
    for check, result in zip(checks, found, strict=True):
        yield result if result.passed else annotated(result, kept.metadata(check.rules, evaluation))


def annotated(result: dg.AssetCheckResult, extra: Mapping[str, Any]) -> dg.AssetCheckResult:
    """`result` with `extra` added to its metadata."""
    return dg.AssetCheckResult(
        check_name=result.check_name,
        asset_key=result.asset_key,
        passed=result.passed,
        severity=result.severity,
        description=result.description,
        metadata={**result.metadata, **extra},
    )
