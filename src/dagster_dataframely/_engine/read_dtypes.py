"""`read_dtypes="cast"`: the sidecar's opt-in casts of the dtypes a warehouse hands back.

A round trip through DuckDB or pandas changes some dtypes without changing the values: an
`Enum` comes back as `String`, `UTC` as `Etc/UTC`, a `Date` as a `Datetime`. The sidecar
cannot change the asset that wrote the table, so on request it casts these drifts, and only
these (read dtype -> declared dtype):

- `String`, `Categorical`, `Enum` -> `Enum`; `String`, `Enum` -> `Categorical`;
- `Datetime` -> `Datetime` in the same zone (aliases such as `UTC` and `Etc/UTC`, which
  share their tz database rules), any time unit;
- `Datetime` without a zone -> `Date`;
- an integer or a float -> an integer; a float or a decimal -> a `Decimal`.

A value is cast when it reads back unchanged (cast to the declared dtype and back to the
read one): a category outside the `Enum`, a time after midnight, an integer out of range, a
fraction finer than the scale does not, and instead of becoming `null` it fails the
column-schema check. That test is one more rule for the evaluator, so it is counted in the
same streaming pass as the schema's own rules, or, under pushdown, in the same query (the
casts with an exact SQL form, `sql.casts`, are made in the database). Any other drift fails
as before.
"""

from __future__ import annotations

import functools
import importlib.resources
import os
import posixpath
import zoneinfo
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import dagster as dg
import dataframely as dy
import polars as pl

from ..errors import ColumnSchemaError
from .catalogue import Rule
from .display import MAX_CELL, cell, dtype_name, shorten, table
from .evaluate import POLARS, Evaluation
from .naming import COLUMN_SCHEMA_CHECK

ReadDtypes = Literal["strict", "cast"]

_LISTED = 50
#: Columns a message names one by one, and the bound of the whole message: a few KB in the
#: event log, however many columns fail and however long their values.
_NAMED = 10
_MESSAGE = 4000


def castable(read: pl.DataType, declared: pl.DataType) -> bool:
    """Whether `read_dtypes="cast"` casts a column read as `read` to `declared`."""
    if isinstance(declared, pl.Enum):
        return isinstance(read, (pl.String, pl.Categorical, pl.Enum))
    if isinstance(declared, pl.Categorical):
        return isinstance(read, (pl.String, pl.Enum))
    if isinstance(declared, pl.Datetime):
        return isinstance(read, pl.Datetime) and same_zone(read.time_zone, declared.time_zone)
    if isinstance(declared, pl.Date):
        return isinstance(read, pl.Datetime) and read.time_zone is None
    if declared.is_integer():
        return read.is_integer() or read.is_float()
    if isinstance(declared, pl.Decimal):
        return read.is_float() or isinstance(read, pl.Decimal)
    return False


def same_zone(read: str | None, declared: str | None) -> bool:
    """Whether two time zone names denote one zone: equal, or aliases with the same rules."""
    if read == declared:
        return True
    if read is None or declared is None:
        return False
    rules = _zone_rules(read)
    return rules is not None and rules == _zone_rules(declared)


@functools.lru_cache(maxsize=64)
def _zone_rules(key: str) -> bytes | None:
    """The tz database file `zoneinfo` would read for `key`: the system's, else `tzdata`'s.
    Aliases of one zone (`UTC`, `Etc/UTC`, `Zulu`) share it."""
    if key.startswith("/") or posixpath.normpath(key) != key:
        return None
    for root in zoneinfo.TZPATH:
        path = os.path.join(root, key)
        if os.path.isfile(path):
            with open(path, "rb") as file:
                return file.read()
    try:
        found = importlib.resources.files("tzdata") / "zoneinfo"
        for part in key.split("/"):
            found = found / part
        return found.read_bytes()
    except (ImportError, OSError):
        return None


@dataclass(frozen=True)
class Cast:
    """One column cast on read: from the dtype the source handed over to the declared one."""

    column: str
    read: pl.DataType
    declared: pl.DataType
    index: int

    @property
    def original(self) -> str:
        """The column that holds the values as read while the rules run."""
        return f"__dy_read_{self.index}"

    @property
    def rule(self) -> Rule:
        """A row fails when its value does not read back unchanged after the cast."""
        back = pl.col(self.column).cast(self.read).eq_missing(pl.col(self.original))
        return Rule(
            name=f"__dy_cast_{self.index}",
            column=self.column,
            check_name=f"__dy_cast_{self.index}",
            severity="error",
            description=f"{self.column}: {self.read} values that are {self.declared} values",
            expression=str(back),
            expr=back,
            kind="cast",
        )


