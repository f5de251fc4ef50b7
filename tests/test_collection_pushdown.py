"""Collection filters run in the database their members share, with Dataframely's counts.

Members stored as tables of one DuckDB file (one `DuckDBTableSource` resource) or one
PostgreSQL database (`SQLTableSource`) have their rules and the filters on them evaluated
there: each filter check says `dy_engine: duckdb` (or `postgres`) and counts exactly what
`Collection.filter(..., cast=False)` removes, null keys, duplicated keys and members missing
keys included. A filter with no SQL form, or reading members of another database, runs in
polars (`dy_engine: polars`) with the same counts.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.

from pathlib import Path
from typing import Annotated, Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledger import MEMBERS, POLARS_FILTERS, Clients, Invoices, Items, Ledger, Payments
from ledger import ledger_frames as frames_of_ledger
from postgres import USER, PostgresResource, PostgresServer
from shop import MEMBERS as SHOP_MEMBERS
from shop import Customers, OrderLines, Orders, Shop, shop_collection, shop_frames
from support import logs

import dagster_dataframely as dd
from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._engine.settings import CheckSettings
from dagster_dataframely._engine.sql import filters as sql_filters
from dagster_dataframely._engine.sql import repeated as sql_repeated
from dagster_dataframely._sidecar.collection_checks import collection_run, filter_rules
from dagster_dataframely._sidecar.collection_evaluate import collection_results
from dagster_dataframely.sources._duckdb_pushdown import pushdown, relation

#: Every check of the run, on external assets too (a run's default selection leaves them out).
EVERYTHING = dg.AssetSelection.all() | dg.AssetSelection.all_asset_checks()


def dataframely_counts(
    collection: type[dy.Collection], frames: dict[str, pl.DataFrame], members: dict[str, str]
) -> dict[tuple[str, str], int]:
    """(asset, check name) -> failed rows, for every rule `Collection.filter` failed a row of."""
    names = {rule.name: rule.check_name for rule in filter_rules(collection)}
    for schema in collection.member_schemas().values():
        names |= {rule.name: rule.check_name for rule in rules(schema)}
    failure = collection.filter(frames, cast=False).failure
    return {
        (members[member], names[rule]): count
        for member, info in failure.items()
        for rule, count in info.counts().items()
        if count
    }


def _outcomes(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], tuple[int, str]]:
    """(asset, check name) -> (failed count, dy_engine) of every rule and filter check."""
    return {
        (e.asset_key.to_user_string(), e.check_name): (
            e.metadata["dy_failed_count"].value,
            e.metadata["dy_engine"].value,
        )
        for e in result.get_asset_check_evaluations()
        if "dy_engine" in e.metadata
    }


def _failed(outcomes: dict[tuple[str, str], tuple[int, str]]) -> dict[tuple[str, str], int]:
    return {key: count for key, (count, _) in outcomes.items() if count}


def _filter_engines(outcomes: dict[tuple[str, str], tuple[int, str]]) -> dict[str, set[str]]:
    """filter check name -> the engines its checks ran in."""
    engines: dict[str, set[str]] = {}
    for (_, check), (_, engine) in outcomes.items():
        if check.startswith("dy_filter__"):
            engines.setdefault(check, set()).add(engine)
    return engines


def _duckdb_file(path: Path, frames: dict[str, pl.DataFrame], members: dict[str, str]) -> Path:
    """Each member's frame as a table of the DuckDB file `path`, named as its asset."""
    with duckdb.connect(str(path)) as connection:
        for member, frame in frames.items():
            connection.register("frame", frame.to_arrow())
            connection.execute(f'create table "{members[member]}" as select * from frame')
            connection.unregister("frame")
    return path


def _materialize(
    checks: dg.AssetChecksDefinition, members: dict[str, str], resources: dict[str, Any]
) -> tuple[dg.ExecuteInProcessResult, list[str]]:
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [*(dg.AssetSpec(key) for key in members.values()), checks],
        resources=resources,
        instance=instance,
        selection=EVERYTHING,
        raise_on_error=False,
    )
    return result, logs(instance, result)


