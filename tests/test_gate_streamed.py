"""A gated asset returning a `pl.LazyFrame` scan, in real runs on parquet files: the plan is
never collected (it reaches `dd.ParquetIOManager`'s `sink_parquet` as a plan over the scan),
the counts equal Dataframely's `Schema.filter`, the table and the quarantine hold exactly the
rows they should, `filter=False` writes all or nothing, a write failing midway leaves the
previous files whole, an IO manager that takes only DataFrames still gets the right rows,
and partitions are written one file each."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from defective import DEFECTIVE_COUNTS, ERROR_COUNTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from support import failed, materialization, step_error

import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.wiring import quarantine_frame, rules

CHECK_OF = {rule.name: rule.check_name for rule in rules(OrdersSchema)}
SEVERITY = {rule.name: rule.severity for rule in rules(OrdersSchema)}


# --------------------------------------- helpers --------------------------------------- #


class RecordingParquetIOManager(dd.ParquetIOManager):
    """`dd.ParquetIOManager` noting what each output handed it: its type and its plan."""

    def handle_output(
        self, context: dg.OutputContext, obj: pl.DataFrame | pl.LazyFrame | None
    ) -> None:
        plan = obj.explain() if isinstance(obj, pl.LazyFrame) else None
        HANDED[context.asset_key.to_user_string()] = (type(obj), plan)
        super().handle_output(context, obj)


HANDED: dict[str, tuple[type, str | None]] = {}


class FailingParquetIOManager(dd.ParquetIOManager):
    """`dd.ParquetIOManager` whose sink of `failing_key` raises while it streams the rows
    into the temporary file beside the target."""

    failing_key: str

    def handle_output(
        self, context: dg.OutputContext, obj: pl.DataFrame | pl.LazyFrame | None
    ) -> None:
        if context.asset_key.to_user_string() == self.failing_key and obj is not None:
            obj = obj.lazy().with_columns(pl.col("line").map_batches(_fail_late, pl.Int64))
        super().handle_output(context, obj)


def _fail_late(line: pl.Series) -> pl.Series:
    raise OSError("disk unplugged mid-write")


def source_file(tmp_path: Path, frame: pl.DataFrame, name: str = "source") -> Path:
    path = tmp_path / f"{name}.parquet"
    frame.write_parquet(path)
    return path


def scanning(path: Path, **settings: Any) -> dg.AssetsDefinition:
    @dd.asset(OrdersSchema, **settings)
    def orders() -> pl.LazyFrame:
        return pl.scan_parquet(path)

    return orders


def run(asset: dg.AssetsDefinition, io_manager: Any, **kwargs: Any) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [asset], resources={"io_manager": io_manager}, raise_on_error=False, **kwargs
    )


def expected_split(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """What `Schema.filter` implies: the table (valid rows, then rows failing only "warn"
    rules) and the quarantine (rows failing an "error" rule, one status column per rule)."""
    valid, failure = OrdersSchema.filter(frame, cast=False)
    flagged = quarantine_frame(OrdersSchema, failure)
    errors = [CHECK_OF[n] for n, severity in SEVERITY.items() if severity == "error"]
    broke_error = pl.any_horizontal(pl.col(errors) == "invalid")
    warned = flagged.filter(~broke_error).select(OrdersSchema.column_names())
    return pl.concat([valid, warned]), flagged.filter(broke_error)


def stored(root: Path, *parts: str) -> pl.DataFrame:
    return pl.read_parquet(root.joinpath(*parts))


# ----------------------------------- never collected ----------------------------------- #


def test_the_plan_reaches_the_parquet_sink_as_a_scan_never_as_collected_rows(tmp_path):
    HANDED.clear()
    path = source_file(tmp_path, defective_orders())
    io = RecordingParquetIOManager(base_dir=str(tmp_path / "store"))

    result = run(scanning(path, quarantine=True), io)

    assert result.success
    for key in ("orders", "orders_quarantine"):
        kind, plan = HANDED[key]
        assert kind is pl.LazyFrame, key
        assert plan is not None and "SCAN" in plan and "DF [" not in plan, plan


class Notes(dy.Schema):
    """Text checked by a regex and by a length, as in issue 40's order table."""

    id = dy.Int64(nullable=False)
    email = dy.String(nullable=True, regex=r"^[a-z0-9.]+@[a-z]+\.[a-z]+$")
    note = dy.String(nullable=True, max_length=12)


