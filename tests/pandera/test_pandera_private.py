"""Pandera internals the translation rests on, each pinned with the decision it supports."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl
from pandera.api.checks import Check
from pandera.api.function_dispatch import Dispatcher
from pandera.api.polars.types import PolarsData
from pandera.errors import SchemaErrors
from pandera_models import Orders

from dagster_dataframely.pandera._checks import POLARS_BUILTINS
from dagster_dataframely.pandera._origin import origin


def test_builtin_checks_dispatch_through_a_dispatcher_named_after_the_check() -> None:
    """`_checks.builtin_name` tells built-ins from custom checks this way (a model's schema
    holds copies of the dispatcher, so identity cannot be used)."""
    check = Orders.to_schema().columns["order_id"].checks[0]
    assert isinstance(check._check_fn, Dispatcher)
    assert check._check_fn.__name__ == "greater_than_or_equal_to"
    assert check._check_kwargs == {"min_value": 1}


def test_the_polars_builtins_are_the_ones_translated() -> None:
    """Every built-in the polars backend registers has a translation in `_checks`."""
    import pandera.backends.polars.builtin_checks as builtins

    registered = {
        name
        for name, value in vars(builtins).items()
        if callable(value) and getattr(value, "__module__", "") == builtins.__name__
    }
    assert registered == POLARS_BUILTINS
    assert all(Check.is_builtin_check(name) for name in POLARS_BUILTINS)


def test_model_checks_reach_their_method_through_the_adapter_closure() -> None:
    """`_origin.origin` finds a `@pa.check` method (name, docstring, attribute) this way."""
    check = next(
        c for c in Orders.to_schema().columns["quantity"].checks if c.name == "quantity_even"
    )
    found = origin(check)
    assert found.model is Orders and found.attribute == "quantity_even"
    assert found.function.__doc__ == "Quantities come in pairs."
    frame = pl.LazyFrame({"quantity": [1, 2]})
    assert Orders.quantity_even(PolarsData(frame, "quantity")).collect().to_series().to_list() == [
        False,
        True,
    ]


def _failure_cases(schema: pa.DataFrameSchema, frame: pl.DataFrame) -> pl.DataFrame:
    try:
        schema.validate(frame, lazy=True)
    except SchemaErrors as errors:
        return errors.failure_cases
    raise AssertionError("the frame was valid")


def test_failure_cases_carry_the_row_index_of_data_checks() -> None:
    """The differential tests read rejected rows from `failure_cases["index"]`; a check
    returning one bool has no index (its failure is the whole table's). (Both kinds failing
    at once crashes Pandera 0.35 on polars 2: its failure-case dtypes differ.)"""
    frame = pl.DataFrame({"a": [1, -1]})
    rows = pa.DataFrameSchema({"a": pa.Column(int, pa.Check.ge(0))})
    assert _failure_cases(rows, frame)["index"].to_list() == [1]
    table = pa.DataFrameSchema({"a": pa.Column(int)}, checks=[pa.Check(lambda d: False)])
    assert _failure_cases(table, frame)["index"].to_list() == [None]


def test_null_check_verdicts_pass_unless_ignore_na_is_false() -> None:
    """Dataframely counts a null rule verdict as a pass; Pandera does too (ignore_na=True),
    which is why only `ignore_na=False` checks get `.fill_null(False)`."""
    frame = pl.DataFrame({"a": [None, 1]}, schema={"a": pl.Int64})
    passing = pa.DataFrameSchema({"a": pa.Column(int, pa.Check.ge(5), nullable=True)})
    assert _failure_cases(passing, frame)["index"].to_list() == [1]
    failing = pa.DataFrameSchema(
        {"a": pa.Column(int, pa.Check.ge(0, ignore_na=False), nullable=True)}
    )
    assert _failure_cases(failing, frame)["index"].to_list() == [0]
