"""Custom Pandera checks, run as polars expressions inside the rule evaluation.

A Pandera polars check function receives `PolarsData(lazyframe, key)` (`key` is the column,
or `"*"` for a dataframe check) and returns a LazyFrame of booleans, or one bool for the
whole table. `run_pandera_check` turns such a function into one boolean expression:

1. *Traced*: most checks are `data.lazyframe.select(<expressions>)`. The function is called
   once with a stand-in frame that records what is selected from it; the selected
   expressions (combined with `&`, as Pandera folds several output columns) are the rule.
   It is plain polars, so it streams like any other rule.
2. *Batched*: any other function runs on the real rows, through `map_batches` over a struct
   of the schema's columns, exactly as Pandera would call it.
3. *Element-wise* (`element_wise=True`): the function runs per value via `map_elements`, as
   Pandera does. This calls Python once per value and is slow.

A verdict of one value (a bool, or an aggregate) applies to every row. A null verdict passes
unless the check has `ignore_na=False`, as in Pandera. An empty table has no row to carry it:
`table_verdicts` declares the rules whose one `False` fails an empty table, as in Pandera.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

import dataframely as dy
import polars as pl
from pandera.api.checks import Check
from pandera.api.polars.types import PolarsData
from polars.exceptions import PolarsInefficientMapWarning

from .._engine.dataframely_internals import rule_expressions
from .._engine.severity import closest, listed
from .._engine.table_verdicts import judges_table, judging_table, verdict_on_empty
from ..errors import InvalidTableCheckError

#: A check's frame: the schema's columns and their dtypes, in order.
Frame = Mapping[str, pl.DataType]
S = TypeVar("S", bound=type[dy.Schema])


def table_verdicts(*rules: str) -> Callable[[S], S]:
    """Declare rules of a schema that run a Pandera check whose verdict may be one value for
    the whole table (`pl.len() > 0`, a column's total): an empty table fails such a rule when
    that value is `False`, as Pandera fails it, where a Dataframely rule (counted by rows)
    passes an empty table. `to_dataframely` declares its custom and whole-table checks so, and
    the source `migrate` writes says it on the class. Unknown rule names raise
    `InvalidTableCheckError` when the class is decorated.

    Example:
        ```python
        @table_verdicts("not_empty", "amount|check__positive_total")
        class Payments(dy.Schema): ...
        ```
    """

    def decorate(schema: S) -> S:
        known = list(rule_expressions(schema))
        unknown = [name for name in rules if name not in known]
        if unknown:
            raise InvalidTableCheckError(
                f"table_verdicts names {', '.join(map(repr, unknown))}, not a rule of schema "
                f"{schema.__name__}: name the rules whose Pandera check judges the whole "
                f"table.{closest(unknown, known)} Rules: {listed(known)}."
            )
        judging_table(schema, judges_table(schema) | frozenset(rules))
        return schema

    return decorate


def run_pandera_check(
    check: Check | Callable[..., Any],
    key: str,
    frame: Frame,
    *,
    element_wise: bool = False,
    ignore_na: bool = True,
    **check_kwargs: Any,
) -> pl.Expr:
    """The verdict of a Pandera polars check on each row, as a polars expression.

    Args:
        check: A `pandera.Check`, or the function behind one (a `@pa.check` method of a
            model, or the function given to `pa.Check`). For a `Check`, `element_wise`,
            `ignore_na` and its keyword arguments come from the check itself.
        key: The column the check belongs to, or `"*"` for a dataframe check.
        frame: The columns (and dtypes) the check function sees: the schema's columns.
        element_wise: The function takes one value and returns a bool.
        ignore_na: A null verdict passes (Pandera's default) rather than fails.
        check_kwargs: Further keyword arguments for the function.

    Returns:
        A boolean expression; `False` marks a row that fails the check.
    """
    function: Callable[..., Any]
    if isinstance(check, Check):
        function = partial(check._check_fn, **check._check_kwargs)
        element_wise, ignore_na = check.element_wise, check.ignore_na
    else:
        function = partial(check, **check_kwargs) if check_kwargs else check
    if element_wise:
        expr = _element_wise(function, key, list(frame))
    else:
        traced = _traced(function, key, frame)
        expr = traced if traced is not None else _batched(function, key, list(frame), _name(check))
    return expr if ignore_na else expr.fill_null(False)


# ------------------------------------- element-wise ------------------------------------- #


def _element_wise(function: Callable[[Any], Any], key: str, columns: list[str]) -> pl.Expr:
    # Pandera maps `pl.col(key)` (every column for "*") and folds the columns with `&`.
    targets = columns if key == "*" else [key]
    with warnings.catch_warnings():  # the rule's description already says it is slow
        warnings.simplefilter("ignore", PolarsInefficientMapWarning)
        verdicts = [pl.col(c).map_elements(function, return_dtype=pl.Boolean) for c in targets]
    return verdicts[0] if len(verdicts) == 1 else pl.all_horizontal(verdicts)


# ---------------------------------------- traced ---------------------------------------- #


#: LazyFrame methods that read rows: a check that calls one depends on the data, so what
#: it selects from the (empty) stand-in may hold values computed from no rows.
_READS = ("collect", "collect_async", "collect_batches", "fetch", "profile")


class _StandIn(pl.LazyFrame):
    """An empty frame with the schema's columns that remembers what is selected from it.

    Frames derived from it are stand-ins too (polars builds them with `type(self)`); a
    subclass per trace records, in `reads`, whether any of them read rows.
    """

    _root = False
    _selected: tuple[tuple[Any, ...], dict[str, Any]] | None = None
    reads: list[str]

    def select(self, *exprs: Any, **named_exprs: Any) -> pl.LazyFrame:
        result = super().select(*exprs, **named_exprs)
        if self._root:  # only a selection from the frame Pandera would pass counts
            result._selected = (exprs, named_exprs)  # type: ignore[attr-defined]
        return result


def _stand_in(frame: Frame) -> _StandIn:
    reads: list[str] = []

    def reading(name: str) -> Any:
        method = getattr(pl.LazyFrame, name)

        def read(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
            reads.append(name)
            return method(self, *args, **kwargs)

        return read

    methods = {name: reading(name) for name in _READS if hasattr(pl.LazyFrame, name)}
    cls = type("_TracedStandIn", (_StandIn,), {**methods, "reads": reads})
    stand_in: _StandIn = cls(schema=dict(frame))
    stand_in._root = True
    return stand_in


def _traced(function: Callable[[PolarsData], Any], key: str, frame: Frame) -> pl.Expr | None:
    stand_in = _stand_in(frame)
    try:
        out = function(PolarsData(stand_in, key))
    except Exception:  # the function needs real data: run it on the rows instead
        return None
    selected = getattr(out, "_selected", None) if isinstance(out, _StandIn) else None
    if selected is None or stand_in.reads:
        return None
    exprs = _expressions(*selected)
    if not exprs or not _row_level(exprs, frame):
        return None
    return exprs[0] if len(exprs) == 1 else pl.all_horizontal(exprs)


def _expressions(exprs: tuple[Any, ...], named: dict[str, Any]) -> list[pl.Expr] | None:
    result: list[pl.Expr] = []
    for item in [*exprs, *named.values()]:
        if isinstance(item, str):
            result.append(pl.col(item))
        elif isinstance(item, pl.Expr):
            result.append(item)
        elif isinstance(item, (list, tuple)):
            inner = _expressions(tuple(item), {})
            if inner is None:
                return None
            result.extend(inner)
        else:
            return None
    return result


def _row_level(exprs: list[pl.Expr], frame: Frame) -> bool:
    """One boolean output per expression, over the schema's columns only."""
    for expr in exprs:
        if expr.meta.has_multiple_outputs() or not set(expr.meta.root_names()) <= set(frame):
            return False
    try:
        dtypes = pl.LazyFrame(schema=dict(frame)).select(exprs).collect_schema().dtypes()
    except Exception:
        return False
    return all(dtype == pl.Boolean for dtype in dtypes)


# ---------------------------------------- batched --------------------------------------- #


def _batched(
    function: Callable[[PolarsData], Any], key: str, columns: list[str], name: str
) -> pl.Expr:
    def verdict(rows: pl.Series) -> pl.Series:
        data = rows.struct.unnest()
        return _verdict(function(PolarsData(data.lazy(), key)), data.height, name)

    return pl.struct(*(pl.col(c) for c in columns)).map_batches(verdict, return_dtype=pl.Boolean)


def _verdict(out: Any, height: int, name: str) -> pl.Series:
    """A check's output as one boolean per row (Pandera folds several columns with `&`). A
    verdict for the whole table stays one value on an empty table while an evaluation asks for
    it (`verdict_on_empty`), so the empty table can fail it."""
    on_empty = 1 if verdict_on_empty() else 0
    if isinstance(out, bool) or type(out).__name__ == "bool_":
        return pl.Series(name, [bool(out)] * (height or on_empty), dtype=pl.Boolean)
    if isinstance(out, pl.LazyFrame):
        out = out.collect()
    if not isinstance(out, pl.DataFrame):
        raise TypeError(
            f"Pandera check {name!r} returned {type(out).__name__}; a polars check returns "
            "a LazyFrame of booleans or a bool."
        )
    series = out.to_series() if out.width == 1 else out.select(pl.all_horizontal(pl.all()))[:, 0]
    if series.dtype != pl.Boolean:
        raise TypeError(f"Pandera check {name!r} returned {series.dtype} values, not booleans.")
    if len(series) == 1 and height > 1:
        return series.new_from_index(0, height)  # one verdict for the whole table
    if len(series) == 1 and height == 0:
        return series.head(on_empty)
    if len(series) != height:
        raise ValueError(f"Pandera check {name!r} returned {len(series)} rows for {height}.")
    return series


def _name(check: Any) -> str:
    return str(getattr(check, "name", None) or getattr(check, "__name__", None) or check)
