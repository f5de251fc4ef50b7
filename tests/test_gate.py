"""The outcomes of a write-gated asset in real runs, with Dagster's filesystem IO manager and
with a DuckDB database: what is written where, which checks fail at which severity, what the
run reports, and that no invalid row is ever dropped silently."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from defective import ERROR_COUNTS, VALID, WARN_ONLY
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from support import evaluations, materialization, step_error

import dagster_dataframely as dd
from dagster_dataframely.data import (
    OrdersSchema,
    defective_orders,
    mistyped_orders,
    storefront_orders,
)
from dagster_dataframely.errors import NoValidRowsError, ValidationAbortError
from dagster_dataframely.wiring import quarantine_frame, rules

ERROR, WARN = dg.AssetCheckSeverity.ERROR, dg.AssetCheckSeverity.WARN
SEVERITY = {rule.name: rule.severity for rule in rules(OrdersSchema)}
CHECK_OF = {rule.name: rule.check_name for rule in rules(OrdersSchema)}
KEY = ["order_id", "line", "line_item_id"]


# --------------------------------------- helpers --------------------------------------- #


def gated(frame: Callable[[], Any], **settings: Any) -> dg.AssetsDefinition:
    """A `dd.asset` named `orders` returning `frame()`."""

    @dd.asset(OrdersSchema, **settings)
    def orders() -> pl.DataFrame:
        return frame()

    return orders


def rows_of(frame: pl.DataFrame | None) -> list[tuple[str, int]]:
    assert frame is not None
    return list(zip(frame["order_id"], frame["line"], strict=True))


def failed_checks(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckSeverity]:
    return {name: e.severity for name, e in evaluations(result).items() if not e.passed}


def error_rows_of_defective() -> pl.DataFrame:
    """The quarantine Dataframely's own `Schema.filter` implies for `defective_orders()`:
    the rows failing an `"error"` rule, as `quarantine_frame` lays them out."""
    _, failure = OrdersSchema.filter(defective_orders(), cast=False)
    expected = quarantine_frame(OrdersSchema, failure)
    error_checks = [CHECK_OF[name] for name, severity in SEVERITY.items() if severity == "error"]
    return expected.filter(pl.any_horizontal(pl.col(error_checks) == "invalid"))


# --------------------------------------- outcomes --------------------------------------- #


def test_every_row_valid_writes_the_table_in_schema_order_without_extra_columns(storage):
    frame = storefront_orders()
    shuffled = frame.select(reversed(frame.columns)).with_columns(extra=pl.lit(1))

    result = storage.materialize([gated(lambda: shuffled)])

    assert result.success
    written = storage.read("orders")
    assert written is not None
    assert written.columns == OrdersSchema.column_names()
    assert rows_of(written) == rows_of(frame)
    assert failed_checks(result) == {}
    assert len(evaluations(result)) == 1 + len(SEVERITY)
    assert materialization(result)["dagster/row_count"] == 12
    assert storage.read("orders_quarantine") is None


def test_warn_only_rows_are_written_after_the_valid_rows(storage):
    wanted = [WARN_ONLY[0], VALID[0], WARN_ONLY[1], VALID[1], WARN_ONLY[2], VALID[2]]
    rows = defective_orders()
    frame = pl.concat(
        [rows.filter(pl.col("order_id") == o, pl.col("line") == line) for o, line in wanted]
    )

    result = storage.materialize([gated(lambda: frame)])

    assert result.success
    assert rows_of(storage.read("orders")) == VALID + WARN_ONLY
    assert failed_checks(result) == {
        "dy_rule__amount__max": WARN,
        "dy_rule__note__max_length": WARN,
        "dy_rule__shipped_after_ordered": WARN,
    }
    assert materialization(result)["dagster/row_count"] == 6


def test_error_rows_abort_the_run_listing_each_error_rule_and_write_nothing(storage):
    result = storage.materialize([gated(defective_orders)])

    assert not result.success
    assert storage.read("orders") is None
    assert storage.read("orders_quarantine") is None
    assert result.get_asset_materialization_events() == []
    name, message = step_error(result)
    assert name == "ValidationAbortError"
    for rule, count in ERROR_COUNTS.items():
        assert f"{rule}: {count} row(s)" in message
    assert "amount|max" not in message  # a warn rule never aborts a run


def test_a_failing_check_has_its_own_rules_severity_also_when_another_rule_aborts(storage):
    result = storage.materialize([gated(defective_orders)])

    expected = {CHECK_OF[rule]: ERROR for rule in ERROR_COUNTS}
    expected |= {CHECK_OF[rule]: WARN for rule, sev in SEVERITY.items() if sev == "warn"}
    assert failed_checks(result) == expected
    evaluated = evaluations(result)
    for rule, count in ERROR_COUNTS.items():
        assert evaluated[CHECK_OF[rule]].metadata["dy_failed_count"].value == count
    assert evaluations(result)["dy_schema__columns"].passed


def test_with_a_quarantine_error_rows_go_there_and_the_other_rows_to_the_table(storage):
    result = storage.materialize([gated(defective_orders, quarantine=True)])

    assert result.success
    assert rows_of(storage.read("orders")) == VALID + WARN_ONLY
    quarantined = storage.read("orders_quarantine")
    assert quarantined is not None
    expected = error_rows_of_defective()
    assert quarantined.columns == expected.columns
    assert_frame_equal(
        quarantined.sort(KEY).select(pl.exclude(OrdersSchema.column_names()), *KEY),
        expected.sort(KEY).select(pl.exclude(OrdersSchema.column_names()), *KEY),
    )
    metadata = materialization(result, "orders")
    assert metadata["dagster/row_count"] == 6
    assert metadata["dy_quarantined_rows"] == 7
    address = metadata["dy_quarantine"]
    assert "orders_quarantine" in address
    # the error rows are in the quarantine and the table is clean: every failing check warns
    assert set(failed_checks(result).values()) == {WARN}


def fates(result: dg.ExecuteInProcessResult) -> dict[str, tuple[str, str | None]]:
    """check name -> (what happened to its failing rows, its `dy_quarantine` or None), for
    the failing rule checks of a run."""
    return {
        name: (
            e.metadata["dy_failed_rows"].value,
            getattr(e.metadata.get("dy_quarantine"), "value", None),
        )
        for name, e in evaluations(result).items()
        if not e.passed and name != "dy_schema__columns"
    }


def test_quarantined_error_rows_and_written_warn_rows_are_told_apart(filesystem):
    result = filesystem.materialize([gated(defective_orders, quarantine=True)])

    address = materialization(result, "orders")["dy_quarantine"]
    held_back = (f"quarantined: held back in {address}", address)
    expected = {CHECK_OF[rule]: held_back for rule in ERROR_COUNTS}
    expected |= {
        CHECK_OF[rule]: ("written to the table", None)
        for rule, sev in SEVERITY.items()
        if sev == "warn"
    }
    assert fates(result) == expected


def test_a_check_of_error_and_warn_rules_tells_both_fates(filesystem):
    result = filesystem.materialize(
        [gated(defective_orders, quarantine=True, check_granularity="column")]
    )

    address = materialization(result, "orders")["dy_quarantine"]
    # amount|min ("error") and amount|max ("warn") both fail on some rows
    assert (SEVERITY["amount|min"], SEVERITY["amount|max"]) == ("error", "warn")
    assert fates(result)["dy_col__amount"] == (
        f'rows of its "error" rules: quarantined: held back in {address}; of its "warn" '
        "rules: written to the table",
        address,
    )


def test_an_aborted_run_says_no_row_was_written(filesystem):
    result = filesystem.materialize([gated(defective_orders)])

    told = {words for words, address in fates(result).values() if address is None}
    assert told == {'not written: rows failed "error" rules, so the run wrote nothing and failed'}
    assert len(fates(result)) == len(ERROR_COUNTS) + list(SEVERITY.values()).count("warn")


def test_invalid_by_rules_tabulates_rules_broken_together_biggest_group_first(filesystem):
    result = filesystem.materialize([gated(defective_orders, quarantine=True)])

    table = materialization(result, "orders")["invalid_by_rules"]
    groups = [(record.data["rules"], record.data["rows"]) for record in table.records]
    assert groups == [
        ("primary_key, line_item_id|unique", 2),
        ("customer_email|check__is_lowercase", 1),
        ("customer_email|nullability", 1),
        ("order_id|regex", 1),
        ("paid_orders_have_amount", 1),
        ("paid_orders_have_amount, shipped_after_ordered, amount|min", 1),
    ]


def test_every_row_an_error_row_writes_the_quarantine_only_and_fails(storage):
    frame = defective_orders().filter(pl.col("order_id").is_in(["ORD-2005", "ORD-20011"]))

    result = storage.materialize([gated(lambda: frame, quarantine=True)])

    assert not result.success
    assert storage.read("orders") is None
    quarantined = storage.read("orders_quarantine")
    assert quarantined is not None and set(quarantined["order_id"]) == {"ORD-2005", "ORD-20011"}
    name, message = step_error(result)
    assert name == "NoValidRowsError"
    assert "orders_quarantine" in message  # the quarantine's address
    assert failed_checks(result)["dy_rule__order_id__regex"] == ERROR


def test_a_column_schema_mismatch_fails_one_check_and_writes_nothing(storage):
    result = storage.materialize([gated(mistyped_orders, quarantine=True)])

    assert not result.success
    assert storage.read("orders") is None
    assert storage.read("orders_quarantine") is None
    assert list(evaluations(result)) == ["dy_schema__columns"]
    assert failed_checks(result) == {"dy_schema__columns": ERROR}
    name, message = step_error(result)
    assert name == "ColumnSchemaError"
    assert "amount" in message and "line" in message and "OrdersSchema.cast" in message


def test_a_failing_quarantine_writer_fails_the_run_before_the_table_is_written(filesystem):
    def broken_writer(frame: pl.DataFrame) -> str:
        raise OSError(f"quarantine store unreachable ({frame.height} rows)")

    @dg.asset(
        check_specs=dd.wiring.check_specs(OrdersSchema, asset="orders", quarantine=True),
        output_required=False,
    )
    def orders() -> dd.wiring.AssetYield:
        yield from dd.wiring.validation_results(
            OrdersSchema, defective_orders(), valid_key="orders", quarantine_writer=broken_writer
        )

    result = filesystem.materialize([orders])

    assert not result.success
    assert filesystem.read("orders") is None
    name, message = step_error(result)
    assert name == "OSError" and "quarantine store unreachable (7 rows)" in message
    # every rule was evaluated and reaches Dagster; with no table written, error rules fail
    # at ERROR
    expected = {CHECK_OF[rule]: ERROR for rule in ERROR_COUNTS}
    expected |= {CHECK_OF[rule]: WARN for rule, sev in SEVERITY.items() if sev == "warn"}
    assert failed_checks(result) == expected
    assert set(evaluations(result)) == {"dy_schema__columns", *CHECK_OF.values()}


class QuarantineRefused(dg.ConfigurableIOManager):
    """Stores like Dagster's filesystem IO manager, and refuses to write any quarantine."""

    base_dir: str

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if context.asset_key.path[-1].endswith("_quarantine"):
            raise PermissionError("no write access to the quarantine schema")
        dg.FilesystemIOManager(base_dir=self.base_dir).create_io_manager(
            dg.build_init_resource_context()
        ).handle_output(context, obj)

    def load_input(self, context: dg.InputContext) -> Any:
        raise NotImplementedError


