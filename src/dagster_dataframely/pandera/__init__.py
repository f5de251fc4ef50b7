"""Pandera polars models as Dataframely schemas: translated, and migrated to source.

`to_dataframely(model)` gives the Dataframely schema with the same verdicts as a Pandera
polars model, so a Pandera model works wherever dagster-dataframely takes a schema.
`migrate(model)` writes that schema as Dataframely source, keeping every rule name (and so
every Dagster check name). `run_pandera_check` runs a custom Pandera check inside the rule
evaluation; migrated source calls it for checks still to be ported, and declares with
`table_verdicts` the rules an empty table can fail, as Pandera fails it.
"""

try:
    import pandera.polars  # noqa: F401
except ImportError as error:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "dagster_dataframely.pandera needs Pandera with polars support. Install the extra: "
        "pip install 'dagster-dataframely[pandera]'"
    ) from error

from ._custom import run_pandera_check, table_verdicts
from ._migrate import migrate
from ._translate import to_dataframely

__all__ = ["migrate", "run_pandera_check", "table_verdicts", "to_dataframely"]
