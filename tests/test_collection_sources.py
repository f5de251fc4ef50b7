"""Collection members read from `dd.sources`, in real runs: `orders` is a table another tool
(dbt, say) built in a DuckDB file, declared as an external `AssetSpec` with
`dagster/table_name` and read through `DuckDBTableSource`; `customers` is a parquet file read
through `ParquetSource`; `order_lines` is stored by the run's IO manager, the default."""

# No `from __future__ import annotations`: Dagster reads the `context` annotation at runtime.

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from dagster_duckdb import DuckDBResource
from dbt_shop import DATABASE, ShopCustomers, ShopOrders, dbt_models, prepare, resources
from shop import (
    MEMBERS,
    Shop,
    ShopWithReturns,
    expected_failures,
    failing_by_member,
    shop_collection,
    shop_frames,
)
from support import load_error, logs, materialized, scaffold_checks

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    CollectionMemberError,
    ColumnSchemaError,
    InvalidSourceError,
    SourceReadError,
    UnloadableAssetError,
)
from dagster_dataframely.io import ParquetIOManager

DAYS = dg.StaticPartitionsDefinition(["mon", "tue"])
#: The catalog of a DuckDB file is its stem, as in the names dbt gives its models.
TABLE = "warehouse.main.orders"
#: Everything the Definitions can materialize and every check, also those on external assets
#: (which Dagster leaves out of a run's default selection).
EVERYTHING = dg.AssetSelection.all() | dg.AssetSelection.all_asset_checks()


def _orders_spec(**kwargs: Any) -> dg.AssetSpec:
    return dg.AssetSpec("orders", metadata={"dagster/table_name": TABLE}, **kwargs)


def _warehouse(folder: Path, orders: pl.DataFrame) -> Path:
    """`orders` as `main.orders` in a DuckDB file, written outside Dagster as dbt would."""
    database = folder / "warehouse.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.register("frame", orders.to_arrow())
        connection.execute("create or replace table main.orders as select * from frame")
    return database


def _customers_file(folder: Path, customers: pl.DataFrame) -> Path:
    path = folder / "customers.parquet"
    customers.write_parquet(path)
    return path


def _lines_asset(frames: dict[str, pl.DataFrame], **kwargs: Any) -> dg.AssetsDefinition:
    @dg.asset(name="order_lines", **kwargs)
    def lines(context: dg.AssetExecutionContext) -> pl.DataFrame:
        frame = frames["lines"]
        if context.has_partition_key:
            return frame.filter(pl.col("day") == context.partition_key)
        return frame

    return lines


def _members() -> list[Any]:
    """Orders and customers as external assets (another tool writes them), order lines as an
    asset the run's IO manager stores."""
    return [_orders_spec(), dg.AssetSpec("customers"), _lines_asset(shop_frames())]


@dg.asset(deps=["order_lines"])
def order_report() -> pl.DataFrame:
    return pl.DataFrame({"orders": [1]})


def _stored(tmp_path: Path, frames: dict[str, pl.DataFrame] | None = None) -> dict[str, Any]:
    """The shop's orders in DuckDB and customers in parquet; the resources that read them."""
    frames = frames or shop_frames()
    database = _warehouse(tmp_path, frames["orders"])
    customers = _customers_file(tmp_path, frames["customers"])
    return {
        "customers_path": str(customers),
        "resources": {
            "duckdb": DuckDBResource(database=str(database)),
            "io_manager": ParquetIOManager(base_dir=str(tmp_path / "store")),
        },
    }


def _sources(customers_path: str, **kwargs: Any) -> dict[str, dd.sources.Source]:
    return {
        "orders": dd.sources.DuckDBTableSource(**kwargs),
        "customers": dd.sources.ParquetSource(customers_path, **kwargs),
    }


def test_members_from_duckdb_and_parquet_report_the_filter_counts(tmp_path: Path) -> None:
    stored = _stored(tmp_path)
    checks = dd.collection_checks(Shop, members=MEMBERS, sources=_sources(stored["customers_path"]))
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [*_members(), checks, order_report],
        resources=stored["resources"],
        instance=instance,
        selection=EVERYTHING,
        raise_on_error=False,
    )

    assert failing_by_member(result) == expected_failures()
    assert len(result.get_asset_check_evaluations()) == len(checks.check_keys)
    # `order_has_lines` fails at ERROR on order lines: the report downstream never runs.
    assert "order_report" not in materialized(result)
    read = logs(instance, result)
    # The DuckDB member is checked by pushdown; the filters reading other sources, in polars.
    assert any(f"Checking asset orders from DuckDB table '{TABLE}'" in m for m in read)
    assert any("Reading asset customers from parquet" in m for m in read)
    assert any(m.startswith("Loaded order_lines through IO manager 'io_manager'") for m in read)