class ProbingParquetIOManager(dd.ParquetIOManager):
    """`dd.ParquetIOManager` that notes, per output, the order in which polars' streaming
    engine reads the morsels of the plan it sinks (`READ`, noted by the asset's own plan) and
    hands them to the sink (`SUNK`)."""

    def handle_output(
        self, context: dg.OutputContext, obj: pl.DataFrame | pl.LazyFrame | None
    ) -> None:
        assert isinstance(obj, pl.LazyFrame)
        EVENTS.clear()
        super().handle_output(context, obj.map_batches(_sunk, streamable=True))
        PROBED[context.asset_key.to_user_string()] = list(EVENTS)


EVENTS: list[str] = []
PROBED: dict[str, list[str]] = {}


def _read(ids: pl.Series) -> pl.Series:
    EVENTS.append("READ")
    return ids


def _sunk(morsel: pl.DataFrame) -> pl.DataFrame:
    EVENTS.append("SUNK")
    return morsel


def test_the_table_and_the_quarantine_stream_through_their_sinks_never_held_whole(tmp_path):
    """Each sink gets the rows of its first morsels before the source has read its last
    ones: no node of either plan holds the rows until it has them all. A node that did (a
    collect, or `replace_strict` in the quarantine's plan, issue 40) held memory in
    proportion to the rows read, 1.8 GB at 50M rows of a table with text."""
    i = pl.int_range(300_000, dtype=pl.Int64)
    path = tmp_path / "notes.parquet"
    pl.select(id=i).select(
        "id",
        email=pl.when(i % 100 == 29)
        .then(pl.lit("Bad.User@Shop.com"))
        .otherwise(pl.format("user.{}@shop.com", i % 1_000)),
        note=pl.when(i % 100 == 37).then(pl.lit("a note of 25 characters..")).otherwise(None),
    ).write_parquet(path, row_group_size=20_000)  # a morsel each

    @dd.asset(Notes, quarantine=True)
    def notes() -> pl.LazyFrame:
        read = pl.col("id").map_batches(_read, is_elementwise=True)
        return pl.scan_parquet(path).with_columns(read)

    PROBED.clear()
    result = run(notes, ProbingParquetIOManager(base_dir=str(tmp_path / "store")))

    assert result.success
    assert materialization(result, "notes")["dy_quarantined_rows"] == 6_000
    for key in ("notes", "notes_quarantine"):
        events = PROBED[key]
        assert events.count("READ") > 4, (key, events)  # many morsels were read
        last_read = len(events) - 1 - events[::-1].index("READ")
        assert events.index("SUNK") < last_read, (key, events)


@pytest.mark.parametrize(
    "orders",
    [["ORD-20001", "ORD-20002"], ["ORD-20001", "ORD-20009", "ORD-20010"]],
    ids=["valid", "warn-only"],
)
def test_an_empty_quarantine_runs_no_part_of_the_plan_again(tmp_path, orders):
    """No row broke an "error" rule: the quarantine is written empty from a plan of its own,
    so its sink costs no pass over the asset's rows (a filter keeping none of them would)."""
    HANDED.clear()
    frame = defective_orders().filter(pl.col("order_id").is_in(orders))
    store = tmp_path / "store"
    io = RecordingParquetIOManager(base_dir=str(store))

    result = run(scanning(source_file(tmp_path, frame), quarantine=True), io)

    assert result.success
    kind, plan = HANDED["orders_quarantine"]
    assert kind is pl.LazyFrame and plan is not None and "SCAN" not in plan, plan
    assert_split_as_dataframely(result, store, frame)
    assert stored(store, "orders_quarantine.parquet").is_empty()


# ----------------------------- counts and rows, as Dataframely ----------------------------- #