@dataclass(frozen=True)
class Casts:
    """The casts `read_dtypes="cast"` makes on one table (none under `"strict"`)."""

    casts: tuple[Cast, ...] = ()

    @classmethod
    def plan(
        cls, schema: type[dy.Schema], actual: Mapping[str, pl.DataType], read_dtypes: str | None
    ) -> Casts:
        """A cast for each column of `schema` whose dtype in `actual` drifted castably."""
        if read_dtypes != "cast":
            return cls()
        casts: list[Cast] = []
        for name, column in schema.columns().items():
            read = actual.get(name)
            if read is None or column.validate_dtype(read):
                continue
            if castable(read, column.dtype):
                casts.append(Cast(name, read, column.dtype, len(casts)))
        return cls(tuple(casts))

    @property
    def columns(self) -> frozenset[str]:
        return frozenset(cast.column for cast in self.casts)

    @property
    def rules(self) -> list[Rule]:
        return [cast.rule for cast in self.casts]

    def frame(self, lf: pl.LazyFrame, columns: Sequence[str]) -> pl.LazyFrame:
        """`columns` of `lf`, in `lf`'s order, cast lazily (a value that does not convert
        becomes `null`, and fails its cast's rule), with the values as read beside them.

        `lf`'s order, not the schema's: a projection that reorders a parquet scan's columns
        doubles what the streaming engine holds (10M rows, a key column declared last: 370
        MB above the imports instead of 160)."""
        position = {name: index for index, name in enumerate(lf.collect_schema().names())}
        columns = sorted(columns, key=lambda name: position.get(name, len(position)))
        if not self.casts:
            return lf.select(columns)
        return lf.select(
            *(pl.col(name) for name in columns),
            *(pl.col(cast.column).alias(cast.original) for cast in self.casts),
        ).with_columns(_converted(c.column, c.read, c.declared) for c in self.casts)

    def result(
        self,
        schema: type[dy.Schema],
        asset_key: dg.AssetKey,
        evaluation: Evaluation,
        identify: Sequence[str],
    ) -> tuple[dg.AssetCheckResult, ColumnSchemaError | None]:
        """The column-schema result after the casts: it names each cast and how many values
        did not convert; with any such value it fails, and the error says which."""
        failed = {cast.column: evaluation.failed[cast.rule.name] for cast in self.casts}
        engines = {c.column: evaluation.engines.get(c.rule.name, POLARS) for c in self.casts}
        casts = pl.DataFrame(
            [
                (c.column, str(c.read), str(c.declared), failed[c.column], engines[c.column])
                for c in self.casts
            ],
            schema={
                "column": pl.String,
                "read": pl.String,
                "cast to": pl.String,
                "failed": pl.Int64,
                "engine": pl.String,
            },
            orient="row",
        )
        metadata: dict[str, Any] = {
            "dy_mismatched_columns": 0,
            "dy_cast_columns": len(self.casts),
            "dy_casts": table(casts.head(_LISTED)),
            "dy_engine": ", ".join(sorted(set(engines.values()))),
        }
        listed = ", ".join(
            f"{_name(c.column)} ({dtype_name(c.read)} -> {dtype_name(c.declared)})"
            for c in self.casts[:_NAMED]
        )
        more = f", and {len(self.casts) - _NAMED} more" if len(self.casts) > _NAMED else ""
        description = shorten(
            f'read_dtypes="cast": cast {len(self.casts)} column(s) on read: {listed}{more}',
            _MESSAGE,
        )
        failing = [cast for cast in self.casts if failed[cast.column]]
        if not failing:
            return (
                dg.AssetCheckResult(
                    check_name=COLUMN_SCHEMA_CHECK,
                    asset_key=asset_key,
                    passed=True,
                    description=description,
                    metadata=metadata,
                ),
                None,
            )
        metadata["dy_mismatched_columns"] = len(failing)
        sample = _sample(failing, evaluation, identify)
        if sample is not None:
            metadata["dy_failed_sample"] = table(sample, null="null")
        message = _failed_message(schema, failing, failed, sample)
        result = dg.AssetCheckResult(
            check_name=COLUMN_SCHEMA_CHECK,
            asset_key=asset_key,
            passed=False,
            severity=dg.AssetCheckSeverity.ERROR,
            description=message.splitlines()[0],
            metadata=metadata,
        )
        mismatches = {c.column: (str(c.declared), str(c.read)) for c in failing}
        return result, ColumnSchemaError(message, mismatches=mismatches)