def test_the_checks_require_every_sources_resources() -> None:
    checks = dd.collection_checks(
        Shop,
        members=MEMBERS,
        sources={
            "orders": dd.sources.DuckDBTableSource(resource_key="warehouse"),
            "customers": dd.sources.CallableSource(lambda _: None, resource_keys=["lake"]),
        },
    )
    # `order_lines` has no source: its IO manager, the run's "io_manager", reads it.
    assert checks.required_resource_keys == {"warehouse", "lake", "io_manager"}


def test_each_source_reads_the_run_partition(tmp_path: Path) -> None:
    frames = shop_frames()
    valid = {k: v.collect() for k, v in Shop.filter(frames, cast=False).result.to_dict().items()}
    # Monday's rows are valid, Tuesday's are the shop's broken ones.
    by_day = {
        member: pl.concat(
            [valid[member].with_columns(day=pl.lit("mon")), frame.with_columns(day=pl.lit("tue"))]
        )
        for member, frame in frames.items()
    }
    stored = _stored(tmp_path, by_day)
    checks = dd.collection_checks(
        Shop,
        members=MEMBERS,
        sources=_sources(stored["customers_path"], partition_expr="day"),
        partitions_def=DAYS,
    )
    assets: list[Any] = [
        _orders_spec(partitions_def=DAYS),
        dg.AssetSpec("customers", partitions_def=DAYS),
        _lines_asset(by_day, partitions_def=DAYS),
        checks,
    ]
    runs = {
        day: dg.materialize(
            assets,
            resources=stored["resources"],
            partition_key=day,
            selection=EVERYTHING,
            raise_on_error=False,
        )
        for day in ("mon", "tue")
    }

    assert failing_by_member(runs["mon"]) == {}
    assert failing_by_member(runs["tue"]) == expected_failures()
    rows = {
        e.asset_key.to_user_string(): e.metadata["dy_row_count"].value
        for e in runs["tue"].get_asset_check_evaluations()
        if e.check_name == "dy_rule__primary_key"
    }
    assert rows == {name: frames[member].height for member, name in MEMBERS.items()}


def _checked_with(
    stored: dict[str, Any], sources: dict[str, Any], **settings: Any
) -> dg.ExecuteInProcessResult:
    checks = dd.collection_checks(Shop, members=MEMBERS, sources=sources, **settings)
    return dg.materialize(
        [*_members(), checks],
        resources=stored["resources"],
        selection=EVERYTHING,
        raise_on_error=False,
    )


def _user_error(result: dg.ExecuteInProcessResult) -> tuple[str, str]:
    """The class and message of the error the check's code raised."""
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None and error.cause is not None
    return error.cause.cls_name or "", error.cause.message


def test_a_missing_source_file_names_the_member_and_the_source(tmp_path: Path) -> None:
    stored = _stored(tmp_path)
    missing = str(tmp_path / "no_such.parquet")
    result = _checked_with(stored, _sources(missing))

    name, message = _user_error(result)
    assert name == SourceReadError.__name__
    assert f"Could not read asset customers from parquet '{missing}'" in message
    assert "(collection member 'customers')" in message


def test_a_missing_database_table_names_the_member_and_the_table(tmp_path: Path) -> None:
    stored = _stored(tmp_path)
    sources = {**_sources(stored["customers_path"])}
    sources["orders"] = dd.sources.DuckDBTableSource(table="main.no_orders")
    result = _checked_with(stored, sources)

    name, message = _user_error(result)
    assert name == SourceReadError.__name__
    assert "Could not read asset orders from DuckDB table 'main.no_orders'" in message
    assert "(collection member 'orders')" in message and "no_orders" in message


