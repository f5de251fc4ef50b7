"""Property: the database's column types and collations never change a pushed-down count.

The data and the DATABASE side vary: DuckDB tables whose text columns are `COLLATE NOCASE`
(or `NOCASE.NOACCENT`), a connection with `SET default_collation='nocase'`, `ENUM` columns,
`TIMESTAMP_MS` and `TIMESTAMP_NS` columns with bounds finer than their unit; a real PostgreSQL
server with a nondeterministic ICU collation, `char(n)`, `varchar`, `numeric(p,s)` and `real`.
For each, the counts of the SQL backend (its catalog facts read as a source reads them) equal
Dataframely's `Schema.filter` / `Collection.filter` on the rows the database holds, and a rule
that cannot be proven exact says why in its engine (`polars (padded character(n))`).
"""

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import psycopg
import pytest
from dagster_duckdb import DuckDBResource
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from postgres import PostgresResource, PostgresServer
from sqlglot import exp
from support import grouping_keys
from test_collection_pushdown import _failed, _materialize, _outcomes, dataframely_counts
from test_read_dtypes_pushdown import _casts, _run
from test_sql_golden import GOLDEN, REGENERATE

import dagster_dataframely as dd
from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.evaluate import Evaluation
from dagster_dataframely._engine.sql.backend import SQLTable, compile_rules
from dagster_dataframely._engine.sql.catalog import read_facts
from dagster_dataframely._engine.sql.columns import TableFacts
from dagster_dataframely._engine.sql.dialects import DIALECTS
from dagster_dataframely.sources._duckdb_pushdown import pushdown, relation
from dagster_dataframely.sources._sql import _Database
from dagster_dataframely.sources._sql_query import relation as sql_relation

#: Strings that differ only in case or accents: equal under NOCASE / NOACCENT / ICU level 2.
TEXT = st.sampled_from(["a", "A", "b", "B", "é", "É", "e", "ab", "aB"])
BOUND = dt.datetime(2020, 1, 1, 0, 0, 0, 1500)  # finer than a millisecond
INSTANTS = st.sampled_from(
    [
        dt.datetime(2020, 1, 1, 0, 0, 0, 1000),
        dt.datetime(2020, 1, 1, 0, 0, 0, 1499),
        dt.datetime(2020, 1, 1, 0, 0, 0, 1500),
        dt.datetime(2020, 1, 1, 0, 0, 0, 2000),
        dt.datetime(2019, 12, 31, 23, 59, 59, 999999),
    ]
)


class Labelled(dy.Schema):
    """A text key and a text column compared by equality and `is_in`."""

    key = dy.String(primary_key=True)
    label = dy.String(nullable=True)

    @dy.rule()
    def label_listed(cls) -> pl.Expr:
        return pl.col("label").is_in(["a", "B", "é"])

    @dy.rule()
    def label_is_not_lower_a(cls) -> pl.Expr:
        return pl.col("label") != "a"


class Collated(Labelled):
    ms = dy.Datetime(nullable=True, time_unit="ms", min=BOUND)
    ns = dy.Datetime(nullable=True, time_unit="ns", max_exclusive=BOUND)
    kind = dy.Categorical(nullable=True)

    @dy.rule()
    def label_from_b(cls) -> pl.Expr:
        """A string bound: `>=` in byte order."""
        return pl.col("label") >= "b"

    @dy.rule()
    def kind_is_a(cls) -> pl.Expr:
        return pl.col("kind") == "a"


#: How the DuckDB side declares the text columns: a column collation, or a session default.
DUCKDB_SETUPS = {
    "nocase column": ("COLLATE NOCASE", None),
    "nocase.noaccent column": ("COLLATE NOCASE.NOACCENT", None),
    "default_collation": ("", "nocase"),
    "binary": ("", None),
}


def _dataframely(schema: type[dy.Schema], frame: pl.DataFrame) -> dict[str, int]:
    """Rule name -> failed rows, as `Schema.filter` counts them on `frame`."""
    return {rule: count for rule, count in schema.filter(frame).failure.counts().items() if count}


