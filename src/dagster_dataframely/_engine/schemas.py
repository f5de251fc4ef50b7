"""What counts as a schema: a Dataframely schema class, or a Pandera polars model.

Pandera models are translated once (by `dd.pandera`) into a Dataframely schema, so every
later step sees one kind of schema.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import dataframely as dy

from ..errors import UnsupportedSchemaError

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
        f"{schema!r} is not a schema. Pass a subclass of dataframely.Schema, or a Pandera "
        "polars DataFrameModel or DataFrameSchema."
    )


def _is_pandera(schema: Any) -> bool:
    kind = schema if isinstance(schema, type) else type(schema)
    return any(base.__module__.startswith("pandera") for base in kind.__mro__)