@pytest.mark.parametrize("selection", [None, ["orders"]], ids=["both", "the table alone"])
def test_a_failing_io_manager_write_of_the_quarantine_reports_every_rule_then_fails(
    filesystem, selection
):
    result = dg.materialize(
        [gated(defective_orders, quarantine=True)],
        selection=selection,
        resources={"io_manager": QuarantineRefused(base_dir=str(filesystem.root / "storage"))},
        raise_on_error=False,
    )

    assert not result.success
    assert filesystem.read("orders") is None
    name, message = step_error(result)
    assert name == "PermissionError" and "quarantine schema" in message
    assert result.get_asset_materialization_events() == []
    # every rule was evaluated and reaches Dagster before the run fails; with no table
    # written, error rules fail at ERROR
    assert set(evaluations(result)) == {"dy_schema__columns", *CHECK_OF.values()}
    expected = {CHECK_OF[rule]: ERROR for rule in ERROR_COUNTS}
    expected |= {CHECK_OF[rule]: WARN for rule, sev in SEVERITY.items() if sev == "warn"}
    assert failed_checks(result) == expected
    unwritten = "not written: writing the quarantine failed, so the table was not written either"
    assert set(fates(result).values()) == {(unwritten, None)}


# ------------------------------ validation_results directly ------------------------------ #


