"""`dd.infer_schema(asset=..., definitions=...)`: a schema for the table an asset stores, read
through its IO manager as the sidecar reads it, that the asset's own checks then pass."""

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from console import dagster_dataframely
from written_schema import load

import dagster_dataframely as dd
from dagster_dataframely.errors import TableNotFoundError, UnknownAssetError

ORDERS = pl.DataFrame(
    {
        "order_id": [1, 2, 3],
        "status": ["paid", "open", "paid"],
        "amount": [2.5, None, 7.0],
        "placed": pl.Series(
            ["2024-01-01 10:00", "2024-01-02 10:00", None], dtype=pl.String
        ).str.to_datetime(time_zone="UTC"),
        "price": pl.Series(["1.25", "0", "3.50"]).str.to_decimal(scale=2),
    }
)


@dg.asset
def orders() -> pl.DataFrame:
    return ORDERS


DAYS = dg.DailyPartitionsDefinition(start_date="2024-01-01", end_date="2024-01-04")


@dg.asset(partitions_def=DAYS)
def visits(context: dg.AssetExecutionContext) -> pl.DataFrame:
    day = context.partition_key
    frame = pl.DataFrame({"day": [day], "visits": [len(day)]})
    # The latest partition has a column the others lack: the header says which one was read.
    return frame.with_columns(note=pl.lit("late")) if day == "2024-01-03" else frame


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as instance:
        yield instance


def stores(tmp_path: Path) -> dict[str, dg.ConfigurableIOManager]:
    return {
        "parquet": dd.ParquetIOManager(base_dir=str(tmp_path / "parquet")),
        "pickle": dg.FilesystemIOManager(base_dir=str(tmp_path / "pickle")),
    }


