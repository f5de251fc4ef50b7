"""`dd.infer_schema` on PostgreSQL as a demanding user's database is: a case-insensitive
(nondeterministic) collation, an enum type and a session in another time zone. Each gives
the schema the source reads, and profile proposals that hold under polars' comparisons:
adopted, their checks pass, pushed down."""

from __future__ import annotations

import dagster as dg
import dataframely as dy
import pytest
from postgres import PostgresResource, PostgresServer
from test_infer import dtypes
from written_schema import load

import dagster_dataframely as dd
from dagster_dataframely.errors import TableNotFoundError

TABLE = """
CREATE COLLATION IF NOT EXISTS infer_ci (provider = icu, locale = 'und-u-ks-level2',
    deterministic = false);
DROP TABLE IF EXISTS tickets;
DROP TYPE IF EXISTS urgency;
CREATE TYPE urgency AS ENUM ('low', 'high', 'urgent');
CREATE TABLE tickets (
    code text COLLATE infer_ci NOT NULL,
    urgency urgency,
    opened timestamptz NOT NULL
);
INSERT INTO tickets VALUES
    ('a', 'low', '2024-03-31 01:30:00+00'),
    ('A', 'high', '2024-03-31 02:30:00+00'),
    ('b', NULL, '2024-03-31 03:30:00+00');
SET TIME ZONE 'America/New_York';
"""


def test_a_collated_column_an_enum_and_a_local_session(postgres: PostgresServer) -> None:
    with postgres.connect() as connection:
        connection.execute(TABLE)
        source = dd.infer_schema("tickets", connection=connection, dialect="postgres", profile=True)
        zone = connection.execute("SHOW TimeZone").fetchone()

    assert zone == ("America/New_York",)  # the user's session, restored after the queries
    schema = load(source, "Tickets")
    assert dtypes(schema) == {
        "code": dy.String().dtype,
        "urgency": dy.String().dtype,  # psycopg reads an enum's values as text
        "opened": dy.Datetime(time_zone="UTC").dtype,
    }
    # The enum's values are declared, as NOT NULL is; the rows' subset is not proposed.
    assert 'check={"enum": lambda col: col.is_in(["low", "high", "urgent"])}' in source
    assert '["high", "low"]' not in source and "no Dataframely column type" not in source
    # PostgreSQL counts 'a' and 'A' as one value of the case-insensitive column; polars (and
    # the checks) as two: the profile counts bytewise, as the checks do.
    proposals = [line.strip() for line in source.splitlines() if "# proposed" in line]
    assert proposals[:2] == [
        "# proposed (3 rows, unique, never null): primary_key=True",
        '# proposed (3 rows, 3 values): check={"is_in": lambda col: col.is_in(["A", "a", "b"])}',
    ]

    class Adopted(schema):  # the proposals of `code`, adopted
        code = dy.String(primary_key=True, check={"is_in": lambda c: c.is_in(["A", "a", "b"])})

    evaluations = _checked(Adopted, postgres)
    assert {e.check_name for e in evaluations} >= {
        "dy_schema__columns",
        "dy_rule__primary_key",
        "dy_rule__code__check__is_in",
        "dy_rule__urgency__check__enum",
    }
    assert all(e.passed for e in evaluations), [e.check_name for e in evaluations if not e.passed]
    engines = {e.metadata["dy_engine"].value for e in evaluations if "dy_engine" in e.metadata}
    assert engines == {"postgres"}


def _checked(
    schema: type[dy.Schema], postgres: PostgresServer, table: str = "tickets"
) -> list[dg.AssetCheckEvaluation]:
    spec = dg.AssetSpec(table)
    source = dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres")
    result = dg.materialize(
        [spec, dd.schema_checks(schema, asset=spec, source=source)],
        resources={"warehouse": PostgresResource(conninfo=postgres.conninfo)},
        selection=dg.AssetSelection.all_asset_checks(),
        instance=dg.DagsterInstance.ephemeral(),
    )
    return result.get_asset_check_evaluations()


def test_a_missing_postgres_table_names_the_closest(postgres: PostgresServer) -> None:
    with postgres.connect() as connection:
        connection.execute(TABLE)
        with pytest.raises(TableNotFoundError, match=r'table "ticket".*Did you mean tickets\?'):
            dd.infer_schema("ticket", connection=connection, dialect="postgres")
        # The refused query leaves the user's connection usable.
        assert connection.execute("SELECT count(*) FROM tickets").fetchone() == (3,)


ARRAYS = """
DROP TABLE IF EXISTS tagged;
CREATE TABLE tagged (id int PRIMARY KEY, tags integer[] NOT NULL, labels text[]);
INSERT INTO tagged VALUES (1, '{1,2}', '{a,b}'), (2, '{}', NULL), (3, '{3,NULL}', '{c}');
"""


def test_an_array_column_is_inferred_and_read_as_a_list(postgres: PostgresServer) -> None:
    """psycopg describes `integer[]` by its element's type; it is a list, not an integer."""
    with postgres.connect() as connection:
        connection.execute(ARRAYS)
        source = dd.infer_schema("tagged", connection=connection, dialect="postgres")
        profiled = dd.infer_schema(
            "tagged", connection=connection, dialect="postgres", profile=True
        )

    schema = load(source, "Tagged")
    assert dtypes(schema) == {
        "id": dy.Int32().dtype,
        "tags": dy.List(dy.Int32()).dtype,
        "labels": dy.List(dy.String()).dtype,
    }
    assert dtypes(load(profiled, "Tagged")) == dtypes(schema)  # no MIN() of an array
    evaluations = {e.check_name: e for e in _checked(schema, postgres, "tagged")}
    assert all(e.passed for e in evaluations.values()), evaluations
    assert evaluations["dy_rule__tags__nullability"].metadata["dy_row_count"].value == 3
