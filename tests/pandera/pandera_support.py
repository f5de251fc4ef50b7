"""Helpers of the Pandera tests: which rows each side rejects, and frames to try."""

from __future__ import annotations

import importlib
import math
import sys
import uuid
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import dataframely as dy
import pandera.polars as pa
import polars as pl
from hypothesis import strategies as st
from pandera.errors import SchemaErrors, SchemaWarning

from dagster_dataframely.wiring import rules

ROW = "row_index"

#: Values that probe the semantic differences: nulls, NaN, infinities, signed zero, bound
#: values, empty strings, multi-byte characters (2, 3 and 4 bytes), and few distinct values
#: so that duplicates are common.
VALUES: dict[Any, st.SearchStrategy[Any]] = {
    pl.Int64: st.none() | st.integers(-3, 12),
    pl.Int16: st.none() | st.integers(-3, 12),
    pl.Float64: st.none()
    | st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, 3.0, 7.0])
    | st.floats(-3, 12, allow_nan=False),
    pl.String: st.none()
    | st.sampled_from(["", "a", "b", "ab", "ba", "1a", "é", "éa", "aé", "éé", "€", "😀b", "a😀"])
    | st.text(alphabet="abAé€😀-1", max_size=4),
}


def frames(columns: Mapping[str, Any], max_rows: int = 8) -> st.SearchStrategy[pl.DataFrame]:
    """Frames with exactly `columns` (name -> polars dtype)."""
    row = st.fixed_dictionaries({name: VALUES[dtype] for name, dtype in columns.items()})
    return st.lists(row, max_size=max_rows).map(
        lambda rows: pl.DataFrame(rows, schema=dict(columns), orient="row")
    )


def pandera_rejects(
    schema: pa.DataFrameSchema | type[pa.DataFrameModel], df: pl.DataFrame
) -> set[int]:
    """The rows Pandera's own `validate(lazy=True)` rejects (warning checks pass).

    A failure without a row index (a check that returns one bool, or that raised) fails the
    whole table: every row.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        try:
            schema.validate(df, lazy=True)
        except SchemaErrors as errors:
            index = errors.failure_cases["index"]
            if index.null_count():
                return set(range(df.height))
            return set(index.to_list())
    return set()


def dataframely_rejects(schema: type[dy.Schema], df: pl.DataFrame) -> set[int]:
    """The rows `Schema.filter(df, cast=False)` rejects through its `"error"` rules."""
    errors = [rule.name for rule in rules(schema) if rule.severity == "error"]
    indexed: type[dy.Schema] = type("Indexed", (schema,), {ROW: dy.UInt32()})
    _, failure = indexed.filter(df.with_row_index(ROW), cast=False)
    if not errors or not len(failure):
        return set()
    details = failure.details()
    rejected = details.filter(pl.any_horizontal(pl.col(errors) == "invalid"))
    return set(rejected[ROW].to_list())


def load(source: str, directory: Path) -> ModuleType:
    """`source` (migrated Dataframely source), written to `directory` and imported."""
    name = f"migrated_{uuid.uuid4().hex}"
    (directory / f"{name}.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(directory))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(directory))
