"""Why a rule is not pushed down: the proof that its SQL means its polars expression failed.

Every part of the SQL backend that declines to compile a rule (a regex construct, arithmetic
that may overflow, a column's collation or padded type, a bound finer than the column's time
unit) raises `NotExact` with a short reason. The rule then runs in polars, and the reason
reaches the step log and the check's `dy_engine` (`polars (collation nocase)`), so a user sees
why a rule left the database.
"""

from __future__ import annotations

from ..evaluate import POLARS


class NotExact(Exception):
    """The SQL of a rule would not count what its polars expression counts, for `reason`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: The reason of a rule declined without a more specific one.
NO_SQL_FORM = "no exact SQL form"
#: Why a key rule of a large table of an embedded database (DuckDB in the checking process)
#: runs in polars: not exactness but cost. Its key columns stream into polars, which counts
#: repeated keys for less CPU and memory than DuckDB's grouping of every key
#: (`Dialect.keys_streamed_from`).
KEYS_IN_POLARS = "keys cost less here than in an embedded database"


def fallback_engine(reason: str) -> str:
    """The engine name of a rule that fell back: `polars (reason)`."""
    return f"{POLARS} ({reason})"