def test_filters_on_members_of_one_duckdb_file_run_there_with_dataframelys_counts(
    tmp_path: Path,
) -> None:
    database = _duckdb_file(tmp_path / "shop.duckdb", shop_frames(), SHOP_MEMBERS)
    checks = dd.collection_checks(
        Shop,
        members=SHOP_MEMBERS,
        sources={member: dd.sources.DuckDBTableSource() for member in SHOP_MEMBERS},
    )
    result, sent = _materialize(
        checks, SHOP_MEMBERS, {"duckdb": DuckDBResource(database=str(database))}
    )

    outcomes = _outcomes(result)
    assert _failed(outcomes) == dataframely_counts(Shop, shop_frames(), SHOP_MEMBERS)
    # Every filter and every rule ran in DuckDB, the small members' keys too; the filters'
    # queries join the members there.
    assert {engine for _, engine in outcomes.values()} == {"duckdb"}
    assert any("Pushed down to DuckDB" in line and "EXISTS" in line for line in sent)
    # Each filter's kept keys are worked out once, for every member's queries to read.
    staged = [line for line in sent if "CREATE TEMPORARY TABLE" in line]
    assert len(staged) == len(filter_rules(Shop))
    # ... and dropped when the check ends, each by its name.
    dropped = {line.split()[-1] for line in sent if "DROP TABLE IF EXISTS" in line}
    assert dropped == {f"__dy_staged_{n}" for n in range(len(staged))}
    samples = {
        (e.asset_key.to_user_string(), e.check_name): e.metadata["dy_failed_sample"]
        for e in result.get_asset_check_evaluations()
        if e.check_name == "dy_filter__customer_exists"
    }
    # The removed lines of orders 4, 5, 6 and 7, shown by their keys.
    records = samples[("order_lines", "dy_filter__customer_exists")].value.records
    assert sorted(record.data["order_id"] for record in records) == [4, 5, 6, 7]


def test_every_plan_shape_runs_in_duckdb_and_an_aggregation_falls_back_to_polars(
    tmp_path: Path,
) -> None:
    frames = frames_of_ledger()
    database = _duckdb_file(tmp_path / "ledger.duckdb", frames, MEMBERS)
    checks = dd.collection_checks(
        Ledger, members=MEMBERS, sources={m: dd.sources.DuckDBTableSource() for m in MEMBERS}
    )
    result, _ = _materialize(checks, MEMBERS, {"duckdb": DuckDBResource(database=str(database))})

    outcomes = _outcomes(result)
    assert _failed(outcomes) == dataframely_counts(Ledger, frames, MEMBERS)
    assert _filter_engines(outcomes) == {
        f"dy_filter__{rule.name.replace('|', '__')}": (
            {POLARS_FILTERS[rule.name]} if rule.name in POLARS_FILTERS else {"duckdb"}
        )
        for rule in filter_rules(Ledger)
    }
    # The fallback counts rows too: it is no filter that passes for want of SQL.
    assert outcomes[("items", "dy_filter__few_items")] == (3, POLARS_FILTERS["few_items"])


#: The `dy_engine` of a filter reading a member whose valid rows are not in the database of the
#: others (another database, or a member rule that failed in polars).
ELSEWHERE = "polars (filter: reads a member whose valid rows this database does not hold)"


def test_filters_reading_members_of_another_database_run_in_polars(tmp_path: Path) -> None:
    frames = shop_frames()
    lines = {"lines": SHOP_MEMBERS["lines"]}
    rest = {m: a for m, a in SHOP_MEMBERS.items() if m != "lines"}
    shop = _duckdb_file(tmp_path / "shop.duckdb", {m: frames[m] for m in rest}, rest)
    other = _duckdb_file(tmp_path / "lines.duckdb", {"lines": frames["lines"]}, lines)
    checks = dd.collection_checks(
        Shop,
        members=SHOP_MEMBERS,
        sources={
            **{m: dd.sources.DuckDBTableSource() for m in rest},
            "lines": dd.sources.DuckDBTableSource(resource_key="lines_db"),
        },
    )
    result, _ = _materialize(
        checks,
        SHOP_MEMBERS,
        {
            "duckdb": DuckDBResource(database=str(shop)),
            "lines_db": DuckDBResource(database=str(other)),
        },
    )

    outcomes = _outcomes(result)
    assert _failed(outcomes) == dataframely_counts(Shop, frames, SHOP_MEMBERS)
    engines = {key: engine for key, (_, engine) in outcomes.items() if "filter" in key[1]}
    assert engines == {
        # Orders and customers share a database: a filter reading only them runs there.
        ("orders", "dy_filter__customer_exists"): "duckdb",
        # The others read order_lines, in another database: polars, saying so.
        ("orders", "dy_filter__order_has_lines"): ELSEWHERE,
        ("order_lines", "dy_filter__customer_exists"): ELSEWHERE,
        ("order_lines", "dy_filter__order_has_lines"): ELSEWHERE,
    }


_PG_TYPES = {pl.Int64: "bigint", pl.Float64: "double precision", pl.String: "text"}