def test_a_source_failing_amid_the_joins_names_every_member_and_its_reader(
    tmp_path: Path,
) -> None:
    stored = _stored(tmp_path)
    # A customers file whose footer reads (so the member opens) but whose pages are corrupt:
    # the read fails only when a query reads the rows.
    path = Path(stored["customers_path"])
    pl.DataFrame({"customer_id": range(100_000), "name": "x"}).write_parquet(path)
    data = bytearray(path.read_bytes())
    data[100 : len(data) // 2 : 7] = bytes(b ^ 0xFF for b in data[100 : len(data) // 2 : 7])
    path.write_bytes(data)
    result = _checked_with(stored, _sources(str(path)))

    name, message = _user_error(result)
    assert name == SourceReadError.__name__
    assert "Could not read the members of collection Shop" in message
    assert f"customers (asset customers) from parquet '{path}'" in message
    assert f"orders (asset orders) from DuckDB table '{TABLE}' via resource" in message
    assert "lines (asset order_lines) from IO manager 'io_manager'" in message
    assert "Data corruption" in message


# ---------------------------------- definition time ---------------------------------- #


def test_sources_for_names_not_in_members_are_refused() -> None:
    with pytest.raises(CollectionMemberError) as raised:
        dd.collection_checks(
            Shop,
            members=MEMBERS,
            sources={"order": dd.sources.DuckDBTableSource(), "orders": None},  # type: ignore[dict-item]
        )
    message = str(raised.value)
    assert "sources= names members not in members=: order" in message
    assert "The collection's members are customers, orders, lines" in message
    assert "key sources= by the member names in members=" in message


def test_a_source_for_an_optional_member_left_out_is_refused() -> None:
    with pytest.raises(CollectionMemberError, match="not in members=: returns"):
        dd.collection_checks(
            ShopWithReturns,
            members=MEMBERS,
            sources={"returns": dd.sources.ParquetSource("returns.parquet")},
        )


def test_something_else_is_not_a_source() -> None:
    with pytest.raises(InvalidSourceError, match="is not a source"):
        dd.collection_checks(Shop, members=MEMBERS, sources={"orders": "warehouse.orders"})  # type: ignore[dict-item]


# ------------------------------ with_schemas, Component ------------------------------ #


def _external_defs(stored: dict[str, Any]) -> dg.Definitions:
    return dg.Definitions(
        assets=_members(),
        resources=stored["resources"],
    )


def _checked(defs: dg.Definitions) -> dg.ExecuteInProcessResult:
    """Materialize what can be and run every check (external members are only read)."""
    job = dg.define_asset_job("checked", selection=EVERYTHING)
    defs = dg.Definitions.merge(defs, dg.Definitions(jobs=[job]))
    return defs.resolve_job_def("checked").execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )


def test_with_schemas_reads_members_from_source_by_asset_key(tmp_path: Path) -> None:
    stored = _stored(tmp_path)
    sources = _sources(stored["customers_path"])
    defs = dd.with_schemas(
        _external_defs(stored),
        {Shop: MEMBERS},
        source=sources,  # by asset key: the members are stored under their own names
    )

    assert failing_by_member(_checked(defs)) == expected_failures()


def test_with_schemas_refuses_an_external_member_without_a_source(tmp_path: Path) -> None:
    stored = _stored(tmp_path)
    with pytest.raises(UnloadableAssetError, match="cannot read asset customers"):
        dd.with_schemas(
            _external_defs(stored),
            {Shop: MEMBERS},
            source={"orders": dd.sources.DuckDBTableSource()},
        )


