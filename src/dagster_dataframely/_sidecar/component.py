"""`dd.SchemaChecksComponent`: sidecar checks declared in a `defs.yaml`.

```yaml
type: dagster_dataframely.SchemaChecksComponent
attributes:
  check_granularity: column        # shared settings, overridable per entry
  checks:
    - asset: orders
      schema: my_pkg.schemas:Orders
      warn: [note]
    - asset: shop/orders             # a dbt model: read from DuckDB, not an IO manager
      schema: my_pkg.schemas:ShopOrders
      source: {kind: duckdb_table, resource_key: duckdb}
  collections:                     # optional: cross-table checks of a dy.Collection
    - collection: my_pkg.schemas:Shop
      members: {orders: orders, lines: order_lines}
  checks_job: quality              # optional: `dg launch --job quality` runs the checks alone
```

Each entry of `checks` becomes one `dd.schema_checks`, each of `collections` one
`dd.collection_checks`. A bad entry (a schema reference that does not
import, an unknown rule in `warn`) fails when the component loads, with Dagster's pointer to
the file and line of the entry. So does an asset the project's defs folder does not declare
(see `_component_tree`), and two entries, here or in another `defs.yaml`, defining the same
checks.
"""

# No `from __future__ import annotations`: Dagster derives the YAML model from the annotations.
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import dagster as dg
import dataframely as dy
from pydantic import BaseModel

from .._checks.asset_keys import parse_asset_key
from .._engine.catalogue import Rule, rules
from .._engine.schemas import as_dataframely
from ..errors import DagsterDataframelyError, DuplicateChecksError, UnsupportedSchemaError
from .check_plan import CheckPlan
from .check_steps import StepSettings, downstream_of, grouped_checks
from .checks_job import checks_job
from .collection_checks import collection_checks
from .collection_partitions import member_partitions
from .component_entries import (
    CollectionCheck,
    Granularity,
    SchemaCheck,
    SchemaRules,
    entries_listed,
    entry_keys,
    known_keys,
    quiet_model,
    schema_at,
)
from .component_tree import DeclaredAssets, PartitionsField, components_of
from .failing_rows import KeepFailingRows
from .failures_asset import failures_spec, member_shape
from .schema_checks import one_step

#: An entry's checks: a plan, which shares a step, or a step of its own (a collection, a name).
Built = CheckPlan | dg.AssetChecksDefinition
#: The executor of `checks_job_executor:` by its name; None, the code location's.
_EXECUTORS = {
    None: None,
    "in_process": dg.in_process_executor,
    "multiprocess": dg.multiprocess_executor,
}

__all__ = ["SchemaChecksComponent", "schema_at"]


class SchemaChecksScaffolder(dg.Scaffolder):
    """`dg scaffold defs dagster_dataframely.SchemaChecksComponent <path>`."""

    def scaffold(self, request: dg.ScaffoldRequest) -> None:
        if request.scaffold_format != "yaml":
            raise dg.DagsterInvariantViolationError(
                "SchemaChecksComponent is configured in YAML; scaffold it with --format yaml."
            )
        request.target_path.mkdir(parents=True, exist_ok=True)
        (request.target_path / "defs.yaml").write_text(_TEMPLATE.format(type=request.type_name))


_TEMPLATE = textwrap.dedent(
    """\
    type: {type}

    attributes:
      # One entry per asset: its key ('prefix/name') and its schema ('package.module:Class').
      # Optional per entry, or here for every entry: blocking, check_granularity (rule,
      # column or schema), schema_rules (collapsed or per_rule), max_failure_samples.
      # Per entry, source: where a table no IO manager stores is read from, e.g.
      # {{kind: duckdb_table, resource_key: duckdb}} for a dbt model (see dd.sources).
      # Each asset must be declared in this defs folder (a module or a component); for assets
      # merged in from Python outside it, set assets_outside_defs: true. The checked assets'
      # Columns tab comes from a folder above (see dagster_dataframely.template_vars).
      checks: []
      #  - asset: orders
      #    schema: my_project.schemas:Orders
      #    warn: [note]
    """
)


