"""Characterization of the Dagster internals `_checks/step_internals.py` reads.

If Dagster changes one of them, the test names the decision of this package that rests on it.
"""

from typing import Any

import dagster as dg
import polars as pl
import pytest

from dagster_dataframely._checks import step_internals


def test_direct_invocation_has_no_step_execution_context():
    """Decision: a run is told apart from a direct invocation by this error, and
    `delegating_writer` raises it under direct invocation (as the hand-wiring page says)."""
    context = dg.build_asset_context()

    with pytest.raises(step_internals.DagsterInvalidPropertyError):
        context.get_step_execution_context()
    assert not step_internals.in_run(context)


class Recording(dg.IOManager):
    """Records what each `handle_output` call saw, and logs a `path` like file IO managers."""

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        SEEN.append(
            {
                "key": context.asset_key,
                "spec_key": context.asset_spec.key,
                "partition": context.asset_partition_key if context.has_asset_partitions else None,
                "definition_metadata": dict(context.definition_metadata),
                "value": obj,
            }
        )
        context.add_output_metadata({"path": f"/store/{'/'.join(context.asset_key.path)}"})

    def load_input(self, context: dg.InputContext) -> Any:
        raise NotImplementedError


SEEN: list[dict[str, Any]] = []


def test_the_steps_output_context_can_be_handed_to_its_io_manager_under_another_key():
    """Decision: a hand-wired asset's quarantine (`delegating_writer`) is written through the
    asset's own IO manager with the step's own output context (same definition metadata, same
    partition), only the key replaced, and the address comes from the metadata that IO
    manager logs. (`dd.asset` declares the quarantine and yields it as an output instead.)"""
    SEEN.clear()
    logged: list[dict[str, Any]] = []

    @dg.asset(
        key_prefix="sales",
        metadata={"partition_expr": "day", "schema": "analytics"},
        partitions_def=dg.StaticPartitionsDefinition(["2024-05-01", "2024-05-02"]),
    )
    def orders(context: dg.AssetExecutionContext) -> str:
        other = dg.AssetKey(["sales", "orders_quarantine"])
        logged.append(step_internals.write_as(context, other, "quarantined rows"))
        return "table rows"

    result = dg.materialize(
        [orders],
        resources={"io_manager": dg.IOManagerDefinition.hardcoded_io_manager(Recording())},
        partition_key="2024-05-02",
    )

    assert result.success
    quarantine, table = SEEN
    assert (
        quarantine["key"] == quarantine["spec_key"] == dg.AssetKey(["sales", "orders_quarantine"])
    )
    assert table["key"] == dg.AssetKey(["sales", "orders"])
    assert quarantine["partition"] == table["partition"] == "2024-05-02"
    assert quarantine["definition_metadata"] == table["definition_metadata"]
    assert quarantine["value"] == "quarantined rows"
    (metadata,) = logged
    assert metadata["path"] == dg.MetadataValue.text("/store/sales/orders_quarantine")


def test_materialize_sets_no_repository_so_the_jobs_asset_graph_stands_in():
    """Decision: `validate_quarantine_key` looks in the repository's asset graph when a
    deployed code location set one, else in the job's, which `materialize` fills with
    every asset passed to it."""
    graphs: list[Any] = []

    @dg.asset
    def orders(context: dg.AssetExecutionContext) -> int:
        graphs.append(step_internals.asset_graph(context))
        return 1

    @dg.asset
    def orders_quarantine() -> int:
        return 0

    assert dg.materialize([orders, orders_quarantine]).success
    (graph,) = graphs
    assert graph.has(dg.AssetKey("orders_quarantine"))
    assert graph.get(dg.AssetKey("orders_quarantine")).is_materializable
    assert step_internals.asset_graph(dg.build_asset_context()) is None


def test_a_subset_jobs_asset_graph_keeps_the_whole_graph_as_its_source():
    """Decision: `validate_quarantine_key` looks beyond the assets a run selected (a
    `materialize(..., selection=)` or an asset job's selection) through the job graph's
    `source_asset_graph`, the asset graph of the whole Definitions."""
    graphs: list[Any] = []

    @dg.asset
    def orders(context: dg.AssetExecutionContext) -> int:
        graphs.append(
            (context.job_def.asset_layer.asset_graph, step_internals.asset_graph(context))
        )
        return 1

    @dg.asset
    def orders_quarantine() -> int:
        return 0

    assert dg.materialize([orders, orders_quarantine], selection=[orders.key]).success
    ((job_graph, graph),) = graphs
    assert not job_graph.has(dg.AssetKey("orders_quarantine"))
    assert job_graph.source_asset_graph.has(dg.AssetKey("orders_quarantine"))
    assert graph.get(dg.AssetKey("orders_quarantine")).is_materializable