def _converted(column: str, read: pl.DataType, declared: pl.DataType) -> pl.Expr:
    """`column` cast to `declared`, a value that does not convert becoming `null`.

    A non-strict cast of a float to a `Decimal` does not yield `null` for a value past the
    precision: polars raises. Such a value is masked first, and the rest is cast through a
    `Decimal` one digit wider, so that rounding to the scale (999999.995 -> 1000000.00) lands
    in a non-strict `Decimal` -> `Decimal` cast, which does yield `null`."""
    value = pl.col(column)
    if not (isinstance(declared, pl.Decimal) and read.is_float()):
        return value.cast(declared, strict=False)
    digits = declared.precision - declared.scale
    wider = pl.Decimal(min(declared.precision + 1, 38), declared.scale)
    within = pl.when(value.abs() < 10.0**digits).then(value)
    return within.cast(wider, strict=False).cast(declared, strict=False)


def _sample(
    failing: Sequence[Cast], evaluation: Evaluation, identify: Sequence[str]
) -> pl.DataFrame | None:
    """The values that did not convert, column by column, with the key that locates them."""
    frames = []
    for cast in failing:
        rows = evaluation.samples.get(cast.rule.name)
        if rows is None:
            continue
        # A sample shows a few columns; a key of many could leave the value out.
        read = pl.col(cast.original) if cast.original in rows.columns else pl.lit(None)
        frames.append(
            rows.select(
                *(name for name in identify if name in rows.columns),
                pl.lit(cast.column).alias("column"),
                read.cast(pl.String).alias("value read"),
            )
        )
    return pl.concat(frames, how="diagonal") if frames else None


def _failed_message(
    schema: type[dy.Schema],
    failing: Sequence[Cast],
    failed: Mapping[str, int],
    sample: pl.DataFrame | None,
) -> str:
    lines = []
    for cast in failing[:_NAMED]:
        shown = (
            sample.filter(pl.col("column") == cast.column)["value read"]
            .unique(maintain_order=True)
            .head(3)
            .to_list()
            if sample is not None
            else []
        )
        # A number as Python writes it (2.0, not the text a sample cell shows for the UI).
        examples = (repr(v) if isinstance(v, (int, float)) else repr(cell(v)) for v in shown)
        example = f", e.g. {', '.join(examples)}" if shown else ""
        lines.append(
            f"  - {_name(cast.column)}: {failed[cast.column]} value(s) read as "
            f"{dtype_name(cast.read)} are not {dtype_name(cast.declared)} values{example}"
        )
    if len(failing) > _NAMED:
        lines.append(f"  - and {len(failing) - _NAMED} more column(s), listed in dy_casts")
    fix = (
        "\nNo value is cast to null. Correct the values in the table, or declare a dtype "
        "that holds them (e.g. add the category to the Enum)."
    )
    found = (
        f'read_dtypes="cast" could not cast every value to {schema.__name__}\'s dtypes: '
        f"{len(failing)} column(s) hold values the cast would change or lose:\n" + "\n".join(lines)
    )
    return shorten(found, _MESSAGE - len(fix)) + fix


def _name(column: str) -> str:
    """A column's name as a message shows it, cut to a table cell's width."""
    return shorten(column, MAX_CELL)


def remedy(
    schema: type[dy.Schema],
    actual: Mapping[str, pl.DataType],
    mismatches: Mapping[str, tuple[str, str | None]],
    read_dtypes: str,
) -> str:
    """The fix the sidecar's column-schema message names: `read_dtypes="cast"` for the
    drifts it casts (a sidecar cannot change the asset), else the schema or the writer."""
    columns = schema.columns()
    fixed = [
        name
        for name in mismatches
        if name in actual and castable(actual[name], columns[name].dtype)
    ]
    others = (
        "Declare the dtype the table holds in the schema, or write the declared dtype where "
        f"the table is made (e.g. `{schema.__name__}.cast(frame)` in the asset)."
    )
    if read_dtypes == "cast":
        return f'read_dtypes="cast" casts none of these drifts. {others}'
    if not fixed:
        return f'The sidecar casts none of these drifts, even with read_dtypes="cast". {others}'
    how = (
        'Pass read_dtypes="cast" to the checks (dd.schema_checks, dd.with_schemas, or '
        "`read_dtypes: cast` in the Component's YAML) to cast them on read; each cast is "
        f"reported on {COLUMN_SCHEMA_CHECK}, and a value it would change fails it."
    )
    if len(fixed) == len(mismatches):
        return f"The sidecar casts none of them unless asked, and can cast every one. {how}"
    return (
        f"The sidecar casts none of them unless asked; it can cast {', '.join(fixed)}. {how} "
        f"For the other columns: {others[0].lower()}{others[1:]}"
    )


#: No cast: the default everywhere but a sidecar reading with `read_dtypes="cast"`.
NO_CASTS = Casts()
