"""The checks of many assets in a few steps: `dd.with_schemas` and the Component.

A step is a process under Dagster's default executor: starting one (importing Dagster,
loading the code location, opening a connection) costs more than checking a small table.
So plans are grouped into a few `@dg.multi_asset_check`s, each evaluated concurrently inside
its step (`step_runner`). Plans share a step only where a step can serve them alike:

- the same partitions definition (a step runs one partition, or one range);
- the same resources (what the step opens) and the same writes (a DuckDB file is opened
  read-only by checks that keep no rows, and one process opens a file one way at a time);
- the same gate: Dagster stops what runs downstream of a check by failing the check's step,
  so assets whose checks can block share a step only with assets feeding the same
  downstream assets; a failure then blocks exactly what its own asset's would.

Each group holds at most `checks_per_step` assets, split evenly; `can_subset=True` keeps
every check runnable alone. A group of one keeps the step name `dd.schema_checks` gives it.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import hashlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import dagster as dg

from .._checks.graph_internals import guard
from .._engine.settings import resolve
from .check_plan import CheckEvent, CheckPlan
from .schema_checks import step_name
from .step_runner import run_plans


@dataclass(frozen=True)
class StepSettings:
    """How many assets share a step, and how many of them a step checks at once."""

    checks_per_step: int
    check_concurrency: int

    @classmethod
    def resolve(
        cls, *, checks_per_step: int | None = None, check_concurrency: int | None = None
    ) -> "StepSettings":
        return cls(
            checks_per_step=resolve("checks_per_step", checks_per_step),
            check_concurrency=resolve("check_concurrency", check_concurrency),
        )


def grouped_checks(
    plans: Sequence[CheckPlan],
    settings: StepSettings,
    *,
    downstream: Mapping[dg.AssetKey, frozenset[dg.AssetKey]],
    by: str,
) -> list[dg.AssetChecksDefinition]:
    """One multi-asset check per group of `plans` (see the module); `downstream` maps an
    asset to the assets that depend on it, `by` names the call, for errors."""
    built = []
    for label, group in _groups(plans, downstream):
        chunks = _split(sorted(group, key=lambda plan: plan.key.to_user_string()), settings)
        for index, chunk in enumerate(chunks, start=1):
            name = (
                step_name(chunk[0].key)
                if len(chunk) == 1
                else _group_name(label, index, len(chunks), chunk)
            )
            built.append(
                guard(
                    _multi_check(chunk, name, settings.check_concurrency), by=f"{by}(asset={{key}})"
                )
            )
    return built


def _groups(
    plans: Sequence[CheckPlan], downstream: Mapping[dg.AssetKey, frozenset[dg.AssetKey]]
) -> Iterator[tuple[str, list[CheckPlan]]]:
    """`plans` by what their step shares (see the module), each with its step label."""
    groups: list[tuple[tuple[object, ...], str, list[CheckPlan]]] = []
    for plan in plans:
        resources = sorted(plan.source.required_resource_keys)
        gate = downstream.get(plan.key, frozenset()) if plan.blocking else frozenset()
        shared = (plan.partitions_def, resources, plan.keeping is not None, gate)
        for key, _, members in groups:
            if key == shared:
                members.append(plan)
                break
        else:
            groups.append((shared, "_".join(resources) or "files", [plan]))
    for _, label, members in groups:
        yield label, members


def _split(plans: Sequence[CheckPlan], settings: StepSettings) -> list[Sequence[CheckPlan]]:
    """`plans` in the fewest chunks of at most `checks_per_step`, of even sizes."""
    count = math.ceil(len(plans) / max(1, settings.checks_per_step))
    size = math.ceil(len(plans) / count)
    return [plans[start : start + size] for start in range(0, len(plans), size)]


def _group_name(label: str, index: int, count: int, chunk: Sequence[CheckPlan]) -> str:
    """`dy_checks__<resources>__<i>_of_<n>__<digest>`: what the step reads, which part of
    how many, and a digest of its assets, so two calls in one code location never clash."""
    spelled = "".join(c if c.isalnum() else "_" for c in label)
    keys = json.dumps([plan.key.path for plan in chunk])
    digest = hashlib.blake2b(keys.encode(), digest_size=4).hexdigest()
    return f"dy_checks__{spelled}__{index}_of_{count}__{digest}"


def _multi_check(
    plans: Sequence[CheckPlan], name: str, concurrency: int
) -> dg.AssetChecksDefinition:
    keys = [plan.key.to_user_string() for plan in plans]
    shown = ", ".join(keys[:10]) + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")

    @dg.multi_asset_check(
        name=name,
        specs=[spec for plan in plans for spec in plan.specs],
        can_subset=True,
        required_resource_keys={k for plan in plans for k in plan.source.required_resource_keys},
        description=f"The dagster-dataframely checks of {len(plans)} tables: {shown}.",
    )
    def _checks(context: dg.AssetCheckExecutionContext) -> Iterator[CheckEvent]:
        yield from run_plans(context, plans, concurrency=concurrency)

    return _checks


def downstream_of(specs: Sequence[dg.AssetSpec]) -> dict[dg.AssetKey, frozenset[dg.AssetKey]]:
    """The assets that depend on each asset, among `specs`."""
    found: dict[dg.AssetKey, set[dg.AssetKey]] = {}
    for spec in specs:
        for dep in spec.deps:
            found.setdefault(dep.asset_key, set()).add(spec.key)
    return {key: frozenset(keys) for key, keys in found.items()}