def test_database_io_managers_are_db_io_managers_that_load_their_table_as_a_frame(tmp_path):
    """Decision: `delegating_writer` compares a stored quarantine's columns before writing
    only for `DbIOManager`s (they delete the stored rows, then insert), naming the table by
    `_get_table_slice` / `_db_client.get_table_name` and reading it through `load_input` with
    Dagster's `Any` type; file IO managers replace a file whole and are not compared."""
    from dagster_duckdb_polars import DuckDBPolarsIOManager

    seen: list[Any] = []

    @dg.asset
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        key = dg.AssetKey("orders_quarantine")
        seen.append(step_internals.stored_table(context, key))
        step_internals.write_as(
            context, key, pl.DataFrame({"order_id": ["A"], "dy_rule__x": ["valid"]})
        )
        seen.append(step_internals.stored_table(context, key))
        return pl.DataFrame({"order_id": ["A"]})

    database = str(tmp_path / "w.duckdb")
    assert dg.materialize(
        [orders], resources={"io_manager": DuckDBPolarsIOManager(database=database)}
    ).success
    absent, stored = seen
    assert absent is None
    assert stored.relation == "public.orders_quarantine"
    assert stored.address.endswith("public.orders_quarantine")
    assert stored.columns == ("order_id", "dy_rule__x")

    seen.clear()
    assert dg.materialize(
        [orders], resources={"io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path))}
    ).success
    assert seen == [None, None]


def test_a_declared_quarantine_is_read_through_its_own_output_context(tmp_path):
    """Decision: for the quarantine `dd.asset` declares, `stored_table` uses the step's output
    context of that asset itself (its own definition metadata, no key replaced), so the
    layout check reads the table the IO manager will write."""
    from dagster_duckdb_polars import DuckDBPolarsIOManager

    seen: list[Any] = []
    table, quarantine = dg.AssetKey("orders"), dg.AssetKey("orders_quarantine")

    @dg.multi_asset(
        outs={
            "result": dg.AssetOut(key=table, is_required=False),
            "q": dg.AssetOut(key=quarantine, is_required=False, metadata={"schema": "held"}),
        }
    )
    def orders(context: dg.AssetExecutionContext):
        frame = pl.DataFrame({"order_id": ["A"]})
        yield dg.MaterializeResult(asset_key=quarantine, value=frame)
        seen.append(step_internals.stored_table(context, quarantine, table_key=table))
        yield dg.MaterializeResult(asset_key=table, value=frame)

    database = str(tmp_path / "w.duckdb")
    assert dg.materialize(
        [orders], resources={"io_manager": DuckDBPolarsIOManager(database=database)}
    ).success
    (stored,) = seen
    assert stored.relation == "held.orders_quarantine"
    assert stored.columns == ("order_id",)


def test_a_subsets_step_reaches_an_unselected_output_by_its_name(tmp_path):
    """Decision: `dd.asset` writes its quarantine through the quarantine's own output, named,
    also in a run that selected the table alone: the step still has that output's IO manager
    and context (its IO manager key, its key), though the subsetted `context.assets_def`
    names no output of it. So `quarantine_io_manager_key=` holds in every selection."""
    table, quarantine = dg.AssetKey("orders"), dg.AssetKey("orders_quarantine")
    seen: list[Any] = []

    @dg.multi_asset(
        outs={
            "result": dg.AssetOut(key=table, is_required=False),
            "q": dg.AssetOut(key=quarantine, is_required=False, io_manager_key="held"),
        },
        can_subset=True,
    )
    def orders(context: dg.AssetExecutionContext):
        assert context.assets_def.keys_by_output_name == {"result": table}
        seen.append(step_internals.write_as(context, quarantine, "held back", output_name="q"))
        yield dg.MaterializeResult(asset_key=table, value="written")

    resources = {
        "io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path / "lake")),
        "held": dg.FilesystemIOManager(base_dir=str(tmp_path / "held")),
    }
    assert dg.materialize([orders], selection=[table], resources=resources).success
    ((logged),) = seen
    assert str(logged["path"].value).endswith("orders_quarantine")
    assert (tmp_path / "held" / "orders_quarantine").is_file()
    assert not (tmp_path / "lake" / "orders_quarantine").exists()
