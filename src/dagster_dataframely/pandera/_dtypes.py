"""Pandera polars dtypes as Dataframely column types that accept exactly the same dtypes.

Pandera compares a column's polars dtype with the declared one for equality; the Dataframely
column built here validates the same dtype (`_writing.columns`). Dtypes Dataframely cannot
pin down raise `UnsupportedSchemaError`.
"""

from __future__ import annotations

from typing import Any

from pandera.engines import polars_engine as pe

from .._writing.columns import ColumnType, DtypeError, polars_column_type

__all__ = ["ColumnType", "DtypeError", "column_type"]


def column_type(dtype: Any) -> ColumnType:
    """The Dataframely column type of a Pandera column's dtype."""
    if isinstance(dtype, pe.DateTime) and dtype.time_zone_agnostic:
        raise DtypeError(
            "time_zone_agnostic=True accepts datetimes in any time zone; a Dataframely "
            "Datetime column has one time zone. Declare the time zone the data has"
        )
    if isinstance(dtype, pe.PanderaSchema):
        raise DtypeError(
            "a nested Pandera model as a struct column is validated by coercion, which "
            "Dataframely does not do. Declare the struct with pl.Struct({...}) and move the "
            "nested checks to the outer model"
        )
    if isinstance(dtype, pe.PydanticModel):
        raise DtypeError("a pydantic model as a dtype validates rows in Python; declare columns")
    if isinstance(dtype, pe.Category):
        raise DtypeError(
            "the Category dtype checks its categories only while coercing; use pl.Enum([...])"
        )
    return polars_column_type(getattr(dtype, "type", dtype))
