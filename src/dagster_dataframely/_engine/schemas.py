"""What counts as a schema: a Dataframely schema class, or a Pandera polars model.

Pandera models are translated once (by `dd.pandera`) into a Dataframely schema, so every
later step sees one kind of schema.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import dataframely as dy

from ..errors import UnsupportedSchemaError
from .display import shorten, type_name

#: A Dataframely schema class, or a Pandera polars `DataFrameModel` / `DataFrameSchema`.
SchemaLike: TypeAlias = "type[dy.Schema] | Any"


def as_dataframely(schema: SchemaLike) -> type[dy.Schema]:
    """The Dataframely schema behind `schema`, translating a Pandera model once."""
    if isinstance(schema, type) and issubclass(schema, dy.Schema):
        return schema
    if _is_pandera(schema):
        try:
            from ..pandera import to_dataframely
        except ImportError as error:  # pandera itself is missing
            raise UnsupportedSchemaError(
                "A Pandera model was passed as a schema, but Pandera's polars support is not "
                "installed. Install the extra: pip install 'dagster-dataframely[pandera]'."
            ) from error
        return to_dataframely(schema)
    raise UnsupportedSchemaError(
        f"{_described(schema)} is not a schema. Pass a subclass of dataframely.Schema, or a "
        "Pandera polars DataFrameModel or DataFrameSchema."
    )


def _described(value: Any) -> str:
    """`value` as an error names it: a class by its name, a frame by its type (its repr is
    the data), anything else by a short repr and its type."""
    if isinstance(value, type):
        return f"class {value.__module__}.{value.__qualname__}"
    if type(value).__module__.split(".")[0] in _FRAME_PACKAGES:
        return f"a {type_name(value)}"
    return f"{shorten(repr(value), 100)} (a {type_name(value)})"


#: Packages whose objects' repr prints their data.
_FRAME_PACKAGES = frozenset({"polars", "pandas", "pyarrow", "narwhals", "numpy"})


def _is_pandera(schema: Any) -> bool:
    kind = schema if isinstance(schema, type) else type(schema)
    return any(base.__module__.startswith("pandera") for base in kind.__mro__)
