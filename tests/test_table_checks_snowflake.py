"""Table checks on Snowflake SQL executed by fakesnow: the newest timestamp is a `MAX` in the
rules' one count query, and the volume and freshness come out as polars reads the table."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
import datetime as dt

from support import evaluations, logs
from test_pushdown import run_payments_checks
from test_sql_snowflake import ROWS, Payments, SnowflakeWarehouse, _source
from test_sql_snowflake import warehouse as warehouse  # the module's fakesnow warehouse

import dagster_dataframely as dd

#: The newest payment, as the table holds it (naive, read in UTC).
NEWEST = max(row[6] for row in ROWS if row[6] is not None)


@dd.expect_rows(min=len(ROWS) + 1)
@dd.expect_fresh("paid_at", within=dt.timedelta(days=365 * 100))
class CheckedPayments(Payments):
    """`Payments` with a row-count and a freshness check."""


def test_snowflake_finds_the_newest_value_in_its_count_query(
    warehouse: SnowflakeWarehouse,
) -> None:
    instance, result = run_payments_checks(CheckedPayments, _source(), {"warehouse": warehouse})

    checked = evaluations(result)
    assert checked["dy_table__row_count"].metadata["dy_row_count"].value == len(ROWS)
    assert not checked["dy_table__row_count"].passed  # one row short of the minimum
    fresh = checked["dy_table__freshness"]
    assert fresh.metadata["dy_newest"].value == NEWEST.replace(tzinfo=dt.timezone.utc).isoformat()
    assert fresh.passed
    sent = [line for line in logs(instance, result) if line.startswith("Pushed down to snowflake:")]
    (counts,) = [line for line in sent if "__dy_rows" in line]
    assert 'MAX("paid_at")' in counts
