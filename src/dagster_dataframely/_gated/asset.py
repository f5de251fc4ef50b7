"""`dd.asset`: a `@dg.asset` whose rows are validated before its IO manager writes them.

It is `@dg.asset` with the schema's Columns tab metadata and check specs, and a body that runs
the decorated function, then `validation_results`. Settings are resolved once, here, at
definition time. With a quarantine it is a subsettable multi-asset of the table and its
quarantine (`quarantined_asset`): in a run the body writes the quarantine through the asset's
IO manager before the table, selected or not (`declared_quarantine`); under direct invocation,
which has no IO manager, it is written to parquet (`file_writer`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

from .._checks import step_internals
from .._checks.asset_keys import parse_asset_key
from .._checks.metadata import schema_metadata
from .._checks.specs import check_specs
from .._checks.summary import summarized
from .._checks.table_results import partition_end
from .._checks.trend_history import required_history
from .._engine.catalogue import rules
from .._engine.display import type_name
from .._engine.schema_version import code_version
from .._engine.schemas import SchemaLike, as_dataframely
from .._engine.settings import resolve
from .._engine.severity import warn_names
from .._engine.table_checks import ExpectFresh, ExpectRows, TableChecks
from .._engine.trends import Trends
from ..errors import InvalidSettingError, UnsupportedFrameError
from ..io import takes_lazy_frames
from .breaker import refuse_without_quarantine
from .gate import gated_results, skipped_results
from .quarantine import QuarantineStep, declared_quarantine, file_writer, writing
from .quarantine import quarantine_key as default_quarantine_key
from .quarantined_asset import (
    TABLE_OUTPUT,
    BodyYield,
    pair_of_quarantine,
    quarantined_asset,
    refuse_checks_alone,
)

_UNSET: Any = dg.MaterializeResult().value  # what `value=` is when a MaterializeResult has none


def asset(
    schema: SchemaLike,
    *,
    quarantine: bool | None = None,
    filter: bool | None = None,
    warn: str | Sequence[str] = (),
    tolerate: Mapping[str, Any] | None = None,
    check_granularity: str | None = None,
    schema_rules: str | None = None,
    statistics: bool | None = None,
    row_sample: int | None = None,
    max_failure_samples: int | None = None,
    quarantine_dir: str | None = None,
    quarantine_key: dg.AssetKey | str | Sequence[str] | None = None,
    quarantine_io_manager_key: str | None = None,
    expect_rows: ExpectRows | Mapping[str, Any] | None = None,
    expect_fresh: ExpectFresh | Mapping[str, Any] | None = None,
    trends: Trends | Mapping[str, Any] | None = None,
    **asset_kwargs: Any,
) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
    """Declare an asset whose rows must pass `schema` before its IO manager writes them.

    The decorated function takes `context` and upstream inputs like any `@dg.asset`, and
    returns a `pl.DataFrame`, a `pl.LazyFrame`, a `dg.MaterializeResult(value=<frame>)` (its
    metadata, tags and data version go on the table's materialization) or `None` (no source
    data: nothing is written and the run succeeds). Rows failing an `"error"` rule fail the
    run; with `quarantine=True` (spelled `filter=True` too) they are written to the
    quarantine `<name>_quarantine` and the other rows to the table. Every other keyword goes
    to `@dg.asset`; `code_version` is combined with a hash of the schema (`1+schema.<hash>`),
    so a changed schema marks the asset changed. With a quarantine the result is a
    multi-asset of two keys, the table and its quarantine (a declared asset, written on every
    run of the table, before it, even when the run selected the table alone). Settings left `None`
    come from `DAGSTER_DATAFRAMELY_<NAME>`, else their defaults (`quarantine` False,
    `statistics` True, `row_sample` 5, ...). `quarantine_key` names the quarantine asset
    (default: the table's key with `_quarantine` appended to its last part), and
    `quarantine_io_manager_key` the IO manager that stores it (default: the table's).
    Tolerances (`dd.tolerate` on the schema, `tolerate=` here) set the verdicts of the checks;
    on an `"error"` rule one needs a quarantine, and is its circuit breaker: the rule's rows
    are quarantined up to its error tolerance, above it the run fails and writes no table.
    The table checks (`dd.expect_rows`, `dd.expect_fresh` on the schema, replaced by
    `expect_rows=`, `expect_fresh=` here) judge the rows the function returned; one failing
    at `ERROR` fails the run and writes no table, one failing at `WARN` flags it. So does
    the trend check `dy_table__trends` with `trends=dd.Trends(window=20, k=3.0)`: the row
    count and each rule's failing fraction of the rows returned, against the last
    evaluations in the run's Dagster instance (of the same partition key, or of any
    partition for time windows).

    Example:
        ```python
        @dd.asset(OrdersSchema, quarantine=True)
        def orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
            return raw_orders
        ```
    """
    if (
        quarantine is not None
        and filter is not None
        and resolve("quarantine", quarantine) != resolve("quarantine", filter)
    ):
        raise InvalidSettingError(
            f"dd.asset got quarantine={quarantine!r} and filter={filter!r}: `filter` is another "
            "spelling of `quarantine`, so the two cannot differ. Pass only one of them."
        )
    if "output_required" in asset_kwargs:
        raise TypeError(
            "dd.asset sets output_required=False itself (a run that writes no table yields no "
            "materialization), so it takes no output_required argument. Remove it."
        )
    resolved_quarantine = resolve("quarantine", quarantine if quarantine is not None else filter)
    for name, value in (
        ("quarantine_key", quarantine_key),
        ("quarantine_io_manager_key", quarantine_io_manager_key),
    ):
        if value is not None and not resolved_quarantine:
            raise InvalidSettingError(
                f"dd.asset got {name}={value!r} without a quarantine: it says where the "
                f"quarantine goes. Pass quarantine=True as well, or drop {name}."
            )
    dy_schema = as_dataframely(schema)
    if not resolved_quarantine:  # the catalogue checks the names in `tolerate` too
        refuse_without_quarantine(
            rules(dy_schema, warn=warn, tolerate=tolerate), dy_schema.__name__, where="dd.asset"
        )
    gate = _Gate(
        schema=dy_schema,
        quarantine=resolved_quarantine,
        warn=warn_names(warn),
        tolerate=None if tolerate is None else dict(tolerate),
        check_granularity=resolve("check_granularity", check_granularity),
        schema_rules=resolve("schema_rules", schema_rules),
        statistics=resolve("statistics", statistics),
        row_sample=resolve("row_sample", row_sample),
        max_failure_samples=resolve("max_failure_samples", max_failure_samples),
        quarantine_dir=resolve("quarantine_dir", quarantine_dir),
        quarantine_key=(
            None
            if quarantine_key is None
            else parse_asset_key(quarantine_key, argument="quarantine_key")
        ),
        table=TableChecks.of(dy_schema, expect_rows=expect_rows, expect_fresh=expect_fresh),
        trends=Trends.of(trends, where="dd.asset"),
    )

    def decorate(fn: Callable[..., Any]) -> dg.AssetsDefinition:
        if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn):
            raise TypeError(
                f"dd.asset cannot decorate {fn.__qualname__}: it is a generator or async "
                "function. dd.asset validates the one frame the function returns; return it "
                "(or a dg.MaterializeResult carrying it) instead of yielding."
            )
        key = _asset_key(fn, asset_kwargs)
        specs = check_specs(
            gate.schema,
            asset=key,
            warn=gate.warn,
            tolerate=gate.tolerate,
            check_granularity=gate.check_granularity,
            schema_rules=gate.schema_rules,
            quarantine=gate.quarantine,
            partitions_def=asset_kwargs.get("partitions_def"),
            expect_rows=gate.table.rows,
            expect_fresh=gate.table.fresh,
            trends=gate.trends,
        )
        completed = {
            **asset_kwargs,
            **_catalog_entry(gate.schema, fn, asset_kwargs),
            "metadata": {**(asset_kwargs.get("metadata") or {}), **schema_metadata(gate.schema)},
            "check_specs": [*specs, *(asset_kwargs.get("check_specs") or ())],
            "code_version": code_version(
                gate.schema,
                warn=gate.warn,
                tolerate=gate.tolerate,
                table=gate.table,
                user=asset_kwargs.get("code_version"),
            ),
        }
        if gate.quarantine:
            held = gate.quarantine_of(key)
            if held == key:
                raise InvalidSettingError(
                    f"dd.asset {key.to_user_string()} got quarantine_key={held.to_user_string()!r}"
                    ", the table's own key: the quarantine would overwrite the table. Choose "
                    "another key for the quarantine."
                )
            return quarantined_asset(
                schema=gate.schema,
                key=key,
                quarantine=held,
                quarantine_io_manager_key=quarantine_io_manager_key,
                asset_kwargs=completed,
                body=gate.body(fn, key),
            )
        return dg.asset(**completed, output_required=False)(gate.body(fn, key))

    return decorate


@dataclass(frozen=True)
class _Gate:
    """The resolved settings of one `dd.asset`, and the body they make."""

    schema: type[dy.Schema]
    quarantine: bool
    warn: tuple[str, ...]
    tolerate: dict[str, Any] | None
    check_granularity: str
    schema_rules: str
    statistics: bool
    row_sample: int
    max_failure_samples: int
    quarantine_dir: str
    quarantine_key: dg.AssetKey | None
    table: TableChecks
    trends: Trends | None

    def quarantine_of(self, key: dg.AssetKey) -> dg.AssetKey:
        """The key the quarantine of the table `key` is written as."""
        return self.quarantine_key or default_quarantine_key(key)

    def body(self, fn: Callable[..., Any], key: dg.AssetKey) -> Callable[..., BodyYield]:
        """A generator with `fn`'s signature (so Dagster binds the same context and inputs)
        that runs `fn`, then validates what it returned."""

        @functools.wraps(fn)
        def validated(*args: Any, **kwargs: Any) -> BodyYield:
            context = _context(args)
            run = context if context is not None and step_internals.in_run(context) else None
            if self.quarantine and run is not None:
                refuse_checks_alone(run, key, self.quarantine_of(key))
            returned = fn(*args, **kwargs)
            frame, extras = _unpack(returned, key)
            log = context.log if context is not None else dg.get_dagster_logger()
            if frame is None:
                yield from summarized(self._skip(log, key), log)
                return
            events = gated_results(
                self.schema,
                frame,
                valid_key=key,
                quarantine=self._quarantine(context, key) if self.quarantine else None,
                warn=self.warn,
                tolerate=self.tolerate,
                check_granularity=self.check_granularity,
                schema_rules=self.schema_rules,
                max_failure_samples=self.max_failure_samples,
                statistics=self.statistics,
                row_sample=self.row_sample,
                streamed=run is not None,
                table_takes_lazy=run is not None
                and takes_lazy_frames(step_internals.output_io_manager(run, TABLE_OUTPUT)),
                table_checks=self.table,
                reference=None if context is None else partition_end(context),
                trend=required_history(context, key, self.trends, by="dd.asset"),
            )
            stream: BodyYield = events
            if self.quarantine and run is not None and key not in run.selected_asset_keys:
                stream = pair_of_quarantine(run, key, events)
            for event in summarized(stream, log):
                if extras is not None and isinstance(event, dg.MaterializeResult):
                    event = _merged(event, extras) if event.asset_key == key else event
                yield event

        return validated

    def _quarantine(
        self, context: step_internals.Context | None, key: dg.AssetKey
    ) -> QuarantineStep:
        held = self.quarantine_of(key)
        if context is not None and step_internals.in_run(context):
            return declared_quarantine(context, key, held)
        partition = (
            context.partition_key if context is not None and context.has_partition_key else None
        )
        return writing(file_writer(key, self.quarantine_dir, partition, written_as=held))

    def _skip(self, log: Any, key: dg.AssetKey) -> Iterator[dg.AssetCheckResult]:
        reason = (
            f"The function of asset {key.to_user_string()} returned None (no source data): "
            "nothing was validated or written."
        )
        log.info(reason)
        yield from skipped_results(
            self.schema,
            asset_key=key,
            reason=reason,
            warn=self.warn,
            tolerate=self.tolerate,
            check_granularity=self.check_granularity,
            schema_rules=self.schema_rules,
            table_checks=self.table,
            trends=self.trends,
        )


#: The catalog's kind filter finds a gated asset by these, beside the user's own kinds.
KINDS = frozenset({"polars", "dataframely"})


def _catalog_entry(
    schema: type[dy.Schema], fn: Callable[..., Any], asset_kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The asset's description (the user's, else the function's docstring, as `@dg.asset`
    takes it, else the schema's own docstring) and kinds (the user's and `KINDS`; none added
    with `compute_kind=`, which Dagster does not take together with `kinds=`)."""
    own_doc = schema.__dict__.get("__doc__")
    description = (
        asset_kwargs.get("description")
        or (inspect.cleandoc(fn.__doc__) if fn.__doc__ else None)
        or (inspect.cleandoc(own_doc) if own_doc else None)
    )
    entry: dict[str, Any] = {"description": description}
    if asset_kwargs.get("compute_kind") is None:
        entry["kinds"] = {*(asset_kwargs.get("kinds") or ()), *KINDS}
    return entry


def _asset_key(fn: Callable[..., Any], asset_kwargs: dict[str, Any]) -> dg.AssetKey:
    """The key `@dg.asset` will give the asset, known before it is built (for the specs)."""
    if asset_kwargs.get("key") is not None:
        if asset_kwargs.get("name") or asset_kwargs.get("key_prefix"):
            raise dg.DagsterInvalidDefinitionError(
                f"dd.asset cannot decorate {fn.__qualname__} with key= and name= or "
                "key_prefix= together: key= is the whole key. Pass key= alone, or name= and "
                "key_prefix=."
            )
        return dg.AssetKey.from_coercible(asset_kwargs["key"])
    prefix = asset_kwargs.get("key_prefix") or []
    prefix = [prefix] if isinstance(prefix, str) else list(prefix)
    return dg.AssetKey([*prefix, asset_kwargs.get("name") or fn.__name__])


def _context(args: tuple[Any, ...]) -> step_internals.Context | None:
    """The run's context: Dagster passes it first when the function takes one; otherwise the
    current one. None under direct invocation of a function without a context."""
    if args and isinstance(args[0], (dg.AssetExecutionContext, dg.OpExecutionContext)):
        return args[0]
    try:
        return dg.AssetExecutionContext.get()
    except dg.DagsterInvariantViolationError:
        return None


def _unpack(returned: Any, key: dg.AssetKey) -> tuple[Any, dg.MaterializeResult | None]:
    """The frame to validate (None to skip) and the MaterializeResult that carried it."""
    if returned is None or isinstance(returned, (pl.DataFrame, pl.LazyFrame)):
        return returned, None
    if isinstance(returned, dg.MaterializeResult):
        value = returned.value
        if value is None or isinstance(value, (pl.DataFrame, pl.LazyFrame)):
            return value, returned
        what = "no value=" if value is _UNSET else f"value= of type {type_name(value)}"
        raise UnsupportedFrameError(
            f"The function of asset {key.to_user_string()} returned a dg.MaterializeResult with "
            f"{what}. dd.asset validates and writes the frame it carries: pass "
            "dg.MaterializeResult(value=<pl.DataFrame or pl.LazyFrame>, metadata=...)."
        )
    raise UnsupportedFrameError(
        f"The function of asset {key.to_user_string()} returned a {type_name(returned)}. "
        "dd.asset expects a pl.DataFrame, a pl.LazyFrame, a dg.MaterializeResult(value=<one "
        "of those>), or None when there is no source data. Convert the value (for pandas: "
        "pl.from_pandas(frame)) before returning it."
    )


def _merged(ours: dg.MaterializeResult, theirs: dg.MaterializeResult) -> dg.MaterializeResult:
    """The table's materialization with the returned result's metadata, tags and data
    version; the package's metadata (row count of the rows written) wins on a clash."""
    return dg.MaterializeResult(
        asset_key=ours.asset_key,
        value=ours.value,
        metadata={**(theirs.metadata or {}), **(ours.metadata or {})},
        check_results=theirs.check_results,
        data_version=theirs.data_version,
        tags=theirs.tags,
    )
