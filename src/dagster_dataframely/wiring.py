"""The parts `dd.asset` is built from, for assets it cannot build.

See the hand-wiring guide: attach a schema to an asset declared some other way, or report
checks in a way `dd.asset` does not offer.
"""

from ._checks.metadata import schema_metadata, table_schema
from ._checks.results import check_results
from ._checks.specs import check_specs
from ._engine.catalogue import Rule, rules
from ._engine.naming import check_name
from ._gated.gate import AssetYield, validation_results
from ._gated.quarantine import (
    QuarantineWriter,
    delegating_writer,
    file_writer,
    quarantine_frame,
    quarantine_path,
    validate_quarantine_key,
)

__all__ = [
    "AssetYield",
    "QuarantineWriter",
    "Rule",
    "check_name",
    "check_results",
    "check_specs",
    "delegating_writer",
    "file_writer",
    "quarantine_frame",
    "quarantine_path",
    "rules",
    "schema_metadata",
    "table_schema",
    "validate_quarantine_key",
    "validation_results",
]