@dg.scaffold_with(SchemaChecksScaffolder)
@dataclass
class SchemaChecksComponent(dg.Component, dg.Resolvable):
    """Dataframely schema checks on assets that already exist, read back through their IO
    managers: one asset check per rule.

    `checks` lists `{asset, schema: "package.module:Class", warn, tolerate, expect_rows,
    expect_fresh, trends, blocking, check_granularity, schema_rules, max_failure_samples, name,
    source, partitions_def, read_dtypes, keep_failing_rows, max_failing_rows,
    observe_fractions}`; the settings
    beside `checks` apply to every entry that does not set its own. `checks_job: <name>` adds
    a job that runs the file's checks alone, for `dg launch --job <name>`.
    """

    checks: Sequence[SchemaCheck]
    collections: Sequence[CollectionCheck] = ()
    blocking: bool | None = None
    check_granularity: Granularity | None = None
    schema_rules: SchemaRules | None = None
    max_failure_samples: int | None = None
    partitions_def: PartitionsField = None
    assets_outside_defs: bool = False
    read_dtypes: Literal["strict", "cast"] | None = None
    #: Keep each run's failing rows where the data lives (`dd.schema_checks`): true, or the
    #: schema or directory to keep them in; at most `max_failing_rows` per run.
    keep_failing_rows: bool | str | None = None
    max_failing_rows: int | None = None
    #: Observe every check's failing fraction per run, for the asset's Plots tab.
    observe_fractions: bool | None = None
    #: The name of a job that runs this file's checks alone (`dd.checks_job`), for
    #: `dg launch --job <name>`, with `--partition` when the checks are partitioned.
    checks_job: str | None = None
    #: How the checks job's steps run: `in_process` (one process, for many small tables) or
    #: `multiprocess` (a process per step); by default the code location's executor.
    checks_job_executor: Literal["in_process", "multiprocess"] | None = None
    #: At most this many assets' checks share one step (default 50).
    checks_per_step: int | None = None
    #: A step checks this many of its assets at once (default 4).
    check_concurrency: int | None = None

    @classmethod
    def model(cls) -> type[BaseModel]:
        derived = quiet_model(super().model)
        attributes = known_keys(derived, None, elsewhere=entry_keys(derived))
        return entries_listed(attributes, "checks", "collections")

    @classmethod
    def get_spec(cls) -> dg.ComponentTypeSpec:
        return dg.ComponentTypeSpec(
            description="Dataframely schema checks on existing assets, one check per rule.",
            tags=["dataframely", "data-quality"],
            produces=["asset_check"],
        )

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        declared = (
            None
            if self.assets_outside_defs
            else DeclaredAssets.seen_from(context, SchemaChecksComponent)
        )
        built = self._built(context.path / "defs.yaml", declared)
        others = [
            checks
            for file, other in components_of(context, SchemaChecksComponent)
            for checks in _built_quietly(other, file)
        ]
        _refuse_duplicates(built, others=others)
        plans = [item for _, item in built if isinstance(item, CheckPlan)]
        steps = StepSettings.resolve(
            checks_per_step=self.checks_per_step, check_concurrency=self.check_concurrency
        )
        every = [
            *(item for _, item in built if not isinstance(item, CheckPlan)),
            *grouped_checks(
                plans,
                steps,
                downstream=downstream_of(list(declared.specs.values())) if declared else {},
                by="SchemaChecksComponent",
            ),
        ]
        return dg.Definitions(
            assets=self._failures(declared),
            asset_checks=every,
            jobs=self._jobs(context.path / "defs.yaml", every),
        )

    def _failures(self, declared: "DeclaredAssets | None") -> list[dg.AssetSpec]:
        """The failing rows each entry keeps, declared downstream of its (declared) asset: a
        collection member's with a column per filter, one asset however many entries."""
        if declared is None:
            return []
        shapes: dict[dg.AssetKey, tuple[type[dy.Schema], list[Rule], Any]] = {}
        for entry in self.checks:
            spec = declared.specs.get(entry.asset)
            keep = _first(entry.keep_failing_rows, self.keep_failing_rows)
            if spec is None or KeepFailingRows.resolve(keep, None) is None:
                continue
            schema = as_dataframely(entry.schema)
            partitions = entry.partitions_def or self.partitions_def or spec.partitions_def
            shapes[spec.key] = (schema, rules(schema), partitions)
        for collection in self.collections:
            keep = _first(collection.keep_failing_rows, self.keep_failing_rows)
            if KeepFailingRows.resolve(keep, None) is None:
                continue
            for member, asset in collection.members.items():
                key = parse_asset_key(asset, argument=f"members.{member}")
                spec = declared.specs.get(key)
                if spec is None:  # refused where the collection's checks are built
                    continue
                schema, filters = member_shape(collection.collection, member, key)
                partitions = collection.partitions_def or self.partitions_def or spec.partitions_def
                found = shapes.get(key, (schema, rules(schema), partitions))
                shapes[key] = (found[0], [*found[1], *filters], found[2])
        return [failures_spec(key, *shape) for key, shape in shapes.items()]

    def _jobs(self, file: Path, checks: list[dg.AssetChecksDefinition]) -> list[Any]:
        """The `checks_job` of this file, if it names one."""
        if self.checks_job is None:
            return []
        try:
            executor = _EXECUTORS[self.checks_job_executor]
            return [checks_job(*checks, name=self.checks_job, executor_def=executor)]
        except DagsterDataframelyError as error:
            raise _relabelled(error, f"{file}: checks_job: {error}") from None

    def _built(self, file: Path, declared: "DeclaredAssets | None") -> list[tuple[str, "Built"]]:
        """The checks of every entry (a plan, to share a step, or a step of its own), each
        with the entry it comes from."""
        return [
            *(
                (_origin(file, index, entry), self._build(index, entry, file, declared))
                for index, entry in enumerate(self.checks)
            ),
            *(
                (f"{file}: collections[{index}] ({entry.collection.__name__})", built)
                for index, entry in enumerate(self.collections)
                for built in [self._build_collection(index, entry, file, declared)]
            ),
        ]

    def _settings(self, entry: "SchemaCheck | CollectionCheck") -> dict[str, Any]:
        """An entry's `warn` and its settings, those it leaves unset taken from the component."""
        return {
            "warn": entry.warn,
            "blocking": _first(entry.blocking, self.blocking),
            "check_granularity": entry.check_granularity or self.check_granularity,
            "schema_rules": entry.schema_rules or self.schema_rules,
            "max_failure_samples": _first(entry.max_failure_samples, self.max_failure_samples),
            "read_dtypes": entry.read_dtypes or self.read_dtypes,
            "keep_failing_rows": _first(entry.keep_failing_rows, self.keep_failing_rows),
            "max_failing_rows": _first(entry.max_failing_rows, self.max_failing_rows),
            "observe_fractions": _first(entry.observe_fractions, self.observe_fractions),
        }

    def _build_collection(
        self, index: int, entry: CollectionCheck, file: Path, declared: "DeclaredAssets | None"
    ) -> dg.AssetChecksDefinition:
        """The checks of collection entry `index`. With `declared`, every member must be a
        declared asset, and the members' partitions are the default."""
        try:
            partitions_def = entry.partitions_def or self.partitions_def
            if declared:
                keys = [
                    _member_key(member, asset, declared) for member, asset in entry.members.items()
                ]
                partitions_def = partitions_def or member_partitions(
                    entry.collection, keys, declared.specs
                )
            return collection_checks(
                entry.collection,
                members=entry.members,
                sources={
                    m: source.build(f"sources.{m}") for m, source in (entry.sources or {}).items()
                },
                name=entry.name,
                skip_schema_checks=tuple(entry.skip_schema_checks),
                partitions_def=partitions_def,
                trends=entry.trends,
                **self._settings(entry),
            )
        except DagsterDataframelyError as error:
            where = f"{file}: collections[{index}] "
            raise _relabelled(error, f"{where}({entry.collection.__name__}): {error}") from None

    def _build(
        self, index: int, entry: SchemaCheck, file: Path, declared: "DeclaredAssets | None"
    ) -> "Built":
        """The checks of entry `index`: its plan, or its own step when it names one. With
        `declared` (what the project's defs folder declares) an undeclared key is refused,
        and the asset's partitions are the default."""
        spec = declared.specs.get(entry.asset) if declared else None
        try:
            source = entry.source.build() if entry.source else None
            if source is not None and spec is not None:  # its dagster/table_name, read now
                source = source.for_asset(spec.key, spec.metadata)
            checks = CheckPlan.of(
                entry.schema,
                asset=entry.asset,
                tolerate=entry.tolerate,
                expect_rows=entry.expect_rows,
                expect_fresh=entry.expect_fresh,
                trends=entry.trends,
                **self._settings(entry),
                partitions_def=entry.partitions_def
                or self.partitions_def
                or (spec.partitions_def if spec else None),
                source=source,
            )
            if declared and not spec:
                declared.refuse(entry.asset)
        except DagsterDataframelyError as error:
            raise _located(error, file, index, entry) from None
        return checks if entry.name is None else one_step(checks, entry.name)


