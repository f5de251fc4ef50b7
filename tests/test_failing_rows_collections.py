"""`dd.collection_checks(keep_failing_rows=)`: each member keeps the rows its filters remove
beside the rows failing its rules, one flag per filter, in real runs: members stored as
parquet by an IO manager (streamed files), tables of one DuckDB file and of the real
PostgreSQL server (rows selected and inserted inside the database). Each kept row and flag
is what `Collection.filter` reports for that member (`FailureInfo.details()`)."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
from dagster.components.testing import DefsFolderSandbox
from dagster_duckdb import DuckDBResource
from ledger import MEMBERS as LEDGER_MEMBERS
from ledger import Ledger, ledger_frames
from postgres import USER, PostgresResource, PostgresServer
from shop import MEMBERS, Shop, shop_frames
from test_collection_checks import _shop_assets
from test_collection_pushdown import (
    EVERYTHING,
    _duckdb_file,
    _ledger_in_postgres,
    dataframely_counts,
    postgres_sources,
)

import dagster_dataframely as dd
from dagster_dataframely._engine.catalogue import rules
from dagster_dataframely._sidecar.collection_checks import filter_rules

_FLAG = {"invalid": True, "valid": False}


def _check_names(collection: type[dy.Collection], member: str) -> dict[str, str]:
    """Rule and filter name -> its check name, for a member of `collection`."""
    names = {rule.name: rule.check_name for rule in filter_rules(collection)}
    schema = collection.member_schemas()[member]
    return names | {rule.name: rule.check_name for rule in rules(schema)}


def _dataframely(
    collection: type[dy.Collection], frames: dict[str, pl.DataFrame], member: str
) -> pl.DataFrame:
    """The member's rows `Collection.filter` fails, each filter's verdict as a flag named by
    its check name (null where Dataframely did not evaluate it), sorted."""
    details = collection.filter(frames, cast=False).failure[member].details()
    names = _check_names(collection, member)
    filters = [n for n in details.columns if names.get(n, "").startswith("dy_filter__")]
    columns = collection.member_schemas()[member].column_names()
    flags = [
        pl.col(n).cast(pl.String).replace_strict(_FLAG, default=None).alias(names[n])
        for n in filters
    ]
    return details.select(*columns, *flags).sort(columns, nulls_last=True)


def _filter_flags(kept: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    filters = [name for name in kept.columns if name.startswith("dy_filter__")]
    return kept.select(*columns, *filters).sort(columns, nulls_last=True)


def _assert_kept_as_dataframely(
    collection: type[dy.Collection],
    frames: dict[str, pl.DataFrame],
    member: str,
    kept: pl.DataFrame,
) -> None:
    expected = _dataframely(collection, frames, member)
    columns = collection.member_schemas()[member].column_names()
    assert _filter_flags(kept, columns).to_dicts() == expected.to_dicts()
    # Every flag, the rules' too: true on as many rows as Dataframely fails (removed rows
    # pass every rule).
    failure = collection.filter(frames, cast=False).failure[member]
    names = _check_names(collection, member)
    expected_counts = {(member, names[rule]): n for rule, n in failure.counts().items() if n}
    _assert_flag_counts({member: kept}, expected_counts)


def _evaluations(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], Any]:
    """(asset, check name) -> the run's evaluation of that check."""
    return {
        (e.asset_key.to_user_string(), e.check_name): e
        for e in result.get_asset_check_evaluations()
    }