def _ledger_in_postgres(postgres: PostgresServer) -> dict[str, str]:
    """The ledger's frames as tables of the server's database: member -> table."""
    tables = {member: f"ledger_{asset}" for member, asset in MEMBERS.items()}
    with postgres.connect() as connection:
        for member, frame in frames_of_ledger().items():
            connection.execute(f"drop table if exists {tables[member]}")
            columns = ", ".join(
                f"{name} {_PG_TYPES[dtype]}" for name, dtype in frame.schema.items()
            )
            connection.execute(f"create table {tables[member]} ({columns})")
            with connection.cursor().copy(f"copy {tables[member]} from stdin") as copy:
                for row in frame.iter_rows():
                    copy.write_row(row)
    return tables


def postgres_sources(tables: dict[str, str]) -> dict[str, dd.sources.SQLTableSource]:
    """member -> its table of the server's database, read through the resource `warehouse`."""
    return {
        member: dd.sources.SQLTableSource(resource_key="warehouse", dialect="postgres", table=t)
        for member, t in tables.items()
    }


def _ledger_checks_in_postgres(
    postgres: PostgresServer, tables: dict[str, str], user: str
) -> tuple[dict[tuple[str, str], tuple[int, str]], list[str]]:
    checks = dd.collection_checks(Ledger, members=MEMBERS, sources=postgres_sources(tables))
    result, sent = _materialize(
        checks, MEMBERS, {"warehouse": PostgresResource(conninfo=postgres.conninfo_for(user))}
    )
    outcomes = _outcomes(result)
    assert _failed(outcomes) == dataframely_counts(Ledger, frames_of_ledger(), MEMBERS)
    assert {
        check: engines
        for check, engines in _filter_engines(outcomes).items()
        if check != "dy_filter__few_items"
    } == {
        f"dy_filter__{rule.name.replace('|', '__')}": {"postgres"}
        for rule in filter_rules(Ledger)
        if rule.name not in POLARS_FILTERS
    }
    return outcomes, sent


def test_filters_on_members_of_one_postgres_database_run_there(postgres: PostgresServer) -> None:
    _, sent = _ledger_checks_in_postgres(postgres, _ledger_in_postgres(postgres), USER)

    staged = [line for line in sent if "CREATE TEMPORARY TABLE" in line]
    assert len(staged) == len(filter_rules(Ledger)) - len(POLARS_FILTERS)


def test_a_role_that_may_not_create_temporary_tables_counts_the_same(
    postgres: PostgresServer,
) -> None:
    tables = _ledger_in_postgres(postgres)
    with postgres.connect() as connection:
        connection.execute("DROP ROLE IF EXISTS ledger_reader")  # its tables were dropped
        connection.execute("CREATE ROLE ledger_reader LOGIN")
        connection.execute(f"GRANT SELECT ON {', '.join(tables.values())} TO ledger_reader")
        # Every transaction of the role is read-only: PostgreSQL refuses a temporary table.
        connection.execute("ALTER ROLE ledger_reader SET default_transaction_read_only = on")

    _, sent = _ledger_checks_in_postgres(postgres, tables, "ledger_reader")

    assert any("refused a temporary table" in line for line in sent)
    assert not any("DROP TABLE" in line for line in sent)


_KEY = st.integers(0, 5)
_MAYBE_KEY = st.one_of(st.none(), _KEY)
_MONEY = st.one_of(st.none(), st.sampled_from([-1.0, 0.0, 0.5, 1.0, 3.0]))


def _rows(
    schema: type[dy.Schema], **columns: st.SearchStrategy[Any]
) -> st.SearchStrategy[pl.DataFrame]:
    return st.lists(st.fixed_dictionaries(columns), max_size=8).map(
        lambda rows: pl.DataFrame(rows, schema=schema.create_empty().schema, orient="row")
    )


_LEDGERS = st.fixed_dictionaries(
    {
        "clients": _rows(Clients, customer_id=_KEY, name=st.sampled_from([None, "Ada", "blocked"])),
        "invoices": _rows(Invoices, order_id=_MAYBE_KEY, customer_id=_MAYBE_KEY, amount=_MONEY),
        "items": _rows(
            Items,
            order_id=_KEY,
            line_no=st.integers(0, 2),
            quantity=st.one_of(st.none(), st.integers(0, 2)),
        ),
        "payments": _rows(Payments, order_id=_KEY, paid=_MONEY),
    }
)


def _in_duckdb(
    frames: dict[str, pl.DataFrame], collection: type[dy.Collection] = Ledger
) -> dict[tuple[str, str], tuple[int, str]]:
    """The collection checks' outcomes on `frames` held as tables of one DuckDB database."""
    members = {member: member for member in frames}
    run = collection_run(collection, members=members, settings=CheckSettings(max_failure_samples=2))
    keys = set(dd.collection_checks(collection, members=members).check_keys)
    with duckdb.connect() as connection:
        for member, frame in frames.items():
            connection.register("frame", frame.to_arrow())
            connection.execute(f'create table "{member}" as select * from frame')
            connection.unregister("frame")
        pushdowns = {
            member: pushdown(
                connection,
                relation(connection, member, None, None),
                lambda _: None,
                resource_key="db",
            )
            for member in frames
        }
        lazy = {member: frame.lazy() for member, frame in frames.items()}
        return {
            (r.asset_key.to_user_string(), r.check_name): (
                r.metadata["dy_failed_count"].value,
                r.metadata["dy_engine"].value,
            )
            for r in collection_results(run, lazy, keys, pushdowns=pushdowns)
            if r.asset_key is not None and r.check_name and "dy_engine" in r.metadata
        }


