"""The report as plain data: what every format shows, and the JSON itself.

One mapping, built once from the history, worst first (assets and each asset's checks by
verdict, failed first, then by name): the HTML and Markdown render it, the JSON is it
(its shape is documented in docs/report.md). Per asset: its checks, each with its verdict
and the evaluation behind it (`current`: the latest, or the worst of its partitions' latest),
its latest evaluation and its last evaluations (the plots); the rows checked per run, the
partitions x checks grid of a partitioned asset, and the schema's columns and rules where
known.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import dagster as dg

from .history import AssetHistory, Evaluation

#: The shape of the JSON, stated in it so a tool can tell a later one apart.
VERSION = 1
#: Verdicts from best to worst: an asset's is its checks' worst.
VERDICTS = ("passed", "unknown", "warned", "failed")


def report_model(
    history: Sequence[AssetHistory],
    *,
    instance: str,
    filters: Mapping[str, str | None],
    last: int,
) -> dict[str, Any]:
    """The report of `history`: each check's plot keeps its `last` evaluations."""
    assets = [_asset(asset, last) for asset in history]
    assets.sort(key=lambda asset: _worst_first(asset["verdict"], asset["asset"]))
    return {
        "version": VERSION,
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "instance": instance,
        "filters": dict(filters),
        "totals": {verdict: _count(assets, verdict) for verdict in VERDICTS},
        "assets": assets,
    }


def _worst_first(verdict: str, name: str) -> tuple[int, str]:
    """The order of assets and checks: failed first, then by name."""
    return -VERDICTS.index(verdict), name


def _count(assets: Sequence[Mapping[str, Any]], verdict: str) -> int:
    return sum(check["verdict"] == verdict for a in assets for check in a["checks"])


def _asset(asset: AssetHistory, last: int) -> dict[str, Any]:
    by_check: dict[str, list[Evaluation]] = {}
    for evaluation in asset.evaluations:
        by_check.setdefault(evaluation.figures.check or "", []).append(evaluation)
    checks: list[dict[str, Any]] = []
    for name, evaluations in by_check.items():
        current = _current(evaluations)
        checks.append(
            {
                "check": name,
                "description": evaluations[-1].description,
                "verdict": current.figures.verdict,
                "current": _evaluation(current),
                "latest": _evaluation(evaluations[-1]),
                "history": [_point(e) for e in evaluations[-last:]],
            }
        )
    checks.sort(key=lambda check: _worst_first(check["verdict"], check["check"]))
    partitioned = any(e.partition is not None for e in asset.evaluations)
    return {
        "asset": asset.key.to_user_string(),
        "verdict": _worst(check["verdict"] for check in checks),
        "partitioned": partitioned,
        "row_counts": _row_counts(asset.evaluations)[-last:],
        "partitions": _grid(asset.evaluations) if partitioned else None,
        "columns": None if asset.columns is None else _columns(asset.columns),
        "table_rules": [] if asset.columns is None else _table_rules(asset.columns),
        "checks": checks,
    }


def _current(evaluations: Sequence[Evaluation]) -> Evaluation:
    """The evaluation behind a check's verdict: its latest, or for a partitioned check the
    worst of its partitions' latest (the newest of equals), so the figures shown beside the
    verdict are the ones that made it."""
    latest = {e.partition: e for e in evaluations}.values()
    return max(latest, key=lambda e: (VERDICTS.index(e.figures.verdict), e.timestamp))


def _worst(verdicts: Iterable[str]) -> str:
    return max(verdicts, key=VERDICTS.index, default="unknown")


def _evaluation(evaluation: Evaluation) -> dict[str, Any]:
    """An evaluation's figures (every field of `Figures` but the asset and check, which the
    report nests it under), with its run, time, partition and verdict."""
    figures = dataclasses.asdict(evaluation.figures)
    del figures["asset"], figures["check"]
    figures["sample"] = [dict(row) for row in evaluation.figures.sample]
    return {
        "run_id": evaluation.run_id,
        "timestamp": _iso(evaluation.timestamp),
        "partition": evaluation.partition,
        "verdict": evaluation.figures.verdict,
        "kept": evaluation.figures.kept,
        **figures,
    }


def _point(evaluation: Evaluation) -> dict[str, Any]:
    """An evaluation as a point of the check's history: when, and the figures plotted."""
    figures = evaluation.figures
    return {
        "run_id": evaluation.run_id,
        "timestamp": _iso(evaluation.timestamp),
        "partition": evaluation.partition,
        "verdict": figures.verdict,
        "failed_count": figures.failed_count,
        "row_count": figures.row_count,
        "failed_fraction": figures.failed_fraction,
    }


def _row_counts(evaluations: Sequence[Evaluation]) -> list[dict[str, Any]]:
    """The rows checked per run and partition, oldest first (the most any check counted)."""
    rows: dict[tuple[str, str | None], dict[str, Any]] = {}
    for evaluation in evaluations:
        count = evaluation.figures.row_count
        if count is None:
            continue
        point = rows.setdefault(
            (evaluation.run_id, evaluation.partition),
            {
                "run_id": evaluation.run_id,
                "timestamp": _iso(evaluation.timestamp),
                "partition": evaluation.partition,
                "rows": count,
            },
        )
        point["rows"] = max(point["rows"], count)
    return list(rows.values())


def _grid(evaluations: Sequence[Evaluation]) -> dict[str, Any]:
    """Each partition's latest verdict per check: partitions as rows, checks as columns."""
    latest: dict[str, dict[str, str]] = {}
    for evaluation in evaluations:
        if evaluation.partition is not None:
            row = latest.setdefault(evaluation.partition, {})
            row[evaluation.figures.check or ""] = evaluation.figures.verdict
    checks = sorted({check for row in latest.values() for check in row})
    return {"checks": checks, "verdicts": dict(sorted(latest.items()))}


def _columns(schema: dg.TableSchema) -> list[dict[str, Any]]:
    return [
        {
            "name": column.name,
            "type": column.type,
            "nullable": column.constraints.nullable,
            "unique": column.constraints.unique,
            "rules": list(column.constraints.other),
            "description": column.description,
        }
        for column in schema.columns
    ]


def _table_rules(schema: dg.TableSchema) -> list[str]:
    return [] if schema.constraints is None else list(schema.constraints.other)


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds")