def assert_split_as_dataframely(
    result: dg.ExecuteInProcessResult, store: Path, frame: pl.DataFrame
) -> None:
    """The run wrote `Schema.filter`'s split of `frame`, and its materialization says so:
    rows written, rows quarantined, and which rules the quarantined rows broke together."""
    assert result.success
    table, quarantine = expected_split(frame)
    assert_frame_equal(stored(store, "orders.parquet"), table)
    assert_frame_equal(stored(store, "orders_quarantine.parquet"), quarantine)
    metadata = materialization(result, "orders")
    assert metadata["dagster/row_count"] == table.height
    assert metadata["dy_quarantined_rows"] == quarantine.height
    assert materialization(result, "orders_quarantine")["dagster/row_count"] == quarantine.height
    if not quarantine.height:
        assert "invalid_by_rules" not in metadata
        return
    broken = {
        tuple(sorted(row.data["rules"].split(", "))): row.data["rows"]
        for row in metadata["invalid_by_rules"].records
    }
    groups = quarantine.group_by(CHECK_OF.values()).len().iter_rows(named=True)
    assert broken == {
        tuple(sorted(n for n, c in CHECK_OF.items() if group[c] == "invalid")): group["len"]
        for group in groups
    }


def test_counts_table_and_quarantine_equal_dataframely_filter(tmp_path):
    frame = defective_orders()
    store = tmp_path / "store"

    result = run(
        scanning(source_file(tmp_path, frame), quarantine=True),
        dd.ParquetIOManager(base_dir=str(store)),
    )

    counts = {name: count for name, (count, _) in failed(result).items()}
    assert counts == {CHECK_OF[name]: n for name, n in DEFECTIVE_COUNTS.items()}
    assert_split_as_dataframely(result, store, frame)


@pytest.mark.parametrize(
    "orders",
    [
        ["ORD-20001", "ORD-20004"],  # one "error" rule fails alone
        ["ORD-20001", "ORD-20009", "ORD-20010"],  # "warn" rules only
        ["ORD-20004", "ORD-20009"],  # an "error" and a "warn" rule, on different rows
        ["ORD-20001", "ORD-20011"],  # one row breaking three rules
    ],
)
def test_the_split_and_its_counts_match_dataframely_whichever_rules_fail(tmp_path, orders):
    frame = defective_orders().filter(pl.col("order_id").is_in(orders))
    store = tmp_path / "store"

    result = run(
        scanning(source_file(tmp_path, frame), quarantine=True),
        dd.ParquetIOManager(base_dir=str(store)),
    )

    assert_split_as_dataframely(result, store, frame)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(picks=st.lists(st.integers(0, 12), max_size=30))
def test_any_mix_of_rows_is_split_as_dataframely_filter_splits_it(tmp_path_factory, picks):
    tmp_path = tmp_path_factory.mktemp("mix")
    frame = defective_orders()[picks] if picks else defective_orders().clear()
    path = source_file(tmp_path, frame)
    store = tmp_path / "store"

    result = run(scanning(path, quarantine=True), dd.ParquetIOManager(base_dir=str(store)))

    table, quarantine = expected_split(frame)
    assert_frame_equal(stored(store, "orders_quarantine.parquet"), quarantine)
    if table.height or not quarantine.height:  # an empty source writes an empty table
        assert result.success
        assert_frame_equal(stored(store, "orders.parquet"), table)
    else:
        assert not (store / "orders.parquet").exists()


@dd.warn("one_order_per_customer")
class Visits(dy.Schema):
    amount = dy.Int64(min=2)
    customer = dy.String()

    @dy.rule()
    def one_order_per_customer(cls) -> pl.Expr:
        return pl.len().over("customer") < 2


def test_a_group_rule_flags_the_quarantined_rows_from_every_row_of_their_group(tmp_path):
    source = tmp_path / "visits.parquet"
    pl.DataFrame({"amount": [1, 5, 2], "customer": ["x", "x", "y"]}).write_parquet(source)

    @dd.asset(Visits, quarantine=True)
    def visits() -> pl.LazyFrame:
        return pl.scan_parquet(source)

    store = tmp_path / "store"
    result = run(visits, dd.ParquetIOManager(base_dir=str(store)))

    assert result.success
    # x's first row breaks `amount|min` and is quarantined; its group still has two rows
    held = stored(store, "visits_quarantine.parquet")
    assert held.select("amount", "dy_rule__one_order_per_customer").rows() == [(1, "invalid")]
    table = stored(store, "visits.parquet")  # the valid row, then the warn-only one
    assert table.rows() == [(2, "y"), (5, "x")]