def test_the_component_reads_members_from_yaml_sources(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    stored = _stored(tmp_path)
    entry = {
        "collection": "shop:Shop",
        "members": MEMBERS,
        "sources": {
            "orders": {"kind": "duckdb_table", "resource_key": "duckdb"},
            "customers": {"kind": "parquet", "path": stored["customers_path"]},
        },
    }
    path = scaffold_checks(
        sandbox, {"assets_outside_defs": True, "checks": [], "collections": [entry]}
    )
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        merged = dg.Definitions.merge(_external_defs(stored), defs)
        assert failing_by_member(_checked(merged)) == expected_failures()


def test_a_component_source_for_an_unknown_member_names_the_file(
    sandbox: DefsFolderSandbox,
) -> None:
    entry = {
        "collection": "shop:Shop",
        "members": MEMBERS,
        "sources": {"order": {"kind": "duckdb_table"}},
    }
    error = load_error(
        sandbox,
        scaffold_checks(
            sandbox, {"assets_outside_defs": True, "checks": [], "collections": [entry]}
        ),
    )
    assert isinstance(error, CollectionMemberError)
    assert "defs.yaml: collections[0] (Shop)" in str(error)
    assert "sources= names members not in members=: order" in str(error)


# ------------------------- warehouse dtypes: read_dtypes="cast" ------------------------- #


def _drifted(tmp_path: Path, **orders: Any) -> dict[str, Any]:
    """The shop stored with the orders' ids as DuckDB INTEGER columns (read back as Int32,
    declared Int64), the `orders` columns replaced as given."""
    frames = shop_frames()
    frames["orders"] = (
        frames["orders"]
        .with_columns(pl.col("order_id", "customer_id").cast(pl.Int32))
        .with_columns(**orders)
    )
    return _stored(tmp_path, frames)


def _cast_columns(result: dg.ExecuteInProcessResult, asset: str) -> dict[str, Any]:
    (columns,) = [
        e
        for e in result.get_asset_check_evaluations()
        if e.check_name == "dy_schema__columns" and e.asset_key == dg.AssetKey(asset)
    ]
    return {"passed": columns.passed, **{k: v.value for k, v in columns.metadata.items()}}


def test_read_dtypes_cast_casts_each_member_and_the_filters_count_as_on_declared_dtypes(
    tmp_path: Path,
) -> None:
    stored = _drifted(tmp_path)
    sources = _sources(stored["customers_path"])
    strict = _checked_with(stored, sources)
    cast = _checked_with(stored, sources, read_dtypes="cast")

    name, message = _user_error(strict)
    assert name == ColumnSchemaError.__name__
    assert "Member 'orders' (asset orders)" in message and 'read_dtypes="cast"' in message
    assert failing_by_member(cast) == expected_failures()
    columns = _cast_columns(cast, "orders")
    assert columns["passed"] and columns["dy_cast_columns"] == 2
    assert [r.data["column"] for r in columns["dy_casts"].records] == ["order_id", "customer_id"]


def test_a_member_value_the_cast_cannot_convert_stops_the_filters(
    tmp_path: Path,
) -> None:
    customer = pl.Series([1.0, 2.0, 1.5, 9.0, 1.0, None])  # order 3's customer is no integer
    stored = _drifted(tmp_path, customer_id=customer)
    result = _checked_with(stored, _sources(stored["customers_path"]), read_dtypes="cast")

    name, message = _user_error(result)
    assert name == ColumnSchemaError.__name__
    assert "Member 'orders' (asset orders): read_dtypes=\"cast\" could not cast" in message
    assert "customer_id" in message and "1.5" in message
    columns = _cast_columns(result, "orders")
    assert not columns["passed"] and columns["dy_mismatched_columns"] == 1
    # The filters did not run: they get no result, rather than reading as failed rules.
    evaluated = {e.check_name for e in result.get_asset_check_evaluations()}
    assert not any(name.startswith("dy_filter__") for name in evaluated)


def test_with_schemas_and_the_component_cast_collection_members(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    stored = _drifted(tmp_path)
    sources = _sources(stored["customers_path"])
    defs = dd.with_schemas(
        _external_defs(stored),
        {Shop: MEMBERS},
        source=sources,  # by asset key: the members are stored under their own names
        read_dtypes="cast",
    )
    entry = {
        "collection": "shop:Shop",
        "members": MEMBERS,
        "read_dtypes": "cast",
        "sources": {
            "orders": {"kind": "duckdb_table"},
            "customers": {"kind": "parquet", "path": stored["customers_path"]},
        },
    }
    path = scaffold_checks(
        sandbox, {"assets_outside_defs": True, "checks": [], "collections": [entry]}
    )
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, component_defs):
        from_yaml = _checked(dg.Definitions.merge(_external_defs(stored), component_defs))

    assert failing_by_member(_checked(defs)) == expected_failures()
    assert failing_by_member(from_yaml) == expected_failures()


# ---------------------------------- a real dbt project ---------------------------------- #


class DbtLines(dy.Schema):
    order_id = dy.Int32(primary_key=True)
    line_no = dy.Int32(primary_key=True)


#: The dbt project's two models (tests/dbt_project) and order lines an asset stores.
DbtShop = shop_collection(ShopCustomers, ShopOrders, DbtLines)


@dg.asset(name="order_lines")
def dbt_order_lines() -> pl.DataFrame:
    # No line for order 14; order 99 does not exist.
    return pl.DataFrame(
        {"order_id": [10, 11, 12, 13, 99], "line_no": [1, 1, 1, 1, 1]},
        schema={"order_id": pl.Int32, "line_no": pl.Int32},
    )


def test_dbt_models_are_members_read_from_the_duckdb_file_dbt_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = prepare(tmp_path)
    database = tmp_path / "shop.duckdb"
    monkeypatch.setenv(DATABASE, str(database))
    checks = dd.collection_checks(
        DbtShop,
        members={"customers": "customers", "orders": "orders", "lines": "order_lines"},
        sources={
            "customers": dd.sources.DuckDBTableSource(),  # each model's dagster/table_name
            "orders": dd.sources.DuckDBTableSource(),
        },
    )
    result = dg.materialize(
        [dbt_models(project), dbt_order_lines, checks],
        resources={
            **resources(project, database),
            "io_manager": ParquetIOManager(base_dir=str(tmp_path / "store")),
        },
        raise_on_error=False,
    )

    # dbt's orders 11 (amount -3) and 12 (status 'lost') break their rules, so no filter
    # keeps them; of the valid orders 10, 13 and 14, order 14 has no line.
    assert {
        (e.asset_key.to_user_string(), e.check_name): e.metadata["dy_failed_count"].value
        for e in result.get_asset_check_evaluations()
        if not e.passed
    } == {
        ("orders", "dy_rule__amount__min"): 1,
        ("orders", "dy_rule__status__regex"): 1,
        ("orders", "dy_filter__order_has_lines"): 1,
        ("order_lines", "dy_filter__order_has_lines"): 3,  # orders 11, 12 and 99
        ("order_lines", "dy_filter__customer_exists"): 3,
    }
