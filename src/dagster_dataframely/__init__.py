"""dagster-dataframely: a table's Dataframely schema as Dagster's single source of data quality.

`import dagster_dataframely as dd`; the hand-wiring parts are in `dd.wiring`.
"""

from . import data, errors, wiring
from ._severity import warn

__all__ = ["data", "errors", "warn", "wiring"]