# ------------------------------------ all or nothing ------------------------------------ #


def test_without_quarantine_error_rows_write_nothing_and_keep_the_previous_table(tmp_path):
    store = tmp_path / "store"
    io = dd.ParquetIOManager(base_dir=str(store))
    good = source_file(tmp_path, storefront_orders(), "good")
    assert run(scanning(good), io).success
    before = stored(store, "orders.parquet")

    result = run(scanning(source_file(tmp_path, defective_orders())), io)

    assert not result.success
    assert step_error(result)[0] == "ValidationAbortError"
    assert {n: c for n, (c, _) in failed(result).items() if n in ERROR_COUNTS} == {}
    assert_frame_equal(stored(store, "orders.parquet"), before)
    assert sorted(os.listdir(store)) == ["orders.parquet"]


def test_without_quarantine_warn_only_rows_are_all_written(tmp_path):
    frame = defective_orders().filter(pl.col("order_id").is_in(["ORD-20001", "ORD-20009"]))
    store = tmp_path / "store"

    result = run(scanning(source_file(tmp_path, frame)), dd.ParquetIOManager(base_dir=str(store)))

    assert result.success
    written = stored(store, "orders.parquet")
    assert written.height == frame.height
    assert_frame_equal(written, expected_split(frame)[0])


# ----------------------------------- a failing write ----------------------------------- #


@pytest.mark.parametrize("failing", ["orders", "orders_quarantine"])
def test_a_write_failing_midway_leaves_the_previous_files_whole(tmp_path, failing):
    store = tmp_path / "store"
    first = defective_orders().filter(pl.col("order_id") != "ORD-20004")
    assert run(
        scanning(source_file(tmp_path, first, "first"), quarantine=True),
        dd.ParquetIOManager(base_dir=str(store)),
    ).success
    table_before = stored(store, "orders.parquet")
    quarantine_before = stored(store, "orders_quarantine.parquet")

    result = run(
        scanning(source_file(tmp_path, defective_orders()), quarantine=True),
        FailingParquetIOManager(base_dir=str(store), failing_key=failing),
    )

    assert not result.success
    assert "disk unplugged mid-write" in step_error(result)[1]
    assert_frame_equal(stored(store, "orders.parquet"), table_before)
    if failing == "orders_quarantine":
        assert_frame_equal(stored(store, "orders_quarantine.parquet"), quarantine_before)
    else:  # the quarantine is written first: this run's rows are held there, none lost
        assert_frame_equal(
            stored(store, "orders_quarantine.parquet"), expected_split(defective_orders())[1]
        )
    assert sorted(os.listdir(store)) == ["orders.parquet", "orders_quarantine.parquet"]


KILLED_RUN = """
import sys, time
import dagster as dg, polars as pl
import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema

class Stalling(dd.ParquetIOManager):
    def handle_output(self, context, obj: pl.DataFrame | pl.LazyFrame | None) -> None:
        if context.asset_key.path[-1] == "orders":  # the table's sink stalls mid-write
            stall = lambda line: (time.sleep(120), line)[1]
            obj = obj.with_columns(pl.col("line").map_batches(stall, pl.Int64))
        super().handle_output(context, obj)

@dd.asset(OrdersSchema, quarantine=True)
def orders() -> pl.LazyFrame:
    return pl.scan_parquet(sys.argv[1])

dg.materialize([orders], resources={"io_manager": Stalling(base_dir=sys.argv[2])})
"""


def test_a_process_killed_while_writing_the_table_leaves_the_previous_table(tmp_path):
    store = tmp_path / "store"
    first = storefront_orders()
    assert run(
        scanning(source_file(tmp_path, first, "first"), quarantine=True),
        dd.ParquetIOManager(base_dir=str(store)),
    ).success
    source = source_file(tmp_path, defective_orders())

    child = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(source), str(store)])
    try:
        deadline = time.monotonic() + 120
        while not list(store.glob(".orders.parquet.*.tmp")):  # the table's sink has begun
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        child.kill()
        child.wait()

    assert_frame_equal(stored(store, "orders.parquet"), first)
    # the quarantine was written first: this run's held-back rows are there
    assert_frame_equal(
        stored(store, "orders_quarantine.parquet"), expected_split(defective_orders())[1]
    )