def test_check_results_are_yielded_before_the_abort():
    seen: list[Any] = []
    with pytest.raises(ValidationAbortError) as raised:
        for event in dd.wiring.validation_results(
            OrdersSchema, defective_orders(), valid_key="orders"
        ):
            seen.append(event)

    assert raised.value.counts == ERROR_COUNTS
    assert raised.value.quarantine is None
    assert {e.check_name for e in seen} == {"dy_schema__columns", *CHECK_OF.values()}


def test_no_valid_rows_error_carries_the_counts_and_the_quarantine_address():
    written: list[pl.DataFrame] = []

    def writer(frame: pl.DataFrame) -> str:
        written.append(frame)
        return "warehouse.sales.orders_quarantine"

    frame = defective_orders().filter(pl.col("order_id") == "ORD-20011")
    with pytest.raises(NoValidRowsError) as raised:
        list(
            dd.wiring.validation_results(
                OrdersSchema, frame.lazy(), valid_key="orders", quarantine_writer=writer
            )
        )

    assert raised.value.quarantine == "warehouse.sales.orders_quarantine"
    assert raised.value.counts == {"paid_orders_have_amount": 1, "amount|min": 1}
    assert [f.height for f in written] == [1]


def test_the_materialization_describes_the_rows_written_with_bounded_metadata():
    events = dd.wiring.validation_results(
        OrdersSchema, storefront_orders(), valid_key="orders", row_sample=3
    )

    (result,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    assert result.metadata is not None
    sample = result.metadata["dy_row_sample"]
    assert len(sample.records) == 3
    stats = {r.data["column"]: r.data for r in result.metadata["dy_statistics"].records}
    assert stats["amount"]["nulls"] == 2
    assert stats["amount"]["min"] == "4.5" and stats["amount"]["max"] == "1299.0"
    assert stats["note"]["max_length"] == len("deliver to reception")
    assert stats["ordered_at"]["min"].startswith("2024-05-01 09:15:00")


def test_metadata_stays_small_for_a_wide_schema_and_long_values():
    wide = type("Wide", (dy.Schema,), {f"c{i:03}": dy.String(max_length=5) for i in range(300)})
    frame = pl.DataFrame({f"c{i:03}": ["x" * 500] * 50 + ["ok"] * 50 for i in range(300)})
    written: list[pl.DataFrame] = []

    def writer(rows: pl.DataFrame) -> str:
        written.append(rows)
        return "wide_quarantine"

    events = list(
        dd.wiring.validation_results(
            wide, frame, valid_key="wide", quarantine_writer=writer, check_granularity="schema"
        )
    )

    (materialized,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    assert materialized.metadata is not None
    assert materialized.metadata["dagster/row_count"] == 50
    assert written[0].width == 300 + len(rules(wide)) and written[0].height == 50
    for name in ("dy_row_sample", "dy_statistics", "invalid_by_rules"):
        assert len(repr(materialized.metadata[name])) < 8_000, name
    for event in events:
        if isinstance(event, dg.AssetCheckResult):
            assert len(repr(event.metadata)) < 8_000


# ----------------------------- every row accounted for (property) ----------------------------- #


class Readings(dy.Schema):
    sensor = dy.Int64(primary_key=True)
    value = dy.Int64(min=0, max=100)
    note = dy.String(nullable=True, max_length=3)


WarnedReadings = dd.warn("note")(type("WarnedReadings", (Readings,), {}))


@st.composite
def readings(draw: Any) -> pl.DataFrame:
    size = draw(st.integers(0, 30))
    return pl.DataFrame(
        {
            "sensor": draw(st.lists(st.integers(0, 25), min_size=size, max_size=size)),
            "value": draw(st.lists(st.integers(-5, 105), min_size=size, max_size=size)),
            "note": draw(
                st.lists(
                    st.one_of(st.none(), st.text("ab", max_size=5)), min_size=size, max_size=size
                )
            ),
        },
        schema={"sensor": pl.Int64, "value": pl.Int64, "note": pl.String},
    )


def _outcome(frame: pl.DataFrame) -> Iterator[Any]:
    return dd.wiring.validation_results(
        WarnedReadings, frame, valid_key="readings", quarantine_writer=_capture
    )


_captured: list[pl.DataFrame] = []


def _capture(frame: pl.DataFrame) -> str:
    _captured.append(frame)
    return "captured"


@settings(max_examples=60, deadline=None)
@given(readings())
def test_every_row_is_written_or_quarantined_exactly_as_dataframely_decides(frame):
    _captured.clear()
    valid, failure = WarnedReadings.filter(frame, cast=False)
    error_rules = ["primary_key", "value|min", "value|max"]
    error_rows = failure.details().filter(pl.any_horizontal(pl.col(error_rules) == "invalid"))
    error_rows = error_rows.height
    expected_written = frame.height - error_rows

    events: list[Any] = []
    try:
        events.extend(_outcome(frame))
    except NoValidRowsError as error:
        assert expected_written == 0 and error_rows > 0
        assert error.counts == {r: n for r, n in failure.counts().items() if r in error_rules}
    else:
        (materialized,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
        assert materialized.value.height == expected_written
        assert WarnedReadings.filter(materialized.value, cast=False)[1].counts().keys() <= {
            "note|max_length"
        }
        head = materialized.value.head(valid.height)
        assert_frame_equal(head, valid)  # valid rows first, in the frame's order
    assert sum(f.height for f in _captured) == error_rows
