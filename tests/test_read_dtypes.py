"""`read_dtypes="cast"` on the sidecar, in real runs over real DuckDB files: the dtypes a
DuckDB or pandas round trip changes are cast back on request, each cast is reported, a value
the cast would change fails the column-schema check instead of becoming null, and the default
never casts but names the option."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster.components.testing import DefsFolderSandbox
from dagster_duckdb import DuckDBResource
from dagster_duckdb_pandas import DuckDBPandasIOManager
from dagster_duckdb_polars import DuckDBPolarsIOManager
from defective import DEFECTIVE_COUNTS
from hypothesis import given, settings
from hypothesis import strategies as st
from support import evaluations, failed, load_error, scaffold_checks, step_error

import dagster_dataframely as dd
from dagster_dataframely._checks.results import schema_results
from dagster_dataframely._engine.read_dtypes import castable, same_zone
from dagster_dataframely._engine.settings import CheckSettings
from dagster_dataframely.data import OrdersSchema, defective_orders, storefront_orders
from dagster_dataframely.errors import ColumnSchemaError, InvalidSettingError

ERROR = dg.AssetCheckSeverity.ERROR
COLUMNS = "dy_schema__columns"


def _orders(frame: Any) -> dg.AssetsDefinition:
    @dg.asset(name="orders")
    def orders() -> Any:
        return frame

    return orders


def _run(*definitions: Any, resources: dict[str, Any]) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        list(definitions),
        resources=resources,
        instance=dg.DagsterInstance.ephemeral(),
        raise_on_error=False,
    )


def _casts(result: dg.ExecuteInProcessResult) -> dict[str, tuple[str, str, int]]:
    """column -> (read dtype, declared dtype, values not cast), as `dy_schema__columns` says."""
    casts = evaluations(result)[COLUMNS].metadata["dy_casts"].value
    return {
        row.data["column"]: (row.data["read"], row.data["cast to"], row.data["failed"])
        for row in casts.records  # type: ignore[attr-defined]
    }


def _duckdb_table(path: Path, sql: str) -> dict[str, Any]:
    """A DuckDB file holding the table `sql` creates, and the resource that reads it."""
    with duckdb.connect(str(path)) as connection:
        connection.execute(sql)
    return {"duckdb": DuckDBResource(database=str(path))}


# ------------------------- the drifts a DuckDB round trip makes ------------------------- #


def test_by_default_a_duckdb_round_trip_fails_and_the_message_names_read_dtypes_cast(
    tmp_path: Path,
) -> None:
    io_manager = DuckDBPolarsIOManager(database=str(tmp_path / "warehouse.duckdb"))
    result = _run(
        _orders(storefront_orders()),
        dd.schema_checks(OrdersSchema, asset="orders"),
        resources={"io_manager": io_manager},
    )

    assert not result.success
    assert not evaluations(result)[COLUMNS].passed
    error, message = step_error(result)
    assert error == ColumnSchemaError.__name__
    assert "status: String, expected Enum" in message
    assert "ordered_at: Datetime(time_unit='us', time_zone='Etc/UTC')" in message
    assert 'read_dtypes="cast"' in message and "can cast every one" in message
    # A sidecar cannot change the asset: the remedy of a gated asset is not offered.
    assert "OrdersSchema.cast" not in message


def test_cast_reads_the_duckdb_table_back_and_reports_each_cast(tmp_path: Path) -> None:
    io_manager = DuckDBPolarsIOManager(database=str(tmp_path / "warehouse.duckdb"))
    result = _run(
        _orders(storefront_orders()),
        dd.schema_checks(OrdersSchema, asset="orders", read_dtypes="cast"),
        resources={"io_manager": io_manager},
    )

    assert result.success
    columns = evaluations(result)[COLUMNS]
    assert columns.passed
    assert _casts(result) == {
        "status": ("String", str(OrdersSchema.columns()["status"].dtype), 0),
        "ordered_at": (
            "Datetime(time_unit='us', time_zone='Etc/UTC')",
            "Datetime(time_unit='us', time_zone='UTC')",
            0,
        ),
    }
    assert columns.metadata["dy_cast_columns"].value == 2
    assert columns.description is not None and "status (String -> Enum" in columns.description
    assert failed(result) == {}


def test_rule_counts_after_the_cast_are_dataframelys(tmp_path: Path) -> None:
    io_manager = DuckDBPolarsIOManager(database=str(tmp_path / "warehouse.duckdb"))
    defs = dd.with_schemas(
        dg.Definitions(assets=[_orders(defective_orders())], resources={"io_manager": io_manager}),
        {"orders": OrdersSchema},
        read_dtypes="cast",
    )
    result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )

    assert evaluations(result)[COLUMNS].passed
    assert set(_casts(result)) == {"status", "ordered_at"}
    assert {name: count for name, (count, _) in failed(result).items()} == {
        f"dy_rule__{rule.replace('|', '__')}": count for rule, count in DEFECTIVE_COUNTS.items()
    }


# -------------------- the drifts of a warehouse table, read from DuckDB -------------------- #


class Shipments(dy.Schema):
    shipment_id = dy.Int16(primary_key=True)
    status = dy.Enum(["packed", "shipped"])
    shipped_on = dy.Date(nullable=True)
    weight = dy.Decimal(8, 2, min=decimal.Decimal(0))
    sent_at = dy.Datetime(time_zone="UTC")


#: A warehouse table holding `Shipments` in the types it has: every column but `sent_at`
#: drifts on read (the source pins DuckDB's zone to `UTC`, so a `TIMESTAMPTZ` reads as declared).
SHIPMENTS = """
    CREATE TABLE shipments (
        shipment_id BIGINT, status VARCHAR, shipped_on TIMESTAMP, weight DOUBLE,
        sent_at TIMESTAMPTZ
    );
    INSERT INTO shipments VALUES
        (1, 'packed', NULL, 1.5, '2024-05-01 08:00:00+00'),
        (2, 'shipped', '2024-05-02', 0.25, '2024-05-01 09:00:00+00'),
        (3, 'shipped', '2024-05-03', -1.0, '2024-05-01 10:00:00+00');