# --------------------------- an IO manager that takes DataFrames --------------------------- #


def test_an_io_manager_taking_only_dataframes_gets_the_rows_it_stores(tmp_path):
    frame = defective_orders()
    io = dg.FilesystemIOManager(base_dir=str(tmp_path / "pickles"))

    result = run(scanning(source_file(tmp_path, frame), quarantine=True), io)

    assert result.success
    table, quarantine = expected_split(frame)
    pickles = tmp_path / "pickles"
    with (pickles / "orders").open("rb") as stream:
        written = pickle.load(stream)
    with (pickles / "orders_quarantine").open("rb") as stream:
        held = pickle.load(stream)
    assert isinstance(written, pl.DataFrame) and isinstance(held, pl.DataFrame)
    assert_frame_equal(written, table)
    assert_frame_equal(held, quarantine)


# -------------------------------------- partitions -------------------------------------- #


def test_each_partition_is_validated_and_written_to_its_own_files(tmp_path):
    days = dg.StaticPartitionsDefinition(["good", "bad"])
    sources = {
        "good": source_file(tmp_path, storefront_orders(), "good"),
        "bad": source_file(tmp_path, defective_orders(), "bad"),
    }

    @dd.asset(OrdersSchema, quarantine=True, partitions_def=days)
    def orders(context) -> pl.LazyFrame:  # type: ignore[no-untyped-def]
        return pl.scan_parquet(sources[context.partition_key])

    store = tmp_path / "store"
    io = dd.ParquetIOManager(base_dir=str(store))
    for day in ("good", "bad"):
        assert run(orders, io, partition_key=day).success

    assert_frame_equal(stored(store, "orders", "good.parquet"), storefront_orders())
    assert stored(store, "orders_quarantine", "good.parquet").height == 0
    table, quarantine = expected_split(defective_orders())
    assert_frame_equal(stored(store, "orders", "bad.parquet"), table)
    assert_frame_equal(stored(store, "orders_quarantine", "bad.parquet"), quarantine)


# ------------------------- the CLI, each step in its own process ------------------------- #

CLI_DEFS = """
import os
import dagster as dg
import dataframely as dy
import polars as pl
import dagster_dataframely as dd
from dagster_dataframely.data import OrdersSchema

@dd.asset(OrdersSchema, quarantine=True)
def orders() -> pl.LazyFrame:
    return pl.scan_parquet(os.environ["SHOP_SOURCE"])

@dg.asset(deps=["orders"])
def order_count(orders: pl.LazyFrame) -> pl.DataFrame:
    return orders.select(pl.len()).collect()

defs = dg.Definitions(
    assets=[orders, order_count],
    resources={"io_manager": dd.ParquetIOManager(base_dir=os.environ["SHOP_WAREHOUSE"])},
)
"""


def test_the_cli_runs_the_streamed_gate_with_the_multiprocess_executor(tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "shop_defs.py").write_text(CLI_DEFS)
    store = tmp_path / "store"
    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path / "home"),
        "SHOP_SOURCE": str(source_file(tmp_path, defective_orders())),
        "SHOP_WAREHOUSE": str(store),
    }
    command = [sys.executable, "-m", "dagster", "asset", "materialize", "-f", "shop_defs.py"]

    done = subprocess.run(
        [*command, "--select", "orders*"], cwd=tmp_path, env=env, capture_output=True, text=True
    )

    assert done.returncode == 0, done.stderr[-3000:]
    assert "multiprocess" in done.stderr
    table, quarantine = expected_split(defective_orders())
    assert_frame_equal(stored(store, "orders.parquet"), table)
    assert_frame_equal(stored(store, "orders_quarantine.parquet"), quarantine)
    assert stored(store, "order_count.parquet").item() == table.height