@pytest.mark.parametrize("store", ["parquet", "pickle"])
def test_an_asset_s_stored_table_becomes_a_schema_its_checks_pass_on(
    store: str, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    resources = {"io_manager": stores(tmp_path)[store]}
    assert dg.materialize([orders], resources=resources, instance=instance).success
    defs = dg.Definitions(assets=[orders], resources=resources)

    source = dd.infer_schema(asset="orders", definitions=defs, instance=instance)

    assert "inferred from asset orders through IO manager 'io_manager'" in source
    schema = load(source, "Orders")
    assert {n: c.dtype for n, c in schema.columns().items()} == dict(ORDERS.schema)
    checked = dg.materialize(
        [orders, dd.schema_checks(schema, asset=orders)], resources=resources, instance=instance
    )
    evaluations = checked.get_asset_check_evaluations()
    assert evaluations and all(e.passed for e in evaluations)
    assert {e.check_name for e in evaluations} == {"dy_schema__columns"}


def test_profile_proposals_are_comments_from_the_stored_rows(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    resources = {"io_manager": stores(tmp_path)["parquet"]}
    dg.materialize([orders], resources=resources, instance=instance)
    defs = dg.Definitions(assets=[orders], resources=resources)

    source = dd.infer_schema(asset=orders, definitions=defs, instance=instance, profile=True)

    assert "# proposed (3 rows, unique, never null): primary_key=True" in source
    assert 'lambda col: col.is_in(["open", "paid"])' in source
    declarations = [line for line in source.splitlines() if " = dy." in line]
    assert all("primary_key" not in line and "check=" not in line for line in declarations)
    assert load(source, "Orders").primary_key() == []


def test_a_partitioned_asset_is_read_at_the_named_partition_else_the_latest(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    resources = {"io_manager": stores(tmp_path)["parquet"]}
    for day in ("2024-01-01", "2024-01-03", "2024-01-02"):
        dg.materialize([visits], partition_key=day, resources=resources, instance=instance)
    defs = dg.Definitions(assets=[visits], resources=resources)

    named = dd.infer_schema(
        asset="visits", definitions=defs, partition="2024-01-03", instance=instance
    )
    latest = dd.infer_schema(asset="visits", definitions=defs, instance=instance)

    assert "asset visits (partition 2024-01-03) through" in named
    assert list(load(named, "Visits").columns()) == ["day", "visits", "note"]
    # 2024-01-02 was materialized last, so it is the one read, and the header says so.
    assert "asset visits (partition 2024-01-02, the latest materialized) through" in latest
    schema = load(latest, "Visits")
    assert list(schema.columns()) == ["day", "visits"]
    checked = dg.materialize(
        [visits, dd.schema_checks(schema, asset=visits)],
        partition_key="2024-01-02",
        resources=resources,
        instance=instance,
    )
    assert all(e.passed for e in checked.get_asset_check_evaluations())


def test_a_key_the_definitions_do_not_declare_names_the_closest(tmp_path: Path) -> None:
    resources = {"io_manager": stores(tmp_path)["parquet"]}
    defs = dg.Definitions(assets=[orders, visits], resources=resources)
    with pytest.raises(UnknownAssetError, match=r"asset order: .*Closest declared keys: orders"):
        dd.infer_schema(asset="order", definitions=defs)


def test_an_asset_never_materialized_says_so_and_the_fix(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    resources = {"io_manager": stores(tmp_path)["pickle"]}
    defs = dg.Definitions(assets=[orders, visits], resources=resources)
    never = r"asset {}: it has never been materialized.*dagster asset materialize --select {}"
    with pytest.raises(TableNotFoundError, match=never.format("orders", "orders")):
        dd.infer_schema(asset="orders", definitions=defs, instance=instance)
    with pytest.raises(TableNotFoundError, match=never.format("visits", "visits") + ".*partition="):
        dd.infer_schema(asset="visits", definitions=defs, instance=instance)


def test_an_asset_dagster_does_not_materialize_points_to_its_table(tmp_path: Path) -> None:
    defs = dg.Definitions(assets=[dg.AssetSpec("orders")])
    with pytest.raises(TableNotFoundError, match=r"asset orders: it is declared as an AssetSpec"):
        dd.infer_schema(asset="orders", definitions=defs)


def test_the_cli_reads_an_asset_of_a_definitions_module(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (tmp_path / "project.py").write_text(
        "import dagster as dg\n"
        "import polars as pl\n"
        "import dagster_dataframely as dd\n\n"
        "@dg.asset\n"
        "def orders() -> pl.DataFrame:\n"
        "    return pl.DataFrame({'order_id': [1, 2], 'status': ['paid', 'open']})\n\n"
        f"defs = dg.Definitions(assets=[orders], resources={{'io_manager': "
        f"dd.ParquetIOManager(base_dir={str(store)!r})}})\n"
    )
    home = tmp_path / "home"
    home.mkdir()
    infer = ("infer", "--defs", "project:defs", "--asset", "orders", "--name", "Orders")

    never = dagster_dataframely(*infer, cwd=tmp_path, env={"DAGSTER_HOME": str(home)})
    typo = dagster_dataframely(*infer[:-3], "order", cwd=tmp_path)
    not_defs = dagster_dataframely("infer", "--defs", "project:orders", *infer[3:], cwd=tmp_path)
    both = dagster_dataframely("infer", "orders", *infer[1:], cwd=tmp_path)

    assert never.returncode == 1, never.stderr
    assert "asset orders: it has never been materialized" in never.stderr
    assert typo.returncode == 1 and "Closest declared keys: orders" in typo.stderr
    assert not_defs.returncode == 1 and "not a dg.Definitions" in not_defs.stderr
    assert both.returncode == 2 and "give one of them" in both.stderr
    spec = importlib.util.spec_from_file_location("project", tmp_path / "project.py")
    assert spec is not None and spec.loader is not None
    project = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(project)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        resources = {"io_manager": dd.ParquetIOManager(base_dir=str(store))}
        assert dg.materialize([project.orders], resources=resources, instance=instance).success

    written = dagster_dataframely(*infer, cwd=tmp_path, env={"DAGSTER_HOME": str(home)})

    assert written.returncode == 0, written.stderr
    schema = load(written.stdout, "Orders")
    assert {n: c.dtype for n, c in schema.columns().items()} == {
        "order_id": pl.Int64(),
        "status": pl.String(),
    }
