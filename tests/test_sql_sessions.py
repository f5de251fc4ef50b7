"""The session a check pins: what it sets on the user's connection and what it puts back.

PostgreSQL's pinning runs against a real server in test_source_sessions.py, and Snowflake's
reading of the session runs on fakesnow in test_sql_snowflake.py. fakesnow takes no
`ALTER SESSION` but `QUOTED_IDENTIFIERS_IGNORE_CASE = FALSE`, so the statements Snowflake is
sent for a session that differs in every pinned parameter are held in a golden file
(regenerate with DD_REGENERATE_GOLDEN=1 and read the diff).
"""

from __future__ import annotations

from collections.abc import Mapping

import sqlglot
from sqlglot import exp
from test_sql_golden import GOLDEN, REGENERATE

from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely._engine.sql.sessions import Current, Value, pinning

SNOWFLAKE = DIALECTS["snowflake"]
#: `SHOW PARAMETERS IN SESSION` of a user whose session, user and account set every pinned
#: parameter otherwise (its columns as Snowflake names them; `level` is where it was set).
USER_SESSION = [
    {"key": "ABORT_DETACHED_QUERY", "value": "false", "level": "", "type": "BOOLEAN"},
    {"key": "DATE_INPUT_FORMAT", "value": "DD/MM/YYYY", "level": "USER", "type": "STRING"},
    {"key": "QUOTED_IDENTIFIERS_IGNORE_CASE", "value": "true", "level": "SESSION"},
    {"key": "ROWS_PER_RESULTSET", "value": "1000", "level": "SESSION", "type": "NUMBER"},
    {"key": "TIMESTAMP_INPUT_FORMAT", "value": "AUTO", "level": "", "type": "STRING"},
    {"key": "TIMESTAMP_TYPE_MAPPING", "value": "TIMESTAMP_LTZ", "level": "ACCOUNT"},
    {"key": "TIMEZONE", "value": "America/New_York", "level": "SESSION", "type": "STRING"},
]


def _statements(settings: Mapping[str, Value | None]) -> list[str]:
    return [statement.sql(dialect="snowflake") for statement in SNOWFLAKE.set_session(settings)]


def test_snowflake_pins_what_differs_and_puts_back_what_the_session_had() -> None:
    plan = pinning(SNOWFLAKE.session_settings, SNOWFLAKE.current_session(USER_SESSION))
    pinned, restored = _statements(plan.pin), _statements(plan.restore)
    text = "\n".join(["-- pinned for the check", *pinned, "-- restored after it", *restored])
    golden = GOLDEN / "sessions" / "snowflake.sql"
    if REGENERATE:
        golden.write_text(text + "\n")
    assert golden.read_text() == text + "\n", f"regenerate with DD_REGENERATE_GOLDEN=1: {golden}"
    # Already AUTO: not touched. Set in the session: set back. Inherited: unset, to inherit.
    assert "TIMESTAMP_INPUT_FORMAT" not in text
    assert restored == [
        "ALTER SESSION SET ROWS_PER_RESULTSET = 1000",
        "ALTER SESSION SET QUOTED_IDENTIFIERS_IGNORE_CASE = TRUE",
        "ALTER SESSION UNSET DATE_INPUT_FORMAT",
        "ALTER SESSION UNSET TIMESTAMP_TYPE_MAPPING",
        "ALTER SESSION SET TIMEZONE = 'America/New_York'",
    ]


def test_each_snowflake_session_statement_parses_back_as_snowflakes() -> None:
    lines = (GOLDEN / "sessions" / "snowflake.sql").read_text().splitlines()
    statements = [line for line in lines if not line.startswith("--")]
    assert len(statements) == 10
    for statement in statements:
        parsed = sqlglot.parse_one(statement, read="snowflake")
        assert parsed.sql(dialect="snowflake") == statement
        assert isinstance(parsed, (exp.Alter, exp.Command))


def test_a_session_that_has_the_pinned_values_is_sent_nothing() -> None:
    current = {
        name: Current(str(value).lower() if isinstance(value, bool) else str(value), own=False)
        for name, value in SNOWFLAKE.session_settings.items()
    }
    plan = pinning(SNOWFLAKE.session_settings, current)
    assert plan.pin == {} and plan.restore == {}


def test_a_setting_the_server_does_not_report_is_not_pinned() -> None:
    """A server without the parameter (an older release, fakesnow) has nothing it changes."""
    plan = pinning(SNOWFLAKE.session_settings, {"TIMEZONE": Current("Europe/Berlin")})
    assert plan.pin == {"TIMEZONE": "Etc/UTC"}
    assert plan.restore == {"TIMEZONE": "Europe/Berlin"}


def test_postgres_restores_its_settings_in_reverse_order_by_setting_them() -> None:
    postgres = DIALECTS["postgres"]
    current = postgres.current_session(
        [{"DateStyle": "SQL, DMY", "TimeZone": "UTC", "standard_conforming_strings": "off"}]
    )
    plan = pinning(postgres.session_settings, current)
    assert plan.pin == {"DateStyle": "ISO, MDY", "standard_conforming_strings": "on"}
    assert list(plan.restore.items()) == [
        ("standard_conforming_strings", "off"),
        ("DateStyle", "SQL, DMY"),
    ]