def _pushed(evaluation: Evaluation) -> dict[str, int]:
    return {rule: count for rule, count in evaluation.failed.items() if count}


def _duckdb_table(
    connection: duckdb.DuckDBPyConnection, rows: list[tuple[object, ...]], setup: str
) -> None:
    collate, default = DUCKDB_SETUPS[setup]
    connection.execute(f"SET default_collation='{default or ''}'")
    connection.execute("DROP TABLE IF EXISTS checked")
    connection.execute(
        f"CREATE TABLE checked (key VARCHAR {collate}, label VARCHAR {collate}, "
        "ms TIMESTAMP_MS, ns TIMESTAMP_NS, kind ENUM('b', 'a'))"
    )
    if rows:
        connection.executemany("INSERT INTO checked VALUES (?, ?, ?, ?, ?)", rows)


DUCKDB_ROW = st.tuples(
    TEXT,
    st.none() | TEXT,
    st.none() | INSTANTS,
    st.none() | INSTANTS,
    st.none() | st.sampled_from("ab"),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(rows=[("a", "A", None, None, None), ("A", "a", None, None, None)], setup="nocase column")
@given(rows=st.lists(DUCKDB_ROW, max_size=8), setup=st.sampled_from(sorted(DUCKDB_SETUPS)))
def test_duckdb_collations_and_time_units_count_what_dataframely_counts(
    rows: list[tuple[object, ...]], setup: str
) -> None:
    with duckdb.connect() as connection:
        _duckdb_table(connection, rows, setup)
        frame = connection.sql("SELECT * FROM checked").pl()
        select = relation(connection, "checked", None, None)
        # The key grouped in SQL, as a server's is: its collation is what is proven here.
        table = grouping_keys(pushdown(connection, select, lambda _: None, resource_key="db"))
        evaluation = table.evaluate(
            frame.lazy(), rules(Collated), max_failure_samples=2, identify=["key"]
        )

    assert _pushed(evaluation) == _dataframely(Collated, frame)
    # Proven, not avoided: the key, `is_in`, string and time bounds run in DuckDB.
    for rule in ("primary_key", "label_listed", "label_from_b", "ms|min", "ns|max_exclusive"):
        assert evaluation.engines[rule] == "duckdb"
    assert evaluation.engines["kind_is_a"].startswith("polars")


def test_duckdb_reads_a_collated_column_under_its_binary_collation() -> None:
    with duckdb.connect() as connection:
        _duckdb_table(connection, [("a", "A", None, None, None)], "nocase column")
        select = relation(connection, "checked", None, None)
        facts = read_facts(select, DIALECTS["duckdb"], lambda sql: connection.sql(sql).pl())

    assert str(facts.columns["key"].collation).lower() == "nocase"
    assert facts.columns["ms"].collation is None
    assert list(facts.columns) == ["key", "label", "ms", "ns", "kind"]  # the table's order
    collated = facts.collated(select, "binary").sql("duckdb")
    assert '"key" COLLATE "binary" AS "key"' in collated
    assert '"ms" COLLATE' not in collated


# PostgreSQL ---------------------------------------------------------------------------


class Typed(Labelled):
    padded = dy.String(nullable=True, max_length=3)
    amount = dy.Decimal(6, 2, nullable=True, min=0)
    ratio = dy.Float32(nullable=True, max=0.5)

    @dy.rule()
    def padded_listed(cls) -> pl.Expr:
        return pl.col("padded").is_in(["ab"])


#: The collation of the text columns in PostgreSQL.
POSTGRES_COLLATIONS = ["ci", "C", "default", "und-x-icu"]
POSTGRES_ROW = st.tuples(
    TEXT,
    st.none() | TEXT,
    st.none() | st.sampled_from(["ab", "ab ", "a", "AB"]),
    st.none() | st.sampled_from(["-1.50", "0", "12.25"]),
    st.none() | st.sampled_from([0.25, 0.5, 0.75]),
)
SOURCE = dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres")


@pytest.fixture(scope="module")
def connection(postgres: PostgresServer) -> Iterator[psycopg.Connection]:
    with postgres.connect() as connection:
        connection.autocommit = True
        connection.prepare_threshold = None  # the table is recreated with other types
        connection.execute("DROP COLLATION IF EXISTS ci")
        connection.execute(
            "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', "
            "deterministic = false)"
        )
        yield connection


def _in_postgres(
    connection: psycopg.Connection, rows: list[tuple[object, ...]], collation: str
) -> _Database:
    collate = f'COLLATE "{collation}"'
    connection.execute("DROP TABLE IF EXISTS typed")
    connection.execute(
        f"CREATE TABLE typed (key text {collate}, label varchar(4) {collate}, "
        f"padded char(3) {collate}, amount numeric(6, 2), ratio real)"
    )
    with connection.cursor().copy("COPY typed FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    return _Database(connection, SOURCE, dg.AssetKey("typed"), log=lambda _: None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(rows=[("a", "A", "ab", None, None), ("A", "a", "ab ", None, None)], collation="ci")
@given(
    rows=st.lists(POSTGRES_ROW, max_size=8, unique_by=lambda row: row[0]),
    collation=st.sampled_from(POSTGRES_COLLATIONS),
)
def test_postgres_collations_and_padded_types_count_what_dataframely_counts(
    connection: psycopg.Connection, rows: list[tuple[object, ...]], collation: str
) -> None:
    database = _in_postgres(connection, rows, collation)
    select = sql_relation(database.dtypes, "typed", "postgres", None, None)
    dialect = DIALECTS["postgres"]
    facts = read_facts(select, dialect, database.run)
    table = SQLTable.of(select, dialect="postgres", run=database.run, facts=facts)
    scanned = database.scan(select)
    evaluation = table.evaluate(scanned, rules(Typed), max_failure_samples=2, identify=["key"])

    assert _pushed(evaluation) == _dataframely(Typed, scanned.collect())
    for rule in ("primary_key", "label_listed", "label_is_not_lower_a"):
        assert evaluation.engines[rule] == "postgres"
    assert evaluation.engines["padded_listed"] == "polars (padded character(n))"
    assert evaluation.engines["padded|max_length"] == "polars (padded character(n))"


def test_postgres_binary_collation_is_deterministic_byte_order(
    connection: psycopg.Connection,
) -> None:
    """`COLLATE "C"`, what a collated column is read under, compares and groups by bytes."""
    binary = DIALECTS["postgres"].binary_collation
    row = connection.execute(
        "SELECT collisdeterministic, collprovider FROM pg_collation WHERE collname = %s",
        [binary],
    ).fetchone()
    assert row == (True, "c")
    ordered = connection.execute(
        "SELECT v FROM (VALUES ('é'), ('z'), ('Z'), ('a')) AS t(v) ORDER BY v COLLATE \"C\""
    ).fetchall()
    assert [v for (v,) in ordered] == sorted(["é", "z", "Z", "a"], key=str.encode)


# Collection filters ----------------------------------------------------------------------


class Customers(dy.Schema):
    customer = dy.String(primary_key=True)


class Accounts(dy.Schema):
    customer = dy.String(primary_key=True)
    balance = dy.Int64()


class Shop(dy.Collection):
    """(No `from __future__ import annotations` here: Dataframely reads the members'
    annotations.)"""

    customers: dy.LazyFrame[Customers]
    accounts: dy.LazyFrame[Accounts]

    @dy.filter()
    def customer_exists(self) -> pl.LazyFrame:
        return self.accounts.join(self.customers, on="customer", how="semi")


MEMBERS = {"customers": "customers", "accounts": "accounts"}


@pytest.mark.parametrize("setup", ["nocase column", "default_collation"])
def test_a_filter_join_over_nocase_keys_counts_what_collection_filter_removes(
    tmp_path: Path, setup: str
) -> None:
    collate, default = DUCKDB_SETUPS[setup]
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute(f"CREATE TABLE customers (customer VARCHAR {collate})")
        connection.execute(f"CREATE TABLE accounts (customer VARCHAR {collate}, balance BIGINT)")
        connection.execute("INSERT INTO customers VALUES ('ann'), ('Bob'), ('cy')")
        connection.execute(
            "INSERT INTO accounts VALUES ('ann', 1), ('Ann', 2), ('bob', 3), ('Bob', 4), ('CY', 5)"
        )
        frames = {member: connection.sql(f"SELECT * FROM {member}").pl() for member in MEMBERS}
    checks = dd.collection_checks(
        Shop, members=MEMBERS, sources={m: dd.sources.DuckDBTableSource() for m in MEMBERS}
    )
    config = {"default_collation": default} if default else {}
    resource = DuckDBResource(database=str(path), connection_config=config)
    result, _ = _materialize(checks, MEMBERS, {"duckdb": resource})

    outcomes = _outcomes(result)
    assert _failed(outcomes) == dataframely_counts(Shop, frames, MEMBERS)
    # 'Ann', 'bob' and 'CY' have no customer; only bytewise equal keys join.
    assert _failed(outcomes)[("accounts", "dy_filter__customer_exists")] == 3
    # The filter joins the keys in DuckDB, and each member's own key is grouped there, all
    # under the binary collation.
    assert {engine for _, engine in outcomes.values()} == {"duckdb"}


# Dialects without a binary collation -------------------------------------------------------


@pytest.mark.parametrize(("dialect", "collation"), [("snowflake", "en-ci"), ("bigquery", "und:ci")])
def test_a_collated_column_falls_back_where_the_dialect_has_no_binary_collation(
    dialect: str, collation: str
) -> None:
    catalog = pl.DataFrame(
        [("key", "TEXT", collation), ("label", "TEXT", None), ("ratio", "FLOAT", None)],
        schema=["COLUMN_NAME", "DATA_TYPE", "COLLATION_NAME"],
        orient="row",
    )
    facts = DIALECTS[dialect].column_facts(catalog)

    class Plain(dy.Schema):
        key = dy.String(primary_key=True, min_length=1)
        label = dy.String(min_length=1)

    dtypes = {"key": pl.String(), "label": pl.String()}
    compiled = compile_rules(rules(Plain), dtypes, DIALECTS[dialect], facts=TableFacts(facts))
    # Every rule that compares the collated column's values falls back, with the collation as
    # its reason; a null test means the same under every collation and stays in SQL.
    reason = f"collation {collation}"
    assert compiled.fallbacks == dict.fromkeys(["key|min_length", "primary_key"], reason)
    assert {"key|nullability", "label|nullability", "label|min_length"} == set(compiled.conditions)


@pytest.mark.parametrize("dialect", ["bigquery", "snowflake"])
def test_catalog_query_equals_its_golden_file(dialect: str) -> None:
    select = sql_relation(lambda _: {}, "warehouse.sales.orders", dialect, None, None)
    query = DIALECTS[dialect].catalog_query(select.find(exp.Table)).sql(dialect, pretty=True)
    golden = GOLDEN / "catalog" / f"{dialect}.sql"
    if REGENERATE:
        golden.write_text(query + "\n")
    assert query + "\n" == golden.read_text()


# End to end: a real run's counts, engines and step log ---------------------------------------


class Accounts(dy.Schema):
    holder = dy.String(primary_key=True)
    code = dy.String(nullable=True, min_length=3)

    @dy.rule()
    def code_known(cls) -> pl.Expr:
        return pl.col("code").is_in(["ab", "xyz"])


def test_a_postgres_run_counts_ci_keys_bytewise_and_says_why_char_n_left_the_database(
    connection: psycopg.Connection, postgres: PostgresServer
) -> None:
    connection.execute("DROP TABLE IF EXISTS accounts")
    connection.execute('CREATE TABLE accounts (holder text COLLATE "ci", code char(3))')
    connection.execute("INSERT INTO accounts VALUES ('ann', 'ab'), ('Ann', 'xyz'), ('bo', 'ab ')")
    frame = pl.read_database("SELECT * FROM accounts", connection)
    checks = dd.schema_checks(
        Accounts,
        asset="accounts",
        source=dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres"),
    )
    resources = {"warehouse": PostgresResource(conninfo=postgres.conninfo)}
    result, sent = _materialize(checks, {"accounts": "accounts"}, resources)

    outcomes = _outcomes(result)
    expected = {
        ("accounts", "dy_rule__" + rule.replace("|", "__")): count
        for rule, count in _dataframely(Accounts, frame).items()
    }
    assert _failed(outcomes) == expected
    # Both codes stored as "ab " fail: polars sees the padding that PostgreSQL ignores.
    assert _failed(outcomes)[("accounts", "dy_rule__code_known")] == 2
    engines = {check: engine for (_, check), (_, engine) in outcomes.items()}
    assert engines["dy_rule__primary_key"] == "postgres"  # 'ann' and 'Ann' differ in bytes
    assert engines["dy_rule__code_known"] == "polars (padded character(n))"
    assert engines["dy_rule__code__min_length"] == "polars (padded character(n))"
    assert "Rule 'code_known' runs in polars, not postgres: padded character(n)." in sent
    assert any("pg_attribute" in line for line in sent)  # the one catalog query


class Statuses(dy.Schema):
    row = dy.Int64(primary_key=True)
    status = dy.Enum(["open", "paid"], nullable=True)


def test_an_enum_cast_of_a_nocase_column_keeps_only_exact_categories(tmp_path: Path) -> None:
    """`read_dtypes="cast"`: the cast to `Enum` is an `IN` in DuckDB, which NOCASE would
    make take `'OPEN'` for `'open'`; polars refuses it, and so does the pushed cast."""
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute('CREATE TABLE drifted ("row" BIGINT, status VARCHAR COLLATE NOCASE)')
        connection.execute("INSERT INTO drifted VALUES (1, 'open'), (2, 'OPEN'), (3, 'Paid')")
    resources = {"duckdb": DuckDBResource(database=str(path))}

    _, pushed = _run(Statuses, dd.sources.DuckDBTableSource(), resources)
    _, streamed = _run(Statuses, dd.sources.DuckDBTableSource(pushdown=False), resources)

    assert _casts(pushed)["status"] == ("String", 2, "duckdb")
    assert _casts(streamed)["status"] == ("String", 2, "polars")


class Emails(dy.Schema):
    email = dy.String(primary_key=True)

    @dy.rule()
    def email_listed(cls) -> pl.Expr:
        return pl.col("email").is_in(["ann@x.org"])


def test_a_citext_column_is_counted_in_polars_which_tells_case_apart(
    connection: psycopg.Connection,
) -> None:
    connection.execute("CREATE EXTENSION IF NOT EXISTS citext")
    connection.execute("DROP TABLE IF EXISTS emails")
    connection.execute("CREATE TABLE emails (email citext)")
    connection.execute("INSERT INTO emails VALUES ('ann@x.org'), ('ANN@x.org')")
    database = _Database(connection, SOURCE, dg.AssetKey("emails"), log=lambda _: None)
    select = sql_relation(database.dtypes, "emails", "postgres", None, None)
    facts = read_facts(select, DIALECTS["postgres"], database.run)
    table = SQLTable.of(select, dialect="postgres", run=database.run, facts=facts)
    scanned = database.scan(select)

    evaluation = table.evaluate(scanned, rules(Emails), max_failure_samples=2)

    assert _pushed(evaluation) == _dataframely(Emails, scanned.collect()) == {"email_listed": 1}
    reason = "polars (citext compares case-insensitively)"
    assert evaluation.engines == {
        "email|nullability": "postgres",
        "primary_key": reason,
        "email_listed": reason,
    }


def test_without_the_catalog_every_rule_comparing_text_falls_back() -> None:
    """A catalog that could not be read leaves the collation of every text column unknown."""
    dtypes = {"email": pl.String()}
    compiled = compile_rules(
        rules(Emails), dtypes, DIALECTS["postgres"], facts=TableFacts(read=False)
    )
    assert compiled.fallbacks == dict.fromkeys(["primary_key", "email_listed"], "collation unknown")
    assert list(compiled.conditions) == ["email|nullability"]
