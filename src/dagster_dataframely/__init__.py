"""dagster-dataframely: a table's Dataframely schema as Dagster's single source of data quality."""

from . import errors
from ._severity import warn

__all__ = ["errors", "warn"]