def _member_key(member: str, asset: str, declared: "DeclaredAssets") -> dg.AssetKey:
    """The key of `member`'s asset, which the project must declare."""
    key = parse_asset_key(asset, argument=f"members.{member}")
    if key not in declared.specs:
        try:
            declared.refuse(key)
        except DagsterDataframelyError as error:
            raise _relabelled(error, f"members.{member}: {error}") from None
    return key


def _built_quietly(component: SchemaChecksComponent, file: Path) -> list[tuple[str, "Built"]]:
    """The checks of another component, for the duplicate guard; a component that fails to
    build reports that itself, when it loads."""
    try:
        return component._built(file, declared=None)
    except DagsterDataframelyError:
        return []


def _origin(file: Path, index: int, entry: SchemaCheck) -> str:
    """Where an entry is: `<file>: checks[<index>] (asset <key>, schema <class>)`."""
    key, schema = entry.asset.to_user_string(), entry.schema.__name__
    return f"{file}: checks[{index}] (asset {key}, schema {schema})"


def _refuse_duplicates(
    built: Sequence[tuple[str, "Built"]],
    *,
    others: Sequence[tuple[str, "Built"]],
) -> None:
    """Refuse two entries defining one asset check: Dagster would report a bare duplicate
    key, without saying which entries clash."""
    seen: dict[dg.AssetCheckKey, str] = {}
    for origin, checks in [*others, *built]:
        keys = (
            [spec.key for spec in checks.specs]
            if isinstance(checks, CheckPlan)
            else list(checks.check_keys)
        )
        clashing = [key for key in keys if key in seen]
        if clashing:
            first = seen[clashing[0]]
            names = ", ".join(sorted(key.name for key in clashing)[:5])
            raise DuplicateChecksError(
                f"{origin} defines asset checks that {first} defines too, on asset "
                f"{clashing[0].asset_key.to_user_string()}: {names}"
                f"{', …' if len(clashing) > 5 else ''}. An asset has one check of each name, "
                "so one of the two would never report. Check the asset once: remove one of "
                "the entries, or combine the two schemas into one (a schema can extend another)."
            )
        seen.update(dict.fromkeys(keys, origin))


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


def _located(error: Exception, file: Path, index: int, entry: SchemaCheck) -> Exception:
    """`error`, of the same class, with the file and the entry it came from."""
    return _relabelled(error, f"{_origin(file, index, entry)}: {error}")


def _relabelled(error: Exception, message: str) -> Exception:
    """`error`, of the same class, with `message`."""
    try:
        return type(error)(message)
    except TypeError:  # an error type whose constructor takes more than a message
        return UnsupportedSchemaError(message)
