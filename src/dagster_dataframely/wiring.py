"""The parts `dd.asset` is built from, for assets it cannot build.

See the hand-wiring guide: attach a schema to an asset declared some other way, or report
checks in a way `dd.asset` does not offer.
"""

from ._catalogue import Rule, rules
from ._metadata import schema_metadata, table_schema
from ._naming import check_name
from ._results import check_results
from ._specs import check_specs

__all__ = [
    "Rule",
    "check_name",
    "check_results",
    "check_specs",
    "rules",
    "schema_metadata",
    "table_schema",
]
