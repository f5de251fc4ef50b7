"""The parts `dd.asset` is built from, for assets it cannot build.

See the hand-wiring guide: attach a schema to an asset declared some other way, or report
checks in a way `dd.asset` does not offer.
"""

from ._catalogue import Rule, rules
from ._gate import AssetYield, validation_results
from ._metadata import schema_metadata, table_schema
from ._naming import check_name
from ._quarantine import (
    QuarantineWriter,
    delegating_writer,
    file_writer,
    quarantine_frame,
    quarantine_path,
    validate_quarantine_key,
)
from ._results import check_results
from ._specs import check_specs

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