def _shop_on_parquet(tmp_path: Path, **keep: Any) -> tuple[Path, dg.ExecuteInProcessResult]:
    kept = tmp_path / "kept"
    checks = dd.collection_checks(Shop, members=MEMBERS, keep_failing_rows=str(kept), **keep)
    resources = {"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "warehouse"))}
    result = dg.materialize(
        [*_shop_assets(shop_frames()), checks], resources=resources, raise_on_error=False
    )
    return kept, result


def test_parquet_members_keep_the_rows_each_filter_removes(tmp_path: Path) -> None:
    kept, result = _shop_on_parquet(tmp_path)

    for member, asset in MEMBERS.items():
        folder = kept / f"{asset}__dy_failures"
        rows = pl.read_parquet(folder / "*.parquet")  # one shape: rule and filter rows
        _assert_kept_as_dataframely(Shop, shop_frames(), member, rows)
    # Each kind of row in its own file, streamed by its own writer.
    removed = pl.read_parquet(kept / "order_lines__dy_failures" / "__unpartitioned@filters.parquet")
    assert sorted(removed["order_id"]) == [4, 5, 6, 7]
    assert set(removed["dy_run_id"]) == {result.run_id}
    # customers are read by the filters but never filtered: only their rules' file.
    assert [p.name for p in (kept / "customers__dy_failures").iterdir()] == [
        "__unpartitioned.parquet"
    ]
    check = _evaluations(result)[("order_lines", "dy_filter__order_has_lines")]
    assert check.metadata["dy_failing_rows_kept"].value == 4
    query = check.metadata["dy_failing_rows"].value
    assert eval(query, {"pl": pl}).collect()["order_id"].sort().to_list() == [5, 7]


def test_the_cap_holds_for_a_members_rule_and_filter_rows_together(tmp_path: Path) -> None:
    kept, result = _shop_on_parquet(tmp_path, max_failing_rows=3)

    lines = pl.read_parquet(kept / "order_lines__dy_failures" / "*.parquet")
    assert lines.height == 3  # the 2 rows failing the primary key, then 1 removed row
    check = _evaluations(result)[("order_lines", "dy_filter__customer_exists")]
    assert check.metadata["dy_failed_count"].value == 4  # still exact
    assert check.metadata["dy_failing_rows_cap"].value == 3


def in_duckdb(
    collection: type[dy.Collection], members: dict[str, str], database: Path, **keep: Any
) -> tuple[dg.AssetChecksDefinition, dg.ExecuteInProcessResult]:
    """The checks of `collection` keeping failing rows, on members that are tables of the
    DuckDB file `database`, and their run."""
    checks = dd.collection_checks(
        collection,
        members=members,
        sources={member: dd.sources.DuckDBTableSource() for member in members},
        keep_failing_rows=True,
        **keep,
    )
    result = dg.materialize(
        [*(dg.AssetSpec(key) for key in members.values()), checks],
        resources={"duckdb": DuckDBResource(database=str(database))},
        selection=EVERYTHING,
        raise_on_error=False,
    )
    return checks, result


def _shop_in_duckdb(database: Path) -> dg.ExecuteInProcessResult:
    return in_duckdb(Shop, MEMBERS, database)[1]


def _table(database: Path, table: str) -> pl.DataFrame:
    with duckdb.connect(str(database), read_only=True) as connection:
        return connection.sql(f'select * from "{table}"').pl()


def test_duckdb_members_keep_the_removed_rows_inside_the_database(tmp_path: Path) -> None:
    database = _duckdb_file(tmp_path / "shop.duckdb", shop_frames(), MEMBERS)

    result = _shop_in_duckdb(database)

    for member, asset in MEMBERS.items():
        _assert_kept_as_dataframely(
            Shop, shop_frames(), member, _table(database, f"{asset}__dy_failures")
        )
    check = _evaluations(result)[("orders", "dy_filter__customer_exists")]
    assert check.metadata["dy_engine"].value == "duckdb"
    assert check.metadata["dy_failing_rows_table"].value == '"orders__dy_failures"'
    query = check.metadata["dy_failing_rows"].value
    with duckdb.connect(str(database), read_only=True) as connection:
        removed = connection.sql(f"select order_id from ({query}) order by 1").fetchall()
    assert removed == [(4,), (6,)]


def test_a_read_only_database_reports_every_verdict_and_why_nothing_was_kept(
    tmp_path: Path,
) -> None:
    database = _duckdb_file(tmp_path / "shop.duckdb", shop_frames(), MEMBERS)
    checks = dd.collection_checks(
        Shop,
        members=MEMBERS,
        sources={member: dd.sources.DuckDBTableSource() for member in MEMBERS},
        keep_failing_rows=True,
    )
    read_only = DuckDBResource(
        database=str(database), connection_config={"access_mode": "READ_ONLY"}
    )

    result = dg.materialize(
        [*(dg.AssetSpec(key) for key in MEMBERS.values()), checks],
        resources={"duckdb": read_only},
        selection=EVERYTHING,
        raise_on_error=False,
    )

    failing = {key: e for key, e in _evaluations(result).items() if not e.passed}
    assert {
        key: e.metadata["dy_failed_count"].value for key, e in failing.items()
    } == dataframely_counts(Shop, shop_frames(), MEMBERS)
    error = failing[("order_lines", "dy_filter__customer_exists")].metadata
    message = error["dy_failing_rows_error"].value
    assert '"order_lines__dy_failures"' in message and "reported all the same" in message


def test_a_second_run_replaces_the_removed_rows_and_a_passing_one_leaves_none(
    tmp_path: Path,
) -> None:
    database = _duckdb_file(tmp_path / "shop.duckdb", shop_frames(), MEMBERS)
    _shop_in_duckdb(database)
    with duckdb.connect(str(database)) as connection:  # every order's customer is known
        connection.execute("update orders set customer_id = 1")

    result = _shop_in_duckdb(database)

    orders = _table(database, "orders__dy_failures")
    assert set(orders["dy_run_id"]) == {result.run_id}
    assert orders.filter(pl.col("dy_filter__customer_exists")).height == 0
    assert sorted(orders.filter(pl.col("dy_filter__order_has_lines"))["order_id"]) == [2, 3]


def test_the_members_own_checks_and_the_collections_keep_both_kinds(tmp_path: Path) -> None:
    """A member checked by its own `dd.schema_checks` (skipped by the collection) and by the
    collection's filters: each writer replaces only its kind of rows, in either order."""
    database = _duckdb_file(tmp_path / "shop.duckdb", shop_frames(), MEMBERS)
    sources = {member: dd.sources.DuckDBTableSource() for member in MEMBERS}
    collection = dd.collection_checks(
        Shop,
        members=MEMBERS,
        sources=sources,
        skip_schema_checks=["orders"],
        keep_failing_rows=True,
    )
    own = dd.schema_checks(
        Shop.member_schemas()["orders"],
        asset="orders",
        source=dd.sources.DuckDBTableSource(),
        keep_failing_rows=True,
    )
    assets = [dg.AssetSpec(key) for key in MEMBERS.values()]
    resources = {"duckdb": DuckDBResource(database=str(database))}

    for first, second in ((own, collection), (collection, own)):
        for checks in (first, second):
            dg.materialize(
                [*assets, checks], resources=resources, selection=EVERYTHING, raise_on_error=False
            )

        orders = _table(database, "orders__dy_failures")
        assert sorted(orders.filter(pl.col("dy_rule__amount__min"))["order_id"]) == [5]
        removed = orders.filter(pl.col("dy_filter__customer_exists").fill_null(False))
        assert sorted(removed["order_id"]) == [4, 6]
        assert orders.height == 5


def test_a_member_with_a_filter_in_polars_keeps_each_removed_row_once(tmp_path: Path) -> None:
    """The ledger's aggregation has no SQL form: on the members it removes rows from, every
    filter runs in polars when their rows are kept, so a row two filters remove is kept once
    with both flags, as `Collection.filter` reports it; each moved filter says why."""
    database = _duckdb_file(tmp_path / "ledger.duckdb", ledger_frames(), LEDGER_MEMBERS)

    _, result = in_duckdb(Ledger, LEDGER_MEMBERS, database)

    for member, asset in LEDGER_MEMBERS.items():
        kept = _table(database, f"{asset}__dy_failures")
        _assert_kept_as_dataframely(Ledger, ledger_frames(), member, kept)
    engine = _evaluations(result)[("items", "dy_filter__invoice_has_items")].metadata["dy_engine"]
    assert engine.value == (
        "polars (keep_failing_rows: few_items runs in polars on the members this filter removes "
        "rows from, so their removed rows are selected there, with every filter's flag)"
    )


def _assert_flag_counts(
    kept: dict[str, pl.DataFrame], expected: dict[tuple[str, str], int]
) -> None:
    found = {
        (asset, name): int(frame[name].sum())
        for asset, frame in kept.items()
        for name in frame.columns
        if name.startswith(("dy_rule__", "dy_filter__")) and frame[name].sum()
    }
    assert found == expected


def test_members_of_two_databases_keep_each_removed_row_once(tmp_path: Path) -> None:
    """Orders and customers in one DuckDB file, lines in another: filters reading lines run in
    polars, and so do the others on the members keeping their rows."""
    frames = shop_frames()
    rest = {m: a for m, a in MEMBERS.items() if m != "lines"}
    shop = _duckdb_file(tmp_path / "shop.duckdb", {m: frames[m] for m in rest}, rest)
    lines = _duckdb_file(
        tmp_path / "lines.duckdb", {"lines": frames["lines"]}, {"lines": MEMBERS["lines"]}
    )
    checks = dd.collection_checks(
        Shop,
        members=MEMBERS,
        sources={
            **{m: dd.sources.DuckDBTableSource() for m in rest},
            "lines": dd.sources.DuckDBTableSource(resource_key="lines_db"),
        },
        keep_failing_rows=True,
    )

    result = dg.materialize(
        [*(dg.AssetSpec(key) for key in MEMBERS.values()), checks],
        resources={
            "duckdb": DuckDBResource(database=str(shop)),
            "lines_db": DuckDBResource(database=str(lines)),
        },
        selection=EVERYTHING,
        raise_on_error=False,
    )

    for member, asset in MEMBERS.items():
        database = lines if member == "lines" else shop
        kept = _table(database, f"{asset}__dy_failures")
        _assert_kept_as_dataframely(Shop, frames, member, kept)
    engines = {
        key: e.metadata["dy_engine"].value
        for key, e in _evaluations(result).items()
        if key[1].startswith("dy_filter__")
    }
    assert all(engine.startswith("polars (") for engine in engines.values()), engines


def test_postgres_members_keep_the_removed_rows_inside_the_database(
    postgres: PostgresServer,
) -> None:
    tables = _ledger_in_postgres(postgres)
    with postgres.connect() as connection:
        for table in tables.values():
            connection.execute(f"drop table if exists {table}__dy_failures")
    checks = dd.collection_checks(
        Ledger, members=LEDGER_MEMBERS, sources=postgres_sources(tables), keep_failing_rows=True
    )

    dg.materialize(
        [*(dg.AssetSpec(key) for key in LEDGER_MEMBERS.values()), checks],
        resources={"warehouse": PostgresResource(conninfo=postgres.conninfo_for(USER))},
        selection=EVERYTHING,
        raise_on_error=False,
    )

    kept = {}
    with postgres.connect() as connection:
        for member, table in tables.items():
            cursor = connection.execute(f"SELECT * FROM {table}__dy_failures")
            names = [column.name for column in cursor.description or []]
            kept[LEDGER_MEMBERS[member]] = pl.DataFrame(
                cursor.fetchall(), schema=names, orient="row"
            )
    for member, asset in LEDGER_MEMBERS.items():
        _assert_kept_as_dataframely(Ledger, ledger_frames(), member, kept[asset])


_DAYS = dg.StaticPartitionsDefinition(["mon", "tue"])


def test_partitioned_members_keep_one_file_of_removed_rows_per_partition(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    checks = dd.collection_checks(
        Shop, members=MEMBERS, partitions_def=_DAYS, keep_failing_rows=str(kept)
    )
    assets = [*_shop_assets(shop_frames(), partitions_def=_DAYS), checks]
    resources = {"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "warehouse"))}
    instance = dg.DagsterInstance.ephemeral()

    for day in ("mon", "tue", "mon"):
        dg.materialize(
            assets,
            partition_key=day,
            resources=resources,
            instance=instance,
            raise_on_error=False,
        )

    folder = kept / "orders__dy_failures"
    assert sorted(p.name for p in folder.iterdir()) == [
        "mon.parquet",
        "mon@filters.parquet",
        "tue.parquet",
        "tue@filters.parquet",
    ]
    rows = pl.read_parquet(folder / "*@filters.parquet")
    # Each partition's removed orders once: the second run of mon replaced the first.
    assert rows.group_by("dy_partition_key").len().sort("dy_partition_key").rows() == [
        ("mon", 4),
        ("tue", 4),
    ]
    assert rows.filter(pl.col("dy_partition_key") == "mon")["dy_run_id"].n_unique() == 1


def test_the_components_collection_keeps_and_declares_each_members_rows(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    from support import scaffold_checks
    from test_component_yaml import _declare_shop, _shop_entry

    _declare_shop(sandbox, customers="None", orders="None", lines="None")
    kept = tmp_path / "kept"
    scaffold_checks(
        sandbox, {"checks": [], "collections": [_shop_entry(keep_failing_rows=str(kept))]}
    )

    with sandbox.build_component_tree() as tree:
        defs = tree.build_defs()
        specs = {spec.key: spec for spec in defs.resolve_all_asset_specs()}
        dg.materialize(
            [*(defs.assets or []), *(defs.asset_checks or [])],  # type: ignore[list-item]
            selection=list(MEMBERS.values()),
            resources={"io_manager": dd.ParquetIOManager(base_dir=str(tmp_path / "warehouse"))},
            raise_on_error=False,
        )

    for member, asset in MEMBERS.items():
        failures = specs[dg.AssetKey(f"{asset}__dy_failures")]
        declared = [c.name for c in failures.metadata["dagster/column_schema"].columns]
        rows = pl.read_parquet(kept / f"{asset}__dy_failures" / "*.parquet")
        assert rows.columns == declared
        _assert_kept_as_dataframely(Shop, shop_frames(), member, rows)
