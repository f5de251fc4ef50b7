"""`infer_schema(adopt=True)` and `infer --adopt`: a table made by `CREATE TABLE AS` (no
constraints) gets a schema whose rules are the profile's proposals, each marked as learned from
the data on the day; the rules pass on the rows they were learned from, in a real run of the
checks, and fail on a changed row."""

from __future__ import annotations

import datetime
from pathlib import Path

import duckdb
import pytest
from console import dagster_dataframely
from dagster_duckdb import DuckDBResource
from postgres import PostgresResource, PostgresServer
from test_infer import failing_rows
from written_schema import load

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidSettingError

#: 48 flights of 16 carriers, in months 1 to 12, at 20 gates named 3 to 4 UTF-8 bytes long
#: ('é0' to 'é19'): no constraint, as `CREATE TABLE AS` makes.
FLIGHTS = """
CREATE TABLE flights AS
SELECT
    i AS flight_id,
    i % 12 + 1 AS month,
    'C' || (i % 16) AS carrier,
    'é' || (i % 20) AS gate,
    CAST(i AS DOUBLE PRECISION) * 1.5 AS distance
FROM {numbers}
"""
DUCKDB_NUMBERS = "range(48) AS numbers(i)"
POSTGRES_NUMBERS = "generate_series(0, 47) AS numbers(i)"


def learned(source: str) -> list[str]:
    """The lines of `source` marked as learned from the data, stripped."""
    return [line.strip() for line in source.splitlines() if "# learned from the data" in line]


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute(FLIGHTS.format(numbers=DUCKDB_NUMBERS))
    return path


def test_an_adopted_schema_has_the_proposals_as_rules_marked_with_the_day(warehouse: Path) -> None:
    with duckdb.connect(str(warehouse)) as connection:
        proposed = dd.infer_schema("flights", connection=connection, profile=True)
        adopted = dd.infer_schema("flights", connection=connection, adopt=True, is_in_limit=16)
    schema = load(adopted, "Flights")

    day = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    marks = learned(adopted)
    assert marks and all(line.endswith(f"# learned from the data, {day}") for line in marks)
    assert f"flight_id = dy.Int64(\n        primary_key=True,  # learned from the data, {day}" in (
        adopted
    )
    # The range the rows hold, as the proposal states it.
    assert "# proposed (48 rows, values 1 to 12): min=1, max=12" in proposed
    assert f"min=1,  # learned from the data, {day}" in marks
    assert f"max=12,  # learned from the data, {day}" in marks
    columns = schema.columns()
    assert columns["flight_id"].primary_key and not columns["month"].nullable
    # Dataframely's lengths count bytes: 'é0' is 2 characters and 3 bytes long.
    assert "# proposed (48 rows, 3 to 4 bytes long): min_length=3, max_length=4" in proposed
    rules = {rule.name for rule in dd.wiring.rules(schema)}
    assert {
        *("month|min", "month|max", "carrier|check__is_in", "distance|inf", "distance|nan"),
        *("gate|min_length", "gate|max_length"),
    } <= rules
    # Without the opt-in, the same profile leaves the declarations as the table declares them.
    assert not learned(proposed)
    assert {rule.name for rule in dd.wiring.rules(load(proposed, "Flights"))} < rules


def test_the_adopted_rules_pass_on_their_table_and_fail_on_a_changed_row(warehouse: Path) -> None:
    with duckdb.connect(str(warehouse)) as connection:
        schema = load(
            dd.infer_schema("flights", connection=connection, adopt=True, is_in_limit=16),
            "Flights",
        )
    source = dd.sources.DuckDBTableSource(table="flights")
    resources = {"duckdb": DuckDBResource(database=str(warehouse))}

    before = failing_rows(schema, source, resources)
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(
            "UPDATE flights SET month = 13, carrier = 'ZZ', gate = 'é100' WHERE flight_id = 5"
        )
    after = failing_rows(schema, source, resources)

    assert set(before.values()) == {0}, before
    assert after.pop("dy_rule__month__max") == 1
    assert after.pop("dy_rule__carrier__check__is_in") == 1
    assert after.pop("dy_rule__gate__max_length") == 1
    assert set(after.values()) == {0}, after


def test_the_is_in_limit_is_a_setting(warehouse: Path) -> None:
    with duckdb.connect(str(warehouse)) as connection:
        default = dd.infer_schema("flights", connection=connection, profile=True)
        sixteen = dd.infer_schema("flights", connection=connection, profile=True, is_in_limit=16)
        for wrong in (0, True, 2.5):
            with pytest.raises(InvalidSettingError, match=r"is_in_limit=.*at least 1"):
                dd.infer_schema("flights", connection=connection, is_in_limit=wrong)

    assert "is_in" not in default  # 16 carriers, past the default of 10
    assert '# proposed (48 rows, 16 values): check={"is_in": lambda col: col.is_in(["C0",' in (
        sixteen
    )


def test_the_cli_adopts_with_a_limit_and_refuses_a_wrong_one(
    warehouse: Path, tmp_path: Path
) -> None:
    target = tmp_path / "flights.py"
    options = ["--duckdb", str(warehouse), "--adopt", "--is-in-limit", "16", "-o", str(target)]
    written = dagster_dataframely("infer", "flights", *options, cwd=tmp_path)
    wrong = dagster_dataframely(
        "infer", "flights", "--duckdb", str(warehouse), "--is-in-limit", "0", cwd=tmp_path
    )

    assert written.returncode == 0, written.stderr
    rules = {rule.name for rule in dd.wiring.rules(load(target.read_text(), "Flights"))}
    assert {"month|min", "month|max", "carrier|check__is_in"} <= rules
    assert wrong.returncode == 1
    assert "is_in_limit=0" in wrong.stderr and "--is-in-limit" in wrong.stderr


def test_a_postgres_table_made_by_create_table_as_gets_rules(postgres: PostgresServer) -> None:
    with postgres.connect() as connection:
        connection.execute("DROP TABLE IF EXISTS flights")
        connection.execute(FLIGHTS.format(numbers=POSTGRES_NUMBERS))
        adopted = dd.infer_schema(
            "flights", connection=connection, dialect="postgres", adopt=True, is_in_limit=16
        )
    schema = load(adopted, "Flights")
    source = dd.sources.SQLTableSource(
        resource_key="warehouse", dialect="postgres", table="flights"
    )
    resources = {"warehouse": PostgresResource(conninfo=postgres.conninfo)}

    before = failing_rows(schema, source, resources)
    with postgres.connect() as connection:
        connection.execute("UPDATE flights SET month = 0, gate = 'e1' WHERE flight_id = 7")
    after = failing_rows(schema, source, resources)

    assert "dy_rule__gate__min_length" in before and set(before.values()) == {0}, before
    assert after.pop("dy_rule__month__min") == 1
    assert after.pop("dy_rule__gate__min_length") == 1  # 2 bytes, under the 3 learned
    assert set(after.values()) == {0}, after