@pytest.mark.parametrize("listed", [True, False], ids=["keys listed", "keys grouped"])
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(frames=_LEDGERS)
def test_sql_filters_count_what_collection_filter_removes(
    frames: dict[str, pl.DataFrame], listed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A few repeated keys are fetched once and listed as literals (the rule's count and sample,
    # the valid rows); many are counted and excluded by grouping subqueries.
    monkeypatch.setattr(sql_filters, "_LISTED_ROWS", 1_000 if listed else 0)
    monkeypatch.setattr(sql_repeated, "LISTED_ROWS", 1_000 if listed else 0)
    outcomes = _in_duckdb(frames)
    assert _failed(outcomes) == dataframely_counts(Ledger, frames, MEMBERS)
    engines = _filter_engines(outcomes)
    assert engines.pop("dy_filter__few_items") == {POLARS_FILTERS["few_items"]}
    assert set().union(*engines.values()) == {"duckdb"}


class Lines(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    line_no = dy.Int64(primary_key=True, min=1)


class Shipped(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    line_no = dy.Int64(primary_key=True)
    box = dy.Int64(nullable=True, min=1)


class Returned(dy.Schema):
    order_id = dy.Int64(primary_key=True)
    line_no = dy.Int64(primary_key=True)
    reason = dy.String(nullable=True)


class Deliveries(dy.Collection):
    lines: dy.LazyFrame[Lines]
    shipped: dy.LazyFrame[Shipped]
    returned: Annotated[dy.LazyFrame[Returned], dy.CollectionMember(propagate_row_failures=True)]

    @dy.filter()
    def line_shipped(self) -> pl.LazyFrame:
        """Every line is shipped in a box."""
        return self.lines.join(self.shipped.filter(pl.col("box") >= 1), on=["order_id", "line_no"])


_PAIR = {"order_id": _KEY, "line_no": st.integers(0, 2)}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    frames=st.fixed_dictionaries(
        {
            "lines": _rows(Lines, **_PAIR),
            "shipped": _rows(Shipped, **_PAIR, box=st.one_of(st.none(), st.integers(0, 2))),
            "returned": _rows(Returned, **_PAIR, reason=st.sampled_from([None, "late"])),
        }
    )
)
def test_sql_filters_on_a_composite_key_count_what_collection_filter_removes(
    frames: dict[str, pl.DataFrame],
) -> None:
    # The common key is two columns: a filter's kept keys are tested as a row value.
    outcomes = _in_duckdb(frames, Deliveries)
    members = {member: member for member in frames}
    assert _failed(outcomes) == dataframely_counts(Deliveries, frames, members)
    assert set().union(*_filter_engines(outcomes).values()) == {"duckdb"}


@pytest.mark.parametrize(("limit", "engine"), [(4.0, ELSEWHERE), (100.0, "duckdb")])
def test_a_failing_member_rule_without_an_sql_form_sends_the_filters_reading_it_to_polars(
    tmp_path: Path, limit: float, engine: str
) -> None:
    class HalvedOrders(Orders):
        @dy.rule()
        def halved_amount_is_small(cls) -> pl.Expr:
            """Half the amount is below the limit (a division: no SQL form)."""
            return pl.col("amount") / 2 < limit

    collection = shop_collection(Customers, HalvedOrders, OrderLines)
    database = _duckdb_file(tmp_path / "shop.duckdb", shop_frames(), SHOP_MEMBERS)
    checks = dd.collection_checks(
        collection,
        members=SHOP_MEMBERS,
        sources={member: dd.sources.DuckDBTableSource() for member in SHOP_MEMBERS},
    )
    result, _ = _materialize(
        checks, SHOP_MEMBERS, {"duckdb": DuckDBResource(database=str(database))}
    )

    outcomes = _outcomes(result)
    assert _failed(outcomes) == dataframely_counts(collection, shop_frames(), SHOP_MEMBERS)
    assert (
        outcomes[("orders", "dy_rule__halved_amount_is_small")][1] == "polars (no exact SQL form)"
    )
    # Which orders are valid is known in SQL only when the rule failed no row: both filters
    # read orders, so on every member they run where the valid orders are known.
    assert set().union(*_filter_engines(outcomes).values()) == {engine}