"""
#: Rows whose values the casts would change: a status outside the Enum, a time of day on a
#: date, an id out of Int16's range, a weight finer than the Decimal's scale.
UNCASTABLE = """
    INSERT INTO shipments VALUES
        (4, 'lost', NULL, 1.0, '2024-05-01 11:00:00+00'),
        (5, 'shipped', '2024-05-04 10:30:00', 1.0, '2024-05-01 12:00:00+00'),
        (70000, 'packed', NULL, 1.0, '2024-05-01 13:00:00+00'),
        (6, 'packed', NULL, 1.234, '2024-05-01 14:00:00+00');
"""


def _run_shipment_checks(resources: dict[str, Any], **settings: Any) -> dg.ExecuteInProcessResult:
    """The checks of the external asset `shipments`, read from its DuckDB table."""
    checks = dd.schema_checks(
        Shipments, asset="shipments", source=dd.sources.DuckDBTableSource(), **settings
    )
    return _run_checks(checks, resources)


def _run_checks(
    checks: dg.AssetChecksDefinition, resources: dict[str, Any]
) -> dg.ExecuteInProcessResult:
    """A run of `checks` on the external asset `shipments` (which nothing materializes)."""
    defs = dg.Definitions(
        assets=[dg.AssetSpec("shipments")],
        asset_checks=[checks],
        resources=resources,
        jobs=[dg.define_asset_job("checks", dg.AssetSelection.checks_for_assets("shipments"))],
    )
    return defs.resolve_job_def("checks").execute_in_process(
        instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )


def test_every_listed_drift_of_a_warehouse_table_is_cast_and_the_rules_count_as_dataframely(
    tmp_path: Path,
) -> None:
    resources = _duckdb_table(tmp_path / "warehouse.duckdb", SHIPMENTS)
    result = _run_shipment_checks(resources, read_dtypes="cast")

    assert _casts(result) == {
        "shipment_id": ("Int64", "Int16", 0),
        "status": ("String", "Enum(categories=['packed', 'shipped'])", 0),
        "shipped_on": ("Datetime(time_unit='us', time_zone=None)", "Date", 0),
        "weight": ("Float64", "Decimal(precision=8, scale=2)", 0),
    }
    assert evaluations(result)[COLUMNS].passed
    with duckdb.connect(str(tmp_path / "warehouse.duckdb")) as connection:
        stored = Shipments.cast(connection.sql("SELECT * FROM shipments").pl())
    counts = Shipments.filter(stored, cast=False).failure.counts()
    assert counts == {"weight|min": 1}
    assert failed(result) == {"dy_rule__weight__min": (1, ERROR)}


def test_a_value_the_cast_would_change_fails_the_column_schema_check_and_is_shown(
    tmp_path: Path,
) -> None:
    resources = _duckdb_table(tmp_path / "warehouse.duckdb", SHIPMENTS + UNCASTABLE)
    result = _run_shipment_checks(resources, read_dtypes="cast")

    assert not result.success
    columns = evaluations(result)[COLUMNS]
    assert not columns.passed and columns.severity == ERROR
    assert {column: failures for column, (_, _, failures) in _casts(result).items()} == {
        "shipment_id": 1,
        "status": 1,
        "shipped_on": 1,
        "weight": 1,
    }
    assert columns.metadata["dy_mismatched_columns"].value == 4
    sample = columns.metadata["dy_failed_sample"].value
    shown = {(row.data["column"], row.data["value read"]) for row in sample.records}  # type: ignore[attr-defined]
    assert shown == {
        ("shipment_id", "70000"),
        ("status", "lost"),
        ("shipped_on", "2024-05-04 10:30:00.000000"),
        ("weight", "1.234"),
    }
    error, message = step_error(result)
    assert error == ColumnSchemaError.__name__
    assert "status: 1 value(s) read as String are not Enum" in message and "'lost'" in message
    assert "No value is cast to null" in message
    # No rule is reported on a table the casts could not read faithfully.
    assert list(evaluations(result)) == [COLUMNS]


def test_a_drift_not_in_the_list_still_fails_and_the_message_says_what_the_cast_covers(
    tmp_path: Path,
) -> None:
    table = SHIPMENTS.replace("status VARCHAR", "status INTEGER").replace("'packed'", "1")
    resources = _duckdb_table(tmp_path / "warehouse.duckdb", table.replace("'shipped'", "2"))

    strict = _run_shipment_checks(resources)
    cast = _run_shipment_checks(resources, read_dtypes="cast")

    _, message = step_error(strict)
    assert evaluations(strict)[COLUMNS].metadata["dy_mismatched_columns"].value == 4
    assert "it can cast shipment_id, shipped_on, weight." in message
    assert 'read_dtypes="cast"' in message
    _, message = step_error(cast)
    assert evaluations(cast)[COLUMNS].metadata["dy_mismatched_columns"].value == 1
    assert "  - status: Int32, expected Enum" in message and "shipment_id" not in message
    assert 'read_dtypes="cast" casts none of these drifts' in message


def test_the_drifts_of_a_pandas_round_trip_are_cast(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "shipment_id": [1, 2],
            "status": ["packed", "shipped"],
            "shipped_on": [None, dt.date(2024, 5, 2)],
            "weight": [decimal.Decimal("1.50"), decimal.Decimal("0.25")],
            "sent_at": [dt.datetime(2024, 5, 1, 8, tzinfo=dt.timezone.utc)] * 2,
        }
    )
    stored = Shipments.cast(frame).to_pandas()

    @dg.asset(name="shipments")
    def shipments() -> Any:
        return stored

    io_manager = DuckDBPandasIOManager(database=str(tmp_path / "warehouse.duckdb"))
    result = _run(
        shipments,
        dd.schema_checks(Shipments, asset="shipments", read_dtypes="cast"),
        resources={"io_manager": io_manager},
    )

    assert result.success
    assert {column: read for column, (read, _, _) in _casts(result).items()} == {
        "status": "Categorical",
        "shipped_on": "Datetime(time_unit='ms', time_zone=None)",
        "weight": "Float64",
        "sent_at": "Datetime(time_unit='us', time_zone='Etc/UTC')",
    }


# -------------------------- where the option is set, and checked -------------------------- #


def test_the_component_casts_with_read_dtypes_in_its_yaml(
    sandbox: DefsFolderSandbox, tmp_path: Path
) -> None:
    resources = _duckdb_table(tmp_path / "warehouse.duckdb", SHIPMENTS)
    entry = {
        "asset": "shipments",
        "schema": "test_read_dtypes:Shipments",
        "source": {"kind": "duckdb_table"},
    }
    attributes = {
        "read_dtypes": "cast",
        "assets_outside_defs": True,  # the table's spec is built in this test
        "checks": [entry],
    }
    path = scaffold_checks(sandbox, attributes)
    with sandbox.load_component_and_build_defs(defs_path=path) as (_, defs):
        (checks,) = defs.asset_checks or ()
    result = _run_checks(checks, resources)

    assert evaluations(result)[COLUMNS].passed
    assert len(_casts(result)) == 4


def test_a_bad_value_fails_at_definition_time_naming_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(
        InvalidSettingError, match=r"argument read_dtypes='casts'.*'strict', 'cast'"
    ):
        dd.schema_checks(OrdersSchema, asset="orders", read_dtypes="casts")  # type: ignore[arg-type]
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_READ_DTYPES", "yes")
    with pytest.raises(InvalidSettingError, match="environment variable DAGSTER_DATAFRAMELY_READ"):
        dd.with_schemas(dg.Definitions(assets=[_orders(None)]), {"orders": OrdersSchema})


def test_a_bad_value_in_the_components_yaml_fails_when_it_loads(
    sandbox: DefsFolderSandbox,
) -> None:
    entry = {"asset": "shipments", "schema": "test_read_dtypes:Shipments", "read_dtypes": "casts"}
    error = load_error(sandbox, scaffold_checks(sandbox, {"checks": [entry]}))

    assert isinstance(error, InvalidSettingError)
    assert "defs.yaml: checks[0] (asset shipments" in str(error)
    assert "read_dtypes='casts': expected one of 'strict', 'cast'" in str(error)


def test_the_environment_variable_turns_the_casts_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_READ_DTYPES", "cast")
    checks = dd.schema_checks(Shipments, asset="shipments", source=dd.sources.DuckDBTableSource())
    monkeypatch.delenv("DAGSTER_DATAFRAMELY_READ_DTYPES")  # resolved once, at definition time
    resources = _duckdb_table(tmp_path / "warehouse.duckdb", SHIPMENTS)
    result = _run_checks(checks, resources)

    assert evaluations(result)[COLUMNS].passed


def test_a_gated_asset_still_names_schema_cast_in_the_asset() -> None:
    @dd.asset(OrdersSchema)
    def orders() -> pl.DataFrame:
        return storefront_orders().with_columns(pl.col("status").cast(pl.String))

    result = _run(orders, resources={})

    _, message = step_error(result)
    assert "call `OrdersSchema.cast(frame)` in the asset" in message
    assert "read_dtypes" not in message


# ------------------------------------ the cast list ------------------------------------ #


@pytest.mark.parametrize(
    ("read", "declared", "cast"),
    [
        (pl.String(), pl.Enum(["a"]), True),
        (pl.Categorical(), pl.Enum(["a"]), True),
        (pl.Enum(["b", "a"]), pl.Enum(["a", "b"]), True),
        (pl.String(), pl.Categorical(), True),
        (pl.Datetime("us", "Etc/UTC"), pl.Datetime("us", "UTC"), True),
        (pl.Datetime("ns", "Zulu"), pl.Datetime("us", "UTC"), True),
        (pl.Datetime("us", "US/Eastern"), pl.Datetime("us", "America/New_York"), True),
        (pl.Datetime("ns"), pl.Datetime("us"), True),
        (pl.Datetime("us"), pl.Date(), True),
        (pl.Int64(), pl.Int32(), True),
        (pl.Float64(), pl.Int64(), True),
        (pl.Float64(), pl.Decimal(10, 2), True),
        (pl.Decimal(12, 4), pl.Decimal(10, 2), True),
        # Another zone is another meaning of the wall clock, not an alias.
        (pl.Datetime("us", "Europe/Berlin"), pl.Datetime("us", "UTC"), False),
        (pl.Datetime("us", "GMT"), pl.Datetime("us", "UTC"), False),
        (pl.Datetime("us"), pl.Datetime("us", "UTC"), False),
        (pl.Datetime("us", "UTC"), pl.Date(), False),
        (pl.String(), pl.Int64(), False),
        (pl.String(), pl.Date(), False),
        (pl.Int64(), pl.String(), False),
        (pl.Decimal(10, 2), pl.Float64(), False),
        (pl.Int64(), pl.Float64(), False),
        (pl.List(pl.String()), pl.List(pl.Enum(["a"])), False),
    ],
)
def test_the_listed_drifts_and_no_others_are_castable(
    read: pl.DataType, declared: pl.DataType, cast: bool
) -> None:
    assert castable(read, declared) is cast


def test_time_zone_aliases_are_the_zones_that_share_their_rules() -> None:
    assert same_zone("Etc/UTC", "UTC") and same_zone("Etc/Universal", "UTC")
    assert same_zone(None, None) and not same_zone(None, "UTC")
    assert not same_zone("Europe/Paris", "Europe/Berlin")
    assert not same_zone("../../etc/passwd", "UTC") and not same_zone("No/Such_Zone", "UTC")


class Counted(dy.Schema):
    value = dy.Int16(nullable=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40)), max_size=40))
def test_an_integer_is_cast_exactly_when_it_fits(values: list[int | None]) -> None:
    frame = pl.LazyFrame({"value": values}, schema={"value": pl.Int64})
    outcome = schema_results(
        Counted,
        frame,
        dg.AssetKey("counted"),
        CheckSettings(),
        read_dtypes="cast",
    )
    out_of_range = sum(v is not None and not -(2**15) <= v < 2**15 for v in values)

    if out_of_range:
        with pytest.raises(ColumnSchemaError, match=f"value: {out_of_range} value"):
            list(outcome)
    else:
        results = list(outcome)
        assert results[0].passed and results[0].metadata["dy_cast_columns"].value == 1


# ------------------------------ each cast at its boundary ------------------------------ #


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


#: column -> (dtype read, declared column, values cast, values just past what the cast holds).
BOUNDARIES: dict[str, tuple[pl.DataType, dy.Column, list[Any], list[Any]]] = {
    "float_decimal": (
        pl.Float64(),
        dy.Decimal(8, 2, nullable=True),
        [999999.99, -999999.99, 0.25],
        [1234567.89, 99999999.0, 999999.995, -999999.999, 1.234, float("nan")],
    ),
    "float32_decimal": (pl.Float32(), dy.Decimal(5, 2, nullable=True), [999.5], [1000.0]),
    "decimal_decimal": (
        pl.Decimal(10, 3),
        dy.Decimal(8, 2, nullable=True),
        [decimal.Decimal("999999.990")],
        [decimal.Decimal("1000000.000"), decimal.Decimal("1.005")],
    ),
    "int_int": (
        pl.Int64(),
        dy.Int16(nullable=True),
        [32767, -32768],
        [32768, -32769],
    ),
    "float_int": (
        pl.Float64(),
        dy.Int32(nullable=True),
        [2147483647.0, -2147483648.0],
        [2147483648.0, 1.5, float("inf")],
    ),
    "string_enum": (pl.String(), dy.Enum(["a", "b"], nullable=True), ["b"], ["c", "B"]),
    "categorical_enum": (pl.Categorical(), dy.Enum(["a", "b"], nullable=True), ["a"], ["c"]),
    "enum_enum": (pl.Enum(["a", "b", "c"]), dy.Enum(["b", "a"], nullable=True), ["b"], ["c"]),
    "string_categorical": (pl.String(), dy.Categorical(nullable=True), ["any"], []),
    "datetime_date": (
        pl.Datetime("us"),
        dy.Date(nullable=True),
        [_at("2024-05-01 00:00:00")],
        [_at("2024-05-01 00:00:00.000001")],
    ),
    "finer_unit": (  # nanoseconds since the epoch: a Python datetime stops at microseconds
        pl.Datetime("ns"),
        dy.Datetime(time_unit="us", nullable=True),
        [1_714_550_400_000_001_000],
        [1_714_550_400_000_001_001],
    ),
    "coarser_unit": (
        pl.Datetime("us"),
        dy.Datetime(time_unit="ns", nullable=True),
        [_at("2262-04-11 23:47:16.854775")],
        [_at("2262-04-11 23:47:16.854776")],
    ),
    "zone_alias": (
        pl.Datetime("us", "Etc/UTC"),
        dy.Datetime(time_zone="UTC", nullable=True),
        [_at("2024-05-01 08:00:00+00:00")],
        [],
    ),
}

Boundaries = dy.Schema.__class__(
    "Boundaries",
    (dy.Schema,),
    {"row": dy.Int64(primary_key=True), **{name: c for name, (_, c, _, _) in BOUNDARIES.items()}},
)


def _boundary_frame(*, outside: bool) -> pl.DataFrame:
    """A row per value of each column of `BOUNDARIES`, in the dtypes read; `outside` adds the
    values just past each cast's limit. A column with fewer values is padded with nulls,
    which every cast holds."""
    columns = {
        name: values + (past if outside else [])
        for name, (_, _, values, past) in BOUNDARIES.items()
    }
    height = max(map(len, columns.values()))
    return pl.DataFrame(
        [pl.Series("row", range(height), pl.Int64)]
        + [
            pl.Series(name, values + [None] * (height - len(values)), BOUNDARIES[name][0])
            for name, values in columns.items()
        ]
    )


def _run_boundaries(frame: pl.DataFrame, tmp_path: Path) -> dg.ExecuteInProcessResult:
    @dg.asset(name="boundaries")
    def boundaries() -> pl.DataFrame:
        return frame

    return _run(
        boundaries,
        dd.schema_checks(Boundaries, asset="boundaries", read_dtypes="cast"),
        resources={"io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path))},
    )


def test_every_cast_holds_the_values_at_its_limit(tmp_path: Path) -> None:
    result = _run_boundaries(_boundary_frame(outside=False), tmp_path)

    assert result.success
    assert {column: failures for column, (_, _, failures) in _casts(result).items()} == {
        name: 0 for name in BOUNDARIES
    }


def test_a_value_just_past_a_casts_limit_fails_the_column_schema_check_counted_and_shown(
    tmp_path: Path,
) -> None:
    result = _run_boundaries(_boundary_frame(outside=True), tmp_path)

    assert not result.success
    columns = evaluations(result)[COLUMNS]
    assert not columns.passed and columns.severity == ERROR
    assert {column: failures for column, (_, _, failures) in _casts(result).items()} == {
        name: len(past) for name, (_, _, _, past) in BOUNDARIES.items()
    }
    sample = columns.metadata["dy_failed_sample"].value
    shown = {row.data["column"] for row in sample.records}  # type: ignore[attr-defined]
    assert shown == {name for name, (_, _, _, past) in BOUNDARIES.items() if past}
    error, message = step_error(result)
    assert error == ColumnSchemaError.__name__
    assert "float_decimal: 6 value(s) read as Float64 are not Decimal(8, 2)" in message


def test_a_duckdb_double_past_the_decimals_precision_fails_the_column_schema_check(
    tmp_path: Path,
) -> None:
    over = SHIPMENTS + "INSERT INTO shipments VALUES (7, 'packed', NULL, 99999999.0, NULL);"
    resources = _duckdb_table(tmp_path / "warehouse.duckdb", over)
    result = _run_shipment_checks(resources, read_dtypes="cast")

    assert _casts(result)["weight"][2] == 1
    error, message = step_error(result)
    assert error == ColumnSchemaError.__name__ and "weight: 1 value(s)" in message
    assert "99999999.0" in message


def test_the_messages_of_failed_casts_of_huge_values_stay_a_few_kb(tmp_path: Path) -> None:
    wide = dy.Schema.__class__(
        "Wide",
        (dy.Schema,),
        {f"{'c' * 500}{i}": dy.Enum(["a", "b"]) for i in range(60)},
    )
    huge = pl.DataFrame({name: ["x" * 100_000, "y" * 100_000] for name in wide.column_names()})

    @dg.asset(name="wide")
    def wide_asset() -> pl.DataFrame:
        return huge

    result = _run(
        wide_asset,
        dd.schema_checks(wide, asset="wide", read_dtypes="cast"),
        resources={"io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path))},
    )

    columns = evaluations(result)[COLUMNS]
    assert not columns.passed
    assert len(columns.description or "") <= 4000
    for name, value in columns.metadata.items():
        assert len(str(value.value)) <= 8000, name
    _, message = step_error(result)
    assert 1000 < len(message) <= 4000
    assert "and 50 more column(s)" in message and message.rstrip().endswith(
        "the category to the Enum)."
    )
